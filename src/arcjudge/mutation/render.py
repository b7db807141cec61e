"""Render a mutated statement by re-rendering only the subtrees that changed.

Operators rebuild only the path from the module to the nodes they change (see
:func:`arcjudge.mutation.cstindex.replace_nodes`), so a mutated statement shares every
untouched subtree, by identity, with the original. An :class:`IncrementalRenderer`
renders the original once while recording the text span, indentation and parent of
every node; a mutated version is then the original text with the span of each changed
subtree replaced by that subtree's fresh rendering. Renaming one variable in a
100-line function renders one ``Name``, not 100 lines.

Only nodes whose rendering does not depend on their parent are rendered on their own
(libcst passes some nodes defaults such as "add a comma" or "render as ``elif``");
when such a node changes, its nearest independent ancestor is re-rendered instead.
Fresh text is rendered at the original node's indentation with libcst's
``CodegenState`` (what ``Module.code_for_node`` uses internally).

The renderer also says which statements a syntax check must look at: the smallest
whole statements containing the changes, not the whole function.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import libcst as cst
from libcst._nodes.internal import CodegenState


def render_node(node: cst.CSTNode, module: cst.Module, indent: Sequence[str] = ()) -> str:
    """Source text of ``node`` as it would appear at indentation ``indent``.

    Args:
        node: Any node (usually a statement).
        module: Supplies the default indent and newline.
        indent: The indentation tokens in effect (one per enclosing block).

    Returns:
        The text, including leading lines and the final newline of a statement.
    """
    state = CodegenState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        indent_tokens=list(indent),
    )
    node._codegen(state)
    return "".join(state.tokens)


@cache
def _standalone(kind: type[cst.CSTNode]) -> bool:
    """Whether ``kind`` renders the same wherever it is (its codegen takes no defaults)."""
    params = inspect.signature(kind._codegen_impl).parameters
    return len(params) == 2 and not issubclass(kind, cst.Module)


@cache
def _fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


@dataclass
class _SpanState(CodegenState):
    """A codegen state that records where each node's text is."""

    length: int = 0
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    indents: dict[int, tuple[str, ...]] = field(default_factory=dict)
    parents: dict[int, cst.CSTNode | None] = field(default_factory=dict)
    stack: list[cst.CSTNode] = field(default_factory=list)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.length += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        self.length += sum(map(len, self.indent_tokens))

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        self.spans[key] = (self.length, -1)
        self.indents[key] = tuple(self.indent_tokens)
        self.parents[key] = self.stack[-1] if self.stack else None
        self.stack.append(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.stack.pop()
        key = id(node)
        self.spans[key] = (self.spans[key][0], self.length)


class _Frontier(Exception):
    """Raised when a node has to be rendered afresh as a whole."""


@dataclass
class _Edit:
    """Replace ``[start, end)`` of the original text by ``text``.

    ``node`` is the original node (or the owner of the sequence) being replaced. For a
    changed statement list, ``statements`` holds the freshly rendered statements and
    their indentation, which are all a syntax check needs to look at.
    """

    start: int
    end: int
    text: str
    node: cst.CSTNode
    statements: list[tuple[str, tuple[str, ...]]] | None = None


@dataclass
class Rendered:
    """A rendered statement, and what a syntax check of it needs to compile.

    Attributes:
        text: The statement's full text.
        checks: ``(text, indented)`` of the smallest whole statements that contain the
            changes; ``indented`` ones are block statements (compile them under ``if 1:``).
    """

    text: str
    checks: list[tuple[str, bool]]


class IncrementalRenderer:
    """Renders mutated versions of one original statement, re-rendering only changes."""

    def __init__(self, root: cst.CSTNode, module: cst.Module, text: str, state: _SpanState) -> None:
        self.root = root
        self.module = module
        self.text = text
        self._spans = state.spans
        self._indents = state.indents
        self._parents = state.parents

    @classmethod
    def build(
        cls, root: cst.BaseStatement, text: str, module: cst.Module
    ) -> IncrementalRenderer | None:
        """A renderer for the top-level statement ``root`` whose text is ``text``.

        Args:
            root: A top-level statement.
            text: Its text as it appears in the module (with its final newline).
            module: The module it belongs to.

        Returns:
            The renderer, or ``None`` if recording spans does not reproduce ``text``.
        """
        state = _SpanState(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        root._codegen(state)
        if "".join(state.tokens) != text or state.length != len(text):
            return None
        return cls(root, module, text, state)

    def render(self, new: cst.CSTNode) -> Rendered:
        """Text of ``new``, a mutated version of this renderer's statement.

        Args:
            new: The statement after mutation (sharing unchanged nodes with the original).

        Returns:
            The text and the statements to syntax-check.
        """
        edits: list[_Edit] = []
        try:
            self._diff(self.root, new, edits)
        except _Frontier:
            text = render_node(new, self.module)
            return Rendered(text, [(text, False)])
        if not edits:
            return Rendered(self.text, [])
        edits.sort(key=lambda e: e.start)
        return Rendered(self._apply(edits, 0, len(self.text)), self._checks(edits))

    # -- diffing ---------------------------------------------------------------------

    def _diff(self, old: cst.CSTNode, new: cst.CSTNode, edits: list[_Edit]) -> None:
        if old is new:
            return
        if type(old) is not type(new):
            raise _Frontier
        for name in _fields(type(new)):
            before, after = getattr(old, name), getattr(new, name)
            if before is after:
                continue
            if isinstance(before, cst.CSTNode) and isinstance(after, cst.CSTNode):
                self._child(before, after, edits)
            elif isinstance(before, tuple | list) and isinstance(after, tuple | list):
                if len(before) == len(after):
                    for b, a in zip(before, after, strict=True):
                        if b is a:
                            continue
                        if not (isinstance(b, cst.CSTNode) and isinstance(a, cst.CSTNode)):
                            raise _Frontier
                        self._child(b, a, edits)
                else:
                    edits.append(self._splice(old, before, after))
            elif isinstance(before, cst.CSTNode) or isinstance(after, cst.CSTNode):
                raise _Frontier
            elif before != after:
                raise _Frontier

    def _renderable(self, old: cst.CSTNode, new: cst.CSTNode) -> bool:
        """Whether ``new`` renders in ``old``'s place the same as on its own.

        True for nodes whose codegen takes no parent-supplied defaults, and for any
        statement directly in a block (blocks pass none).
        """
        parent = self._parents[id(old)]
        return _standalone(type(new)) or isinstance(parent, cst.IndentedBlock | cst.Module)

    def _child(self, old: cst.CSTNode, new: cst.CSTNode, edits: list[_Edit]) -> None:
        inner: list[_Edit] = []
        try:
            self._diff(old, new, inner)
        except _Frontier:
            if not self._renderable(old, new):
                raise
            start, end = self._spans[id(old)]
            text = render_node(new, self.module, self._indents[id(old)])
            edits.append(_Edit(start, end, text, old))
            return
        edits.extend(inner)

    def _splice(
        self, owner: cst.CSTNode, before: Sequence[object], after: Sequence[object]
    ) -> _Edit:
        """Edit for a sequence field whose length changed (statements removed, ...)."""
        if not before or not after:
            raise _Frontier
        spans = [self._spans[id(b)] for b in before]
        if any(spans[i][1] != spans[i + 1][0] for i in range(len(spans) - 1)):
            raise _Frontier
        block = isinstance(owner, cst.IndentedBlock | cst.Module)
        indent = self._indents[id(before[0])]
        originals = {id(b) for b in before}
        pieces: list[str] = []
        statements: list[tuple[str, tuple[str, ...]]] = []
        for item in after:
            if not isinstance(item, cst.CSTNode) or not (block or _standalone(type(item))):
                raise _Frontier
            if id(item) in originals:
                start, end = self._spans[id(item)]
                pieces.append(self.text[start:end])
                continue
            text = render_node(item, self.module, indent)
            pieces.append(text)
            statements.append((text, indent))
        return _Edit(
            spans[0][0], spans[-1][1], "".join(pieces), owner, statements if block else None
        )

    # -- output ----------------------------------------------------------------------

    def _apply(self, edits: list[_Edit], start: int, end: int) -> str:
        """Original text of ``[start, end)`` with the edits inside it applied."""
        pieces: list[str] = []
        pos = start
        for edit in edits:
            if edit.start < start or edit.end > end:
                continue
            pieces.append(self.text[pos : edit.start])
            pieces.append(edit.text)
            pos = edit.end
        pieces.append(self.text[pos:end])
        return "".join(pieces)

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """Smallest whole statement (an element of a block) containing ``node``."""
        while True:
            parent = self._parents[id(node)]
            if parent is None or isinstance(parent, cst.IndentedBlock | cst.Module):
                return node
            node = parent

    def _checks(self, edits: list[_Edit]) -> list[tuple[str, bool]]:
        checks: list[tuple[str, bool]] = []
        seen: set[int] = set()
        for edit in edits:
            if edit.statements is not None:  # a changed statement list: its new statements
                checks.extend((text, bool(indent)) for text, indent in edit.statements)
                continue
            stmt = self._statement_of(edit.node)
            if id(stmt) in seen:
                continue
            seen.add(id(stmt))
            start, end = self._spans[id(stmt)]
            checks.append((self._apply(edits, start, end), bool(self._indents[id(stmt)])))
        return checks
