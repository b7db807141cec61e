"""Parse a source once and know where each top-level statement's text is.

A 400-function ``verifiers.py`` takes seconds to parse with libcst, and callers ask for
the mutants of one function at a time, so :func:`parse_source` keeps the last few parsed
sources. Each top-level statement's character span lets the engine splice a mutated
function back into the original text instead of rendering the whole module again.

Sources come from third parties: they are parsed through :mod:`~arcjudge.mutation.cstguard`
(``ast`` first, then libcst's native parser on a thread stack sized for the source), and
anything that goes wrong, a tree too deep for the Python code that walks it included
(``RecursionError``), is a :class:`ParseFailure`, never an exception.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from arcjudge.mutation.cstguard import SourceRefused, guarded_parse
from arcjudge.mutation.render import IncrementalRenderer

NESTED_TOO_DEEPLY = "nested too deeply for the mutation engine (Python's recursion limit)"
"""Why a source libcst parsed cannot be mutated: walking its tree hit the recursion limit."""


@dataclass(frozen=True)
class ParseFailure:
    """Why a source could not be parsed.

    Attributes:
        error: Why: Python's or libcst's parser refuses the source, libcst's parser
            crashed on it, or its tree is nested too deeply to work with.
    """

    error: str


@dataclass
class ParsedSource:
    """A parsed module with the span of every top-level statement in its text.

    Attributes:
        module: The libcst module.
        text: The source as text (``module.code``; equal to the input for ``str``).
        spans: ``(start, end)`` character offsets of each top-level statement, or
            ``None`` if the statements could not be located (then whole-module rendering
            is used).
        last_newline: Length of the final newline libcst leaves out of ``text`` when the
            file does not end with one (0 otherwise); it belongs to the last statement.
    """

    module: cst.Module
    text: str
    spans: list[tuple[int, int]] | None
    last_newline: int = 0
    _renderers: dict[int, IncrementalRenderer | None] = field(default_factory=dict, repr=False)

    def function_index(self, name: str) -> int | None:
        """Index of the top-level ``def name`` (the last one if redefined), else ``None``."""
        found = None
        for k, stmt in enumerate(self.module.body):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                found = k
        return found

    def statement_text(self, k: int) -> str:
        """Full text of top-level statement ``k`` (with its final newline)."""
        assert self.spans is not None
        start, end = self.spans[k]
        text = self.text[start:end]
        if k == len(self.spans) - 1 and self.last_newline:
            text += self.module.code_for_node(self.module.body[k])[-self.last_newline :]
        return text

    def renderer(self, k: int) -> IncrementalRenderer | None:
        """Cached incremental renderer of top-level statement ``k`` (``None``: unavailable)."""
        if k not in self._renderers:
            self._renderers[k] = IncrementalRenderer.build(
                self.module.body[k], self.statement_text(k), self.module
            )
        return self._renderers[k]


def _locate_statements(module: cst.Module, text: str) -> tuple[list[tuple[int, int]] | None, int]:
    """Character spans of the top-level statements, checked against ``text``."""
    pos = sum(len(module.code_for_node(line)) for line in module.header)
    spans: list[tuple[int, int]] = []
    last_newline = 0
    for k, stmt in enumerate(module.body):
        piece = module.code_for_node(stmt)
        final = k == len(module.body) - 1
        if final and not module.has_trailing_newline and not module.footer:
            last_newline = 2 if piece.endswith("\r\n") else 1
            piece = piece[:-last_newline]
        if not text.startswith(piece, pos):
            return None, 0
        spans.append((pos, pos + len(piece)))
        pos += len(piece)
    footer = "".join(module.code_for_node(line) for line in module.footer)
    if module.footer and not module.has_trailing_newline:
        footer = footer[:-1] if not footer.endswith("\r\n") else footer[:-2]
    if text[pos:] != footer:
        return None, 0
    return spans, last_newline


@lru_cache(maxsize=4)
def parse_source(source: str | bytes) -> ParsedSource | ParseFailure:
    """Parse ``source`` (cached: the same text is parsed once).

    Args:
        source: Python source; bytes honour a coding declaration.

    Returns:
        The parsed source, or a :class:`ParseFailure` saying why not (never raises for
        bad input, and never runs libcst's parser where it could crash this process).
    """
    try:
        module = guarded_parse(source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = module.code
            spans, last_newline = _locate_statements(module, text)
    except SourceRefused as exc:
        return ParseFailure(str(exc))
    except cst.ParserSyntaxError as exc:
        return ParseFailure(str(exc))
    except RecursionError:  # the tree is deeper than the Python code that renders it
        return ParseFailure(NESTED_TOO_DEEPLY)
    except Exception as exc:  # bad coding line, decode error...: report, never raise
        return ParseFailure(f"{type(exc).__name__}: {exc}")
    return ParsedSource(module, text, spans, last_newline)
