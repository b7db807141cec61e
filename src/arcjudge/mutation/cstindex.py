"""One walk over a module, shared by every operator: nodes in source order with parents.

Walking a libcst tree is the slow part of site enumeration, so it is done once per
module: :func:`module_index` caches the :class:`ModuleIndex` of the last few modules (by
identity; the cache holds them alive so identities stay valid). The index also answers
the questions operators share: a node's parent and top-level scope, whether a ``Name``
is read or bound, and it rebuilds a tree with a few nodes replaced
(:func:`replace_nodes`), copying only the path to each replaced node so that every
untouched subtree keeps its identity (the incremental renderer relies on that).
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Final, Literal

import libcst as cst


class _Remove:
    """Marker: delete this node from the sequence that holds it."""

    def __repr__(self) -> str:
        return "REMOVE"


REMOVE: Final = _Remove()
"""Replacement value that deletes a node from the sequence field holding it."""

NameRole = Literal["load", "store", "global", "other"]


class ModuleIndex:
    """Every node of a module in pre-order (source order), with parents and scopes.

    Attributes:
        module: The indexed module.
        nodes: All nodes, pre-order; a node's subtree is ``nodes[pos:end[pos]]``.
        parent_pos: Position of each node's parent (``-1`` for the module).
        end: One past the last position of each node's subtree.
        scope: Name of the top-level function or class a node is in, else ``None``.
    """

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.nodes: list[cst.CSTNode] = []
        self.parent_pos: list[int] = []
        self.end: list[int] = []
        self.scope: list[str | None] = []
        self._pos: dict[int, int] = {}
        self._by_type: dict[type, list[int]] = {}
        self._bound: frozenset[str] | None = None
        module.visit(_Indexer(self))

    def __contains__(self, node: object) -> bool:
        pos = self._pos.get(id(node))
        return pos is not None and self.nodes[pos] is node

    @property
    def bound_names(self) -> frozenset[str]:
        """Every name the module binds anywhere (assignments, parameters, imports...)."""
        if self._bound is None:
            self._bound = frozenset(
                node.value
                for node in self.of_type(cst.Name)
                if isinstance(node, cst.Name) and self.name_role(node) in ("store", "global")
            )
        return self._bound

    def pos(self, node: cst.CSTNode) -> int:
        """Pre-order position of ``node`` (must be in the module)."""
        return self._pos[id(node)]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node's parent, ``None`` for the module itself."""
        ppos = self.parent_pos[self._pos[id(node)]]
        return None if ppos < 0 else self.nodes[ppos]

    def scope_of(self, node: cst.CSTNode) -> str | None:
        """Name of the top-level ``def``/``class`` holding ``node``, ``None`` at module level."""
        return self.scope[self._pos[id(node)]]

    def of_type(self, *types: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Nodes that are instances of exactly one of ``types`` (no subclasses), in source order."""
        positions: list[int] = []
        for kind in types:
            positions.extend(self._by_type.get(kind, ()))
        if len(types) > 1:
            positions.sort()
        return [self.nodes[p] for p in positions]

    def subtree(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """``node`` and all its descendants, in source order."""
        start = self._pos[id(node)]
        return iter(self.nodes[start : self.end[start]])

    def code(self, node: cst.CSTNode) -> str:
        """Source text of ``node`` in the module's formatting."""
        return self.module.code_for_node(node)

    def name_role(self, node: cst.Name) -> NameRole:
        """Whether a ``Name`` is read (``load``), bound (``store``) or neither.

        ``global``/``nonlocal`` declarations give ``global``; attribute names, keyword
        argument names and import paths give ``other``.
        """
        parent = self.parent(node)
        child: cst.CSTNode = node
        if isinstance(parent, cst.Attribute):
            if parent.attr is child:
                return "other"
            top: cst.CSTNode | None = parent
            while isinstance(top, cst.Attribute):
                top = self.parent(top)
            if isinstance(top, cst.ImportAlias | cst.ImportFrom):
                return "other"
            return "load"
        climbed = False
        while isinstance(parent, cst.Element | cst.StarredElement | cst.Tuple | cst.List):
            child, parent = parent, self.parent(parent)
            climbed = True
        if _is_target_slot(parent, child):
            return "store"
        if climbed or parent is None:
            return "load"
        return _direct_role(parent, child)


def _is_target_slot(parent: cst.CSTNode | None, child: cst.CSTNode) -> bool:
    """Whether ``child`` sits where an assignment-like statement binds names."""
    if isinstance(
        parent,
        cst.AssignTarget | cst.For | cst.CompFor | cst.NamedExpr | cst.AugAssign | cst.AnnAssign,
    ):
        return parent.target is child
    if isinstance(parent, cst.Del):
        return parent.target is child
    if isinstance(parent, cst.AsName):
        return parent.name is child
    return False


def _direct_role(parent: cst.CSTNode, child: cst.CSTNode) -> NameRole:
    """Role of a ``Name`` whose parent is not a target container."""
    if isinstance(parent, cst.Arg):
        return "other" if parent.keyword is child else "load"
    if isinstance(parent, cst.Param | cst.FunctionDef | cst.ClassDef | cst.AsName):
        return "store" if parent.name is child else "load"
    if isinstance(parent, cst.ImportAlias):
        return "store" if parent.asname is None else "other"
    if isinstance(parent, cst.ImportFrom):
        return "other"
    if isinstance(parent, cst.NameItem):
        return "global"
    if isinstance(parent, cst.MatchAs | cst.MatchStar):
        return "store" if parent.name is child else "load"
    if isinstance(parent, cst.MatchMapping):
        return "store" if parent.rest is child else "load"
    if isinstance(parent, cst.MatchKeywordElement):
        return "other" if parent.key is child else "load"
    return "load"


class _Indexer(cst.CSTVisitor):
    """Fills a :class:`ModuleIndex` in one traversal."""

    def __init__(self, index: ModuleIndex) -> None:
        super().__init__()
        self._index = index
        self._stack: list[int] = []
        self._scope: str | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        index = self._index
        pos = len(index.nodes)
        parent = self._stack[-1] if self._stack else -1
        if (
            parent == 0
            and isinstance(node, cst.FunctionDef | cst.ClassDef)
            and isinstance(index.nodes[0], cst.Module)
        ):
            self._scope = node.name.value
        index.nodes.append(node)
        index.parent_pos.append(parent)
        index.end.append(pos + 1)
        index.scope.append(self._scope)
        index._pos[id(node)] = pos
        index._by_type.setdefault(type(node), []).append(pos)
        self._stack.append(pos)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pos = self._stack.pop()
        self._index.end[pos] = len(self._index.nodes)
        if len(self._stack) == 1:
            self._scope = None


_CACHE: OrderedDict[int, ModuleIndex] = OrderedDict()
_CACHE_SIZE = 8


def module_index(module: cst.Module) -> ModuleIndex:
    """The (cached) index of ``module``; the cache keeps the last few modules alive."""
    key = id(module)
    index = _CACHE.get(key)
    if index is not None and index.module is module:
        _CACHE.move_to_end(key)
        return index
    index = ModuleIndex(module)
    _CACHE[key] = index
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return index


@cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


def replace_nodes(
    index: ModuleIndex,
    root: cst.CSTNode,
    replacements: Mapping[cst.CSTNode, cst.CSTNode | _Remove],
) -> cst.CSTNode:
    """Copy ``root`` with some descendants replaced, sharing every untouched subtree.

    Args:
        index: Index of a module containing ``root`` and all replaced nodes.
        root: Where to rebuild from (the module, or a statement inside it).
        replacements: Node -> new node, or :data:`REMOVE` to drop it from its sequence.

    Returns:
        The new ``root`` (``root`` itself when nothing is below it).
    """
    targets = {id(old): new for old, new in replacements.items()}
    on_path: set[int] = set()
    below: dict[int, list[cst.CSTNode]] = {}  # node id -> its children on a path
    root_id = id(root)
    for old in replacements:
        pos = index.pos(old)
        while pos >= 0:
            node = index.nodes[pos]
            node_id = id(node)
            if node_id in on_path:
                break
            on_path.add(node_id)
            if node_id == root_id:
                break
            pos = index.parent_pos[pos]
            if pos >= 0:
                below.setdefault(id(index.nodes[pos]), []).append(node)

    def rebuild(node: cst.CSTNode) -> cst.CSTNode | _Remove:
        node_id = id(node)
        if node_id in targets:
            return targets[node_id]
        if node_id not in on_path:
            return node
        children = below.get(node_id, [])
        changes: dict[str, object] = {}
        for name in _field_names(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                if id(value) in on_path:
                    new = rebuild(value)
                    if isinstance(new, _Remove):
                        raise ValueError(f"cannot remove the single child {name!r}")
                    changes[name] = new
            elif isinstance(value, tuple | list):
                # nodes compare by identity, so ``in``/``index`` are fast C-level scans
                hits = [child for child in children if child in value]
                if hits:
                    items: list[object] = list(value)
                    for child in hits:
                        items[value.index(child)] = rebuild(child)
                    changes[name] = tuple(v for v in items if not isinstance(v, _Remove))
        return node.with_changes(**changes)

    result = rebuild(root)
    if isinstance(result, _Remove):
        raise ValueError("cannot remove the root")
    return result
