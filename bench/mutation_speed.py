"""Mutation-engine speed on a synthetic 400-function RE-ARC-style ``verifiers.py``.

Usage::

    python bench/mutation_speed.py [--functions 400] [--assignments 9000] [--seed 0]
                                   [--whole] [--profile]

    python bench/mutation_speed.py --functions 20 --assignments 450   # a quick smoke run

The file is GENERATED (``common.programs.mutation_verifiers``; our own code, nothing
copied): ``from dsl import *`` and ``--functions`` functions ``verify_<8 hex>(I)``, each
a straight-line chain ``xK = fnNN(a, b, c)`` of calls to made-up DSL names with 1-3
arguments drawn from the last few bound names (``I``, ``x0``...) and the DSL's number and
vector constants, ending in ``return x<last>``; ~``--assignments`` assignments in all. A
few real DSL names (``vmirror``, ``hconcat``...) are mixed in so every default operator
has sites.

Measured (CPU time, ``time.process_time``):

1. ``parse``: the first ``enumerate_mutants`` call parses and indexes the file (cached
   for the later calls), timed on its own.
2. ``enumerate``: ``enumerate_mutants(source, function=f)`` with all default operators
   for every function ``f``; the mutant count and per-operator counts are printed.
3. ``--whole``: also one call without ``function`` (the whole module at once).

Target: parse + enumerate under 60 s of CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections import Counter

from arcjudge.mutation import enumerate_mutants
from arcjudge.mutation.parsing import parse_source
from common.programs import mutation_verifiers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--functions", type=int, default=400)
    parser.add_argument("--assignments", type=int, default=9000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--whole", action="store_true", help="also mutate the whole module")
    parser.add_argument("--profile", action="store_true", help="cProfile the enumeration")
    args = parser.parse_args()

    source, names = mutation_verifiers(args.functions, args.assignments, args.seed)
    assigned = sum(1 for line in source.splitlines() if line.startswith("    x"))
    print(
        f"source: {len(names)} functions, {assigned} assignments, "
        f"{source.count(chr(10))} lines, {len(source) / 1024:.0f} KiB"
    )

    start = time.process_time()
    parse_source(source)
    parse_cpu = time.process_time() - start
    print(f"parse (once, cached): {parse_cpu:.2f} s CPU")

    profiler = cProfile.Profile() if args.profile else None
    per_operator: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    errors = 0
    start = time.process_time()
    if profiler:
        profiler.enable()
    for name in names:
        result = enumerate_mutants(source, task_id=name[7:], source_name="re-arc", function=name)
        errors += result.error is not None
        stats.update(result.stats)
        per_operator.update(m.operator for m in result)
    if profiler:
        profiler.disable()
    enum_cpu = time.process_time() - start
    total = sum(per_operator.values())
    print(
        f"enumerate per function: {enum_cpu:.2f} s CPU, {total} mutants "
        f"({total / enum_cpu:.0f}/s, {1e6 * enum_cpu / max(total, 1):.0f} us each), "
        f"{errors} errors"
    )
    print(f"  stats: {dict(stats)}")
    for op, count in per_operator.items():
        print(f"  {op:28s} {count:7d}")
    print(f"TOTAL parse + enumerate: {parse_cpu + enum_cpu:.2f} s CPU (target < 60 s)")

    if args.whole:
        start = time.process_time()
        whole = enumerate_mutants(source, task_id="all", source_name="re-arc")
        whole_cpu = time.process_time() - start
        print(f"whole module at once: {whole_cpu:.2f} s CPU, {len(whole)} mutants")

    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
