"""Render a mutated statement by re-rendering only what changed.

Operators rebuild only the path from the module to the nodes they change, so in a
mutated function every untouched body statement is the *same object* as before. A
:class:`StatementRenderer` remembers the text of each original body statement and of
the parts around them (the ``def`` line, the block's trailing comments), and renders a
mutated version as those cached pieces plus fresh text for the new statements only.
Rendering a 25-line function this way costs one statement's codegen instead of 25.

Fresh statements are rendered at their block's indentation with libcst's
``CodegenState`` (the object ``Module.code_for_node`` uses internally). The cached
pieces are checked once against the full rendering; if they do not add up, the renderer
is not used and callers render the whole statement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
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
def _other_fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind) if f.name != "body")


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    if isinstance(a, cst.CSTNode) or isinstance(b, cst.CSTNode):
        return False
    return a == b


def _same_except_body(old: cst.CSTNode, new: cst.CSTNode) -> bool:
    return type(old) is type(new) and all(
        _same(getattr(old, name), getattr(new, name)) for name in _other_fields(type(old))
    )


@dataclass
class Rendered:
    """A rendered statement and the pieces of it that were rendered afresh.

    Attributes:
        text: The statement's full text.
        fresh: Newly rendered body statements (indented), or the whole statement when
            it was rendered in one piece; what a syntax check needs to look at.
        indented: Whether the ``fresh`` texts are indented block statements.
    """

    text: str
    fresh: list[str]
    indented: bool


class StatementRenderer:
    """Incremental renderer for one compound statement with an indented body."""

    def __init__(
        self,
        stmt: cst.BaseCompoundStatement,
        module: cst.Module,
        prefix: str,
        suffix: str,
        children: dict[int, str],
        indent: tuple[str, ...],
    ) -> None:
        self.stmt = stmt
        self.module = module
        self._prefix = prefix
        self._suffix = suffix
        self._children = children
        self._indent = indent

    @classmethod
    def build(
        cls, stmt: cst.BaseStatement, text: str, module: cst.Module
    ) -> StatementRenderer | None:
        """A renderer for a top-level ``stmt`` whose full text is ``text``.

        Args:
            stmt: A top-level statement.
            text: Its text as it appears in the module (with its final newline).
            module: The module it belongs to.

        Returns:
            The renderer, or ``None`` when ``stmt`` has no indented body or the cached
            pieces do not reproduce ``text``.
        """
        block = getattr(stmt, "body", None)
        if not isinstance(stmt, cst.BaseCompoundStatement) or not isinstance(
            block, cst.IndentedBlock
        ):
            return None
        indent = (module.default_indent if block.indent is None else block.indent,)
        children = {id(child): render_node(child, module, indent) for child in block.body}
        joined = "".join(children[id(child)] for child in block.body)
        suffix = "".join(render_node(line, module, indent) for line in block.footer)
        if not block.body or not text.endswith(joined + suffix):
            return None
        prefix = text[: len(text) - len(joined) - len(suffix)]
        return cls(stmt, module, prefix, suffix, children, indent)

    def render(self, new: cst.CSTNode) -> Rendered:
        """Text of ``new``, a mutated version of this renderer's statement.

        Args:
            new: The statement after mutation (sharing unchanged nodes with the original).

        Returns:
            The rendered text; only body statements that are not original objects are
            rendered afresh. Anything else that changed makes it render ``new`` whole.
        """
        block = getattr(new, "body", None)
        old_block = self.stmt.body
        if (
            not _same_except_body(self.stmt, new)
            or not isinstance(block, cst.IndentedBlock)
            or not _same_except_body(old_block, block)
            or not block.body
        ):
            text = render_node(new, self.module)
            return Rendered(text, [text], False)
        pieces = [self._prefix]
        fresh: list[str] = []
        for child in block.body:
            # ids are safe keys: the original children stay alive through self.stmt
            cached = self._children.get(id(child))
            if cached is None:
                cached = render_node(child, self.module, self._indent)
                fresh.append(cached)
            pieces.append(cached)
        pieces.append(self._suffix)
        return Rendered("".join(pieces), fresh, True)
