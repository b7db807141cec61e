"""What a mutation operator is: named sites in a module, and a pure rewrite of one site.

An operator enumerates :class:`Site` s deterministically in source order and applies one
at a time, returning a new module (the input module is never changed; libcst trees are
immutable). Each operator class carries ``examples`` (source before, source after
applying it to the first site, optionally a site selector) that one parametrized test
checks for every registered operator.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.anchors import AnchorCounter
from arcjudge.mutation.cstindex import REMOVE, ModuleIndex, _Remove, module_index, replace_nodes

Example = tuple[str, str] | tuple[str, str, str]
"""``(before, after)``: ``after`` is ``before`` with the first site applied; a third item
selects the first site whose ``variant`` or ``anchor:variant`` equals it instead."""


@dataclass(frozen=True)
class Site:
    """One place an operator can change, with one variant of the change.

    Attributes:
        anchor: Content-based name of the place, unique per operator within ``scope``
            (``x3``, ``a+b#0``); see :mod:`arcjudge.mutation.anchors`.
        variant: Which of several changes at the same place (``x1``, ``upper+1``), or
            ``None`` when there is only one.
        scope: The top-level ``def``/``class`` the site is in, ``None`` at module level.
        node: The node the operator will rewrite (not part of equality).
        data: Operator-private details (not part of equality).
    """

    anchor: str
    variant: str | None = None
    scope: str | None = None
    node: cst.CSTNode | None = field(default=None, compare=False, repr=False)
    data: object = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """``anchor`` or ``anchor:variant``."""
        return self.anchor if self.variant is None else f"{self.anchor}:{self.variant}"


class Operator(ABC):
    """A family of small source changes; subclasses set ``name`` and ``examples``.

    Attributes:
        name: Stable dotted name, part of every mutant id (``expr.binop_left``).
        examples: ``(before, after[, selector])`` snippets checked by the test suite.
        counter_examples: Sources in which the operator must find no site.
    """

    name: ClassVar[str]
    examples: ClassVar[list[Example]] = []
    counter_examples: ClassVar[list[str]] = []

    def sites(self, module: cst.Module) -> list[Site]:
        """Every site of this operator in ``module``, in source order (deterministic).

        Args:
            module: A parsed module (its index is cached, so calling several operators
                on the same module walks it once).

        Returns:
            The sites; each variant of a place is its own site.
        """
        return self.find_sites(module_index(module))

    def apply(self, module: cst.Module, site: Site) -> cst.Module:
        """Return a new module with ``site`` changed; ``module`` itself is not modified.

        Args:
            module: The module ``site`` came from, or an equal re-parse of it (then the
                site is found again by scope, anchor and variant).
            site: One of ``self.sites(module)``.

        Returns:
            The mutated module. Untouched subtrees are shared with ``module``.

        Raises:
            KeyError: The site is not in ``module``.
        """
        index = module_index(module)
        if site.node is None or site.node not in index:
            site = self._resolve(index, site)
        result = self.rewrite(index, site)
        if not isinstance(result, cst.Module):
            raise TypeError(f"{self.name} produced {type(result).__name__}, not a Module")
        return result

    def _resolve(self, index: ModuleIndex, site: Site) -> Site:
        for candidate in self.find_sites(index):
            if candidate == site:
                return candidate
        raise KeyError(f"{self.name}: no site {site.key!r} in scope {site.scope!r}")

    @abstractmethod
    def find_sites(self, index: ModuleIndex) -> list[Site]:
        """Enumerate sites using the module's shared index."""

    @abstractmethod
    def rewrite(self, index: ModuleIndex, site: Site) -> cst.CSTNode:
        """Build the mutated module for a site of ``index.module``."""

    def __repr__(self) -> str:
        return f"<operator {self.name}>"


class NodeOperator(Operator):
    """An operator that rewrites single nodes of some types, anchored by their text.

    Subclasses set ``node_types`` and implement :meth:`variants` (an empty list means
    "not a site") and :meth:`mutate`. The anchor is the normalized text of
    :meth:`anchor_node` (the node itself by default) plus its occurrence number among
    identical texts of this operator's sites in the same scope.
    """

    node_types: ClassVar[tuple[type[cst.CSTNode], ...]]

    @abstractmethod
    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """Variants of the change at ``node``; ``[None]`` for a single change, ``[]`` for none."""

    @abstractmethod
    def mutate(
        self, index: ModuleIndex, node: cst.CSTNode, variant: str | None
    ) -> cst.CSTNode | _Remove:
        """The replacement for ``node`` (or :data:`REMOVE` to drop it from its sequence)."""

    def anchor_node(self, index: ModuleIndex, node: cst.CSTNode) -> cst.CSTNode:
        """The node whose text names the site (``node`` itself by default)."""
        return node

    def find_sites(self, index: ModuleIndex) -> list[Site]:
        """Sites of every accepted node, variants in :meth:`variants` order."""
        counter = AnchorCounter()
        sites: list[Site] = []
        for node in index.of_type(*self.node_types):
            variants = self.variants(index, node)
            if not variants:
                continue
            scope = index.scope_of(node)
            anchor = counter.anchor(scope, index.code(self.anchor_node(index, node)))
            sites.extend(Site(anchor, v, scope, node) for v in variants)
        return sites

    def rewrite(self, index: ModuleIndex, site: Site) -> cst.CSTNode:
        """Replace the site's node with :meth:`mutate`'s result."""
        assert site.node is not None
        new = self.mutate(index, site.node, site.variant)
        return replace_nodes(index, index.module, {site.node: new})


__all__ = ["REMOVE", "Example", "NodeOperator", "Operator", "Site"]
