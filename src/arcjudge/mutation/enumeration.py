"""Enumerate the mutants of a verifier source: every site of every operator, once each.

The source is parsed once (and cached). With ``function=...`` only that top-level
function is mutated: operators see a one-function module, the mutated function is
rendered incrementally (only changed statements are re-rendered, see
:mod:`arcjudge.mutation.render`) and spliced back into the original text by position,
so the rest of the file stays byte-identical and a 400-function file is never
re-rendered per mutant. Without ``function`` the whole module is mutated, and anchors of
sites inside a top-level ``def``/``class`` get an ``@name/`` prefix.

Each mutant is checked to differ from the original and from every earlier mutant, and
(by default) to parse; the rest are counted in :attr:`MutantSet.stats`.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence

import libcst as cst

from arcjudge.mutation.cstindex import module_index
from arcjudge.mutation.mutant import Mutant, MutantSet, Splice, mutant_id
from arcjudge.mutation.operators import Operator, Site
from arcjudge.mutation.parsing import NESTED_TOO_DEEPLY, ParsedSource, ParseFailure, parse_source
from arcjudge.mutation.registry import OPERATORS, default_operators, register
from arcjudge.mutation.render import Rendered, render_node

__all__ = ["OPERATORS", "default_operators", "enumerate_mutants", "register"]


def _compiles(text: str, indented: bool) -> bool:
    """Whether ``text`` parses as Python (an indented block when ``indented``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile("if 1:\n" + text if indented else text, "<mutant>", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class _Target:
    """What is being mutated: the module given to operators and how to render results."""

    unit: cst.Module
    original_text: str

    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed

    def qualify(self, site: Site) -> str:
        """The anchor used in the mutant id."""
        return site.anchor

    def render(self, new: cst.Module) -> tuple[Splice, Rendered] | None:
        """The change ``new`` makes to the original text, ``None`` if it makes none."""
        raise NotImplementedError

    def _whole(self, new_text: str) -> tuple[Splice, Rendered] | None:
        original = self.parsed.text
        if new_text == original:
            return None
        return Splice(original, 0, len(original), new_text), Rendered(new_text, [(new_text, False)])

    def _statement(self, k: int, new: cst.BaseStatement) -> Rendered:
        renderer = self.parsed.renderer(k)
        if renderer is not None:
            return renderer.render(new)
        text = render_node(new, self.parsed.module)
        return Rendered(text, [(text, False)])

    def _splice(self, first: int, last: int, texts: list[str]) -> Splice:
        parsed = self.parsed
        assert parsed.spans is not None
        replacement = "".join(texts)
        if last == len(parsed.spans) - 1 and parsed.last_newline:
            replacement = replacement[: -parsed.last_newline]
        return Splice(parsed.text, parsed.spans[first][0], parsed.spans[last][1], replacement)


class _FunctionTarget(_Target):
    """One top-level function, spliced back into the original text by position."""

    def __init__(self, parsed: ParsedSource, k: int) -> None:
        super().__init__(parsed)
        self.k = k
        module = parsed.module
        self.unit = module.with_changes(body=(module.body[k],), header=(), footer=())
        self.original_text = (
            parsed.statement_text(k)
            if parsed.spans is not None
            else module.code_for_node(module.body[k])
        )

    def render(self, new: cst.Module) -> tuple[Splice, Rendered] | None:
        if new.body and len(new.body) == 1 and new.body[0] is self.unit.body[0]:
            return None
        if self.parsed.spans is None or len(new.body) != 1:
            body = list(self.parsed.module.body)
            body[self.k : self.k + 1] = list(new.body)
            return self._whole(self.parsed.module.with_changes(body=tuple(body)).code)
        rendered = self._statement(self.k, new.body[0])
        if rendered.text == self.original_text:
            return None
        return self._splice(self.k, self.k, [rendered.text]), rendered


class _ModuleTarget(_Target):
    """The whole module; only changed top-level statements are re-rendered."""

    def __init__(self, parsed: ParsedSource) -> None:
        super().__init__(parsed)
        self.unit = parsed.module
        self.original_text = parsed.text

    def qualify(self, site: Site) -> str:
        return site.anchor if site.scope is None else f"@{site.scope}/{site.anchor}"

    def render(self, new: cst.Module) -> tuple[Splice, Rendered] | None:
        old = self.parsed.module
        if new is old:
            return None
        same_frame = (
            self.parsed.spans is not None
            and len(new.body) == len(old.body)
            and new.header is old.header
            and new.footer is old.footer
            and new.default_indent == old.default_indent
            and new.default_newline == old.default_newline
            and new.has_trailing_newline == old.has_trailing_newline
        )
        if not same_frame:
            return self._whole(new.code)
        changed = [k for k, stmt in enumerate(new.body) if stmt is not old.body[k]]
        if not changed:
            return None
        first, last = changed[0], changed[-1]
        texts: list[str] = []
        checks: list[tuple[str, bool]] = []
        for k in range(first, last + 1):
            if new.body[k] is old.body[k]:
                texts.append(self.parsed.statement_text(k))
                continue
            rendered = self._statement(k, new.body[k])
            texts.append(rendered.text)
            checks.extend(rendered.checks)
        splice = self._splice(first, last, texts)
        if splice.replacement == self.parsed.text[splice.start : splice.end]:
            return None
        return splice, Rendered(splice.replacement, checks)


def enumerate_mutants(
    source: str | bytes,
    *,
    task_id: str,
    source_name: str,
    operators: Sequence[Operator] | None = None,
    function: str | None = None,
    check_syntax: bool = True,
) -> MutantSet:
    """Every distinct mutant of ``source`` (or of one function in it).

    Args:
        source: Python source text or bytes (bytes honour a coding declaration).
        task_id: Task the source belongs to; first part of every id.
        source_name: Which source of the task (``re-arc``, ``golf``...); second id part.
        operators: Operators to use, in order (default: :func:`default_operators`).
        function: Mutate only this top-level function (``verify_<task_id>``); the rest
            of the file is left byte-identical.
        check_syntax: Drop mutants that no longer parse (counted as ``invalid``).

    Returns:
        The mutants in operator order, then site order. Never raises for bad input: a
        parse error, a tree nested too deeply to walk or a missing function gives an
        empty set with ``error`` set, and an operator that raises on one site is skipped
        (``stats["failed"]``, ``failures``).
    """
    parsed = parse_source(source)
    if isinstance(parsed, ParseFailure):
        return MutantSet(task_id, source_name, function, error=parsed.error)
    result = MutantSet(task_id, source_name, function, original=parsed.text)
    target: _Target
    if function is None:
        target = _ModuleTarget(parsed)
    else:
        k = parsed.function_index(function)
        if k is None:
            result.error = f"no top-level function named {function!r}"
            return result
        target = _FunctionTarget(parsed, k)
    try:  # the walk every operator shares (cached): a tree too deep for it fails here once
        module_index(target.unit)
    except RecursionError:
        result.error = NESTED_TOO_DEEPLY
        return result
    check = check_syntax and _compiles(target.original_text, False)
    seen: set[tuple[int, int, str]] = set()
    ids: set[str] = set()
    stats = result.stats
    for operator in default_operators() if operators is None else operators:
        try:
            sites = operator.sites(target.unit)
        except Exception as exc:  # an operator bug must not stop the other operators
            stats["failed"] += 1
            result.failures.append(f"{operator.name}: sites: {type(exc).__name__}: {exc}")
            continue
        stats["sites"] += len(sites)
        for site in sites:
            try:
                change = target.render(operator.apply(target.unit, site))
            except Exception as exc:
                stats["failed"] += 1
                result.failures.append(f"{operator.name} {site.key}: {type(exc).__name__}: {exc}")
                continue
            if change is None:
                stats["identical"] += 1
                continue
            splice, rendered = change
            key = (splice.start, splice.end, splice.replacement)
            if key in seen:
                stats["duplicate"] += 1
                continue
            if check and not all(_compiles(text, indented) for text, indented in rendered.checks):
                stats["invalid"] += 1
                continue
            seen.add(key)
            anchor = target.qualify(site)
            mid = mutant_id(task_id, source_name, operator.name, anchor, site.variant)
            if mid in ids:
                stats["failed"] += 1
                result.failures.append(f"{operator.name} {site.key}: duplicate id {mid}")
                continue
            ids.add(mid)
            result.append(
                Mutant(
                    mid,
                    task_id,
                    source_name,
                    operator.name,
                    anchor,
                    site.variant,
                    function,
                    splice,
                )
            )
    return result
