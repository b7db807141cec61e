"""The operator registry: name -> operator instance, in registration order."""

from __future__ import annotations

from arcjudge.mutation.operators import ALL_OPERATOR_CLASSES, Operator

OPERATORS: dict[str, Operator] = {}
"""Registered operators by name; :func:`default_operators` uses all of them, in order."""


def register(operator: Operator, *, replace: bool = False) -> Operator:
    """Add ``operator`` to :data:`OPERATORS`.

    Args:
        operator: An operator instance with a unique ``name``.
        replace: Allow replacing an operator of the same name.

    Returns:
        ``operator`` (so this can be used inline).

    Raises:
        ValueError: The name is taken (and ``replace`` is false) or is not a valid name.
    """
    name = operator.name
    if not name or ":" in name or any(c.isspace() for c in name):
        raise ValueError(f"bad operator name {name!r}")
    if name in OPERATORS and not replace:
        raise ValueError(f"operator {name!r} is already registered")
    OPERATORS[name] = operator
    return operator


def default_operators() -> list[Operator]:
    """Every registered operator, in registration order."""
    return list(OPERATORS.values())


STUDY_OPERATORS: dict[bool, tuple[str, ...]] = {
    True: ("stmt.drop_assign_rewire",),
    False: ("expr.binop_left",),
}
"""The reference study's operators (``mutate --operators paper``), keyed by whether the
source is a DSL verifier (RE-ARC: assignment drop with rewiring) or not (binary-operation
prune to the left operand)."""


def study_operators(dsl: bool) -> list[Operator]:
    """The reference study's operators for a DSL verifier (``dsl``) or any other source."""
    return [OPERATORS[name] for name in STUDY_OPERATORS[dsl]]


for _cls in ALL_OPERATOR_CLASSES:
    register(_cls())
