"""Does the fast test tier catch a broken pass rule or a broken sandbox protection?

Run by hand:  python bench/fast_tier_check.py [--only NAME ...] [--list]

Each break is one edit of one line of ``src/arcjudge`` (a dimension's pass rule, Definition's,
or a protection of the process backend). For each, the source tree is copied to a temporary
directory, the edit made there, and the fast tier's tests of the package the edit is in
(``python3 -m pytest -m "not slow" -x`` on those folders, the copy first on ``PYTHONPATH``)
run: a break is *caught* when they fail. The checkout itself is never edited. Prints one
line per break (caught or not, the seconds the tests took) and exits 1 when any break went
uncaught (or an edit no longer applies: the line it names is gone).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


@dataclass(frozen=True)
class Break:
    """One edit that must make the fast tier fail."""

    name: str
    path: str  # under src/arcjudge
    old: str  # found exactly once in the file
    new: str
    tests: tuple[str, ...]  # folders or files under tests/, run with -m "not slow"


_DIMENSIONS = ("tests/harness/dimensions",)
_SANDBOX = ("tests/sandbox",)
_RULES = "harness/dimensions/rules.py"

BREAKS: tuple[Break, ...] = (
    Break(
        "classification: one right judgment is enough",
        _RULES,
        "    if all(right):\n        return RuleVerdict(True, None, detail)\n"
        '    return RuleVerdict(False, f"wrong judgment',
        "    if any(right):\n        return RuleVerdict(True, None, detail)\n"
        '    return RuleVerdict(False, f"wrong judgment',
        _DIMENSIONS,
    ),
    Break(
        "generation: a copy of a demonstration passes",
        _RULES,
        "    return ((near_in or near_out) if strict else (near_in and near_out)), d_in, d_out",
        "    return False, d_in, d_out",
        _DIMENSIONS,
    ),
    Break(
        "generation: the verifier is not asked",
        _RULES,
        '    reason = _verifier_says(verifier, pair[1], "generated input")',
        "    reason = None",
        _DIMENSIONS,
    ),
    Break(
        "editing: an edit any distance away passes",
        _RULES,
        "        if value > limit:",
        "        if value > limit + 1:",
        _DIMENSIONS,
    ),
    Break(
        "editing: the verifier is not asked",
        _RULES,
        '    reason = _verifier_says(verifier, edited[1], "edited input")',
        "    reason = None",
        _DIMENSIONS,
    ),
    Break(
        "inversion: the verifier is not asked",
        _RULES,
        '    reason = _verifier_says(verifier, given_output, "proposed input")',
        "    reason = None",
        _DIMENSIONS,
    ),
    Break(
        "output grid: pass@k counts one attempt too many",
        _RULES,
        "    right = [want in tuple(got[:attempts])",
        "    right = [want in tuple(got[: attempts + 1])",
        _DIMENSIONS,
    ),
    Break(
        "definition: a wrong grid is no failure",
        "harness/score/scorer.py",
        "            wrong = wrong or not is_right(res, inst)",
        "            wrong = wrong and not is_right(res, inst)",
        ("tests/harness/score",),
    ),
    Break(
        "process backend: no memory limit per process",
        "sandbox/runtime/program_setup.py",
        '    cap(resource.RLIMIT_AS, memory_baseline + int(limits["memory_bytes"]))\n',
        "",
        _SANDBOX,
    ),
    Break(
        "process backend: no process limit",
        "sandbox/runtime/program_setup.py",
        '    cap(resource.RLIMIT_NPROC, int(limits["processes"]))\n',
        "",
        _SANDBOX,
    ),
    Break(
        "process backend: no syscall filter",
        "sandbox/runtime/program_setup.py",
        '    if settings["seccomp"] and not seccomp.install():',
        "    if False:",
        _SANDBOX,
    ),
    Break(
        "process backend: programs keep root's uid",
        "sandbox/runtime/program_setup.py",
        "    if uid is not None and not userns:",
        "    if False:",
        _SANDBOX,
    ),
    Break(
        "process backend: no network namespace",
        "sandbox/runtime/protections.py",
        "        flags = iso.CLONE_NEWNS | iso.CLONE_NEWNET | iso.CLONE_NEWIPC",
        "        flags = iso.CLONE_NEWNS | iso.CLONE_NEWIPC",
        _SANDBOX,
    ),
    Break(
        "process backend: the program's root stays writable",
        "sandbox/runtime/rootfs.py",
        '    if not iso.make_tree_read_only("/"):\n        raise OSError("could not make',
        '    if False:\n        raise OSError("could not make',
        _SANDBOX,
    ),
)


def apply(tree: Path, brk: Break) -> str | None:
    """Make the edit in the copied tree; a problem (the line is gone) as a message."""
    path = tree / "arcjudge" / brk.path
    text = path.read_text(encoding="utf-8")
    if text.count(brk.old) != 1:
        return f"{brk.path}: the line to edit is there {text.count(brk.old)} times, not once"
    path.write_text(text.replace(brk.old, brk.new), encoding="utf-8")
    return None


def run_tests(tree: Path, tests: tuple[str, ...]) -> tuple[bool, float]:
    """Run the fast tier of ``tests`` against the copied tree: (failed, seconds)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
         *tests],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    return done.returncode != 0, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="breaks whose name has this")
    parser.add_argument("--list", action="store_true", help="list the breaks and exit")
    args = parser.parse_args()
    breaks = [b for b in BREAKS if not args.only or any(o in b.name for o in args.only)]
    if args.list:
        for brk in breaks:
            print(f"{brk.name}  ({brk.path}; {' '.join(brk.tests)})")
        return 0
    uncaught = 0
    for brk in breaks:
        with tempfile.TemporaryDirectory(prefix="arcjudge-fast-tier-") as tmp:
            tree = Path(tmp) / "src"
            shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
            problem = apply(tree, brk)
            if problem is not None:
                print(f"STALE     {brk.name}: {problem}", flush=True)
                uncaught += 1
                continue
            failed, seconds = run_tests(tree, brk.tests)
        print(f"{'caught' if failed else 'MISSED':9} {brk.name} ({seconds:.0f} s)", flush=True)
        uncaught += not failed
    print(f"{len(breaks) - uncaught} of {len(breaks)} breaks caught by the fast tier")
    return 1 if uncaught else 0


if __name__ == "__main__":
    sys.exit(main())
