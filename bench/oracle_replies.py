"""Issue 16's acceptance check at full scale: oracle replies over the 400 training tasks.

Run by hand:  python bench/oracle_replies.py [--tasks 400] [--data DIR] [--backend process]
                  [--workers 2] [--keep DIR]

The pipeline is ``tests/support/oracle_pipeline.py``'s (the test
``tests/end_to_end/test_oracle_replies.py`` runs it on a dozen tasks): lookup-table
verifiers of our own (valid by construction), ``validate``, ``dimensions build``,
``dimensions prompts`` in both grid formats with a leak check against the keys, oracle
replies from the keys in six reply styles (parsed back here and compared with the keys,
then scored by ``dimensions score --replies``), output-grid replies made of the
demonstrations' outputs (pass@1 and pass@2, against plain Python over the task files) and
junk replies (the run must finish and fail them all). All through the command line, each
step timed. ``--tasks N`` takes the first N task ids (sorted).

Prints per-dimension parse-back and pass rates, replies per style, how replies were read,
the demonstration and junk checks, step timings; exits 1 when any check failed (listing
the failures).
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
from tests.support import oracle_pipeline as pipeline

del sys.path[0]

from arcjudge.vocabulary import BUILT_DIMENSIONS  # noqa: E402


def run(argv: list[str]) -> str:
    """``arcjudge ARGV`` in a subprocess (exit 1 on a failure); its output."""
    stdout, _ = arcjudge_or_exit(argv)
    return stdout


def rate(a: int, b: int) -> str:
    """``a/b (pct)``."""
    return f"{a}/{b} ({100 * a / b:.1f}%)" if b else f"{a}/0"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=400, help="the first N training tasks")
    data.add_argument(parser)
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: temporary)")
    args = parser.parse_args()
    root_data = data.root(args.data)
    tasks, arcgen = data.training_dir(root_data), data.arcgen_dir(root_data)
    ids = data.task_ids(tasks)[: args.tasks]
    box = ["--backend", args.backend, "--workers", str(args.workers), "--no-progress"]
    print(code_state())
    print(f"{len(ids)} tasks from {tasks}; {load_note()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        start = now()
        report = pipeline.run_pipeline(tasks, arcgen, ids, root, run, box)
        wall = now() - start
    print(f"\nvalidate: {report.validated}/{report.tasks} table verifiers valid")
    print("instances: " + ", ".join(f"{d} {report.instances[d]}" for d in BUILT_DIMENSIONS))
    for fmt, counts in report.prompts.items():
        print(f"prompts ({fmt}): {sum(counts.values())}, "
              + ", ".join(f"{d} {counts[d]}" for d in BUILT_DIMENSIONS))  # fmt: skip
    leaks = [p for p in report.problems if p.startswith("leak:")]
    looked = ", ".join(f"{n} {what}" for what, n in sorted(report.looked_for.items()))
    print(f"key material in prompts: {len(leaks)} finding(s) (looked for {looked})")
    print(f"\n{'dimension':15} {'replies':>8} {'no ref':>7} {'parsed back':>18} {'passed':>18}")
    for d in BUILT_DIMENSIONS:
        n = report.replies[d]
        print(f"{d:15} {n:8} {report.unanswerable[d]:7} {rate(report.parsed_back[d], n):>18} "
              f"{rate(report.passed[d], report.scored[d]):>18}")  # fmt: skip
    total = sum(report.replies.values())
    print(f"{'all':15} {total:8} {sum(report.unanswerable.values()):7} "
          f"{rate(sum(report.parsed_back.values()), total):>18} "
          f"{rate(sum(report.passed.values()), sum(report.scored.values())):>18}")  # fmt: skip
    print("\nreplies per style (per dimension):")
    for style in pipeline.STYLES:
        per = ", ".join(f"{d} {report.style_dimensions[(style, d)]}" for d in BUILT_DIMENSIONS)
        print(f"  {style:20} {sum(report.style_dimensions[(style, d)] for d in BUILT_DIMENSIONS):5}"
              f"  ({per})")  # fmt: skip
    for label, n in sorted(report.styles.items()):
        if label.startswith("mixed rows:"):
            print(f"    {label:30} {n}")
    print("\nhow the replies were read:")
    for (dim, how), n in sorted(report.hows.items()):
        print(f"  {dim:15} {how:55} {n}")
    print("\ndemonstrations' outputs as output-grid answers:")
    for name, result in report.demonstrations.items():
        said = f"the task files say {result['expected_accuracy']}: {result['expected']}"
        print(f"  {name}: accuracy {result['accuracy']} of {result['total']} ({said})")
    junk = report.junk
    print(f"junk replies: {junk.get('items')} items, {junk.get('passed')} passed; "
          f"reasons {junk.get('reasons')}")  # fmt: skip
    print("\nsteps (wall seconds):")
    for name, seconds, _ in report.steps:
        print(f"  {name:52} {seconds:7.1f}")
    print(f"  {'total':52} {wall:7.1f}")
    print(load_note())
    if report.problems:
        print(f"\n{len(report.problems)} FAILED check(s):")
        print("\n".join(f"  {p}" for p in report.problems[:100]))
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
