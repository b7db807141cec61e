"""Issue 17's acceptance check at full scale: synthetic answerers over the 400 training tasks.

Run by hand:  python bench/analyze_synthetic.py [--tasks 400] [--data DIR] [--backend process]
                  [--workers 2] [--out DIR]

The pipeline is ``tests/support/synthetic_analysis.py``'s (the test
``tests/end_to_end/test_analyze_synthetic.py`` runs it on a dozen tasks): lookup-table verifiers and
ARC-GEN-sampling generators of our own, ``validate``, ``dimensions build --generator
--repeats 6 --configurations 2`` (each configuration checked by ``bench/check_build.py
--strict``), per configuration answers and Definition programs of six synthetic answerers
whose every number is known by construction (oracle, always valid, always invalid, one
candidate type wrong, two runs passing all five on known task sets, six runs failing by a
seeded draw), ``score`` of the programs in the sandbox (each configuration's seed),
``dimensions score --answers`` (configuration 2 ``--after`` configuration 1), ``dimensions
analyze --configuration``; then every item and every section of ``analysis.json``
(Section 3.1 and Table 6 included) against the construction. All through the command
line, each step timed. ``--tasks N`` takes the first N task ids (sorted).

Prints the build's counts, the construction, every check (section: name: ok/FAILED), the
step timings and "all checks passed"; exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import data
from common.cli import arcjudge_or_exit
from common.measure import code_state, load_note, now

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.support
from tests.support import synthetic_analysis as pipeline

del sys.path[0]


def run(argv: list[str]) -> str:
    """``arcjudge ARGV`` in a subprocess (exit 1 on a failure); its output."""
    stdout, _ = arcjudge_or_exit(argv)
    return stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=400, help="the first N training tasks")
    data.add_argument(parser)
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, help="work directory to keep (default: temporary)")
    args = parser.parse_args()
    root_data = data.root(args.data)
    tasks, arcgen = data.training_dir(root_data), data.arcgen_dir(root_data)
    ids = data.task_ids(tasks)[: args.tasks]
    box = ["--backend", args.backend, "--workers", str(args.workers), "--no-progress"]
    print(code_state())
    print(f"{len(ids)} tasks from {tasks}; {load_note()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        start = now()
        report = pipeline.run_pipeline(tasks, arcgen, ids, root, run, box)
        wall = now() - start
    print()
    for name, value in report.counts.items():
        print(f"{name}: {value}")
    print("\ncheck_build.py --strict:")
    print("".join(f"  {line}\n" for line in report.check_build.splitlines()), end="")
    print("\nconstruction:")
    for line in pipeline.summary_lines(report):
        print(f"  {line}")
    print("\nchecks:")
    for section, checks in pipeline.by_section(report.checks).items():
        for check in checks:
            print(f"  {section}: {check.name}: {'ok' if check.held else 'FAILED'}")
            for problem in check.problems[:10]:
                print(f"      {problem}")
            if len(check.problems) > 10:
                print(f"      ... and {len(check.problems) - 10} more")
    print("\nsteps (wall seconds):")
    for name, seconds, _ in report.steps:
        print(f"  {name:62} {seconds:7.1f}")
    print(f"  {'total':62} {wall:7.1f}")
    print(load_note())
    failed = report.failed
    if failed:
        print(f"\n{len(failed)} of {len(report.checks)} checks FAILED")
        return 1
    print(f"\nall checks passed ({len(report.checks)} checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
