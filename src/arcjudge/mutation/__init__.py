"""Corrupted verifiers: small deliberate source changes that give near-miss outputs.

``enumerate_mutants(source, task_id=..., source_name=..., function=...)`` applies every
registered operator (:data:`OPERATORS`) at every site and returns the distinct mutants,
each with a stable content-based id, its source and a unified diff.
"""

import warnings

with warnings.catch_warnings():  # libcst 1.0 imports mypy_extensions.TypedDict (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst  # noqa: F401  (imported here, once, with that warning silenced)

    from arcjudge.mutation.enumeration import enumerate_mutants
    from arcjudge.mutation.mutant import Mutant, MutantSet, mutant_id, parse_mutant_id
    from arcjudge.mutation.operators import Operator, Site
    from arcjudge.mutation.registry import (
        OPERATORS,
        STUDY_OPERATORS,
        default_operators,
        register,
        study_operators,
    )

__all__ = [
    "OPERATORS",
    "STUDY_OPERATORS",
    "Mutant",
    "MutantSet",
    "Operator",
    "Site",
    "default_operators",
    "enumerate_mutants",
    "mutant_id",
    "parse_mutant_id",
    "register",
    "study_operators",
]
