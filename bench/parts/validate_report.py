"""``validate_full.py``'s results table, targets and notes."""

from __future__ import annotations

import itertools
import os
import sys

from common.measure import mib as _mib
from parts.validate_raw import RawResult

TARGET_RATIO = 0.6
TARGET_MEMORY = 1 << 30


def cpu_text(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f} s"


def _others(r: dict) -> float | None:
    """Busy CPU seconds during the run that were neither the harness's nor the sandbox's."""
    if r.get("sandbox_cpu") is None:
        return None
    return r["machine_busy"] - r["harness_cpu"] - r["sandbox_cpu"]


def _verdicts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def print_results(
    raw: RawResult, runs: list[dict], n_tasks: int, extra: dict, ratio: float = TARGET_RATIO
) -> bool:
    """Print the table, targets (``ratio``: validate wall / raw) and notes; all met?

    Baseline runs (``--baseline-src``) are printed, with their ratio to the run after
    them, but not held to the targets.
    """
    print()
    header = (
        f"{'run':<34} {'wall s':>7} {'x raw':>6} {'harness CPU':>11} {'sandbox CPU':>11}"
        f" {'others CPU':>10} {'peak RSS':>9} {'jobs':>5} {'inputs':>7}  verdicts"
    )
    print(header)
    print("-" * len(header))
    dash = "-"
    print(
        f"{'raw (1 core)':<34} {raw.seconds:>7.1f} {1.0:>6.3f} {raw.cpu_seconds:>11.1f}"
        f" {dash:>11} {dash:>10} {dash:>9} {n_tasks:>5} {raw.calls:>7}  {_verdicts(raw.verdicts)}"
    )
    par = extra.get("parallel")
    if par:
        label = f"raw x{len(par['seconds'])} processes"
        print(
            f"{label:<34} {par['wall']:>7.1f} {par['wall'] / raw.seconds:>6.3f}"
            f" {sum(par['cpu_seconds']):>11.1f} {dash:>11} {dash:>10} {dash:>9} {n_tasks:>5}"
            f" {par['calls']:>7}"
        )
    image = extra.get("image")
    if image:
        label = f"raw in image (py {image['python']})"
        print(
            f"{label:<34} {image['seconds']:>7.1f} {image['seconds'] / raw.seconds:>6.3f}"
            f" {image['cpu_seconds']:>11.1f} {dash:>11} {dash:>10} {dash:>9} {n_tasks:>5}"
            f" {image['calls']:>7}  {_verdicts(image['verdicts'])}"
        )
    for r in runs:
        others = _others(r)
        print(
            f"{r['label']:<34} {r['wall']:>7.1f} {r['wall'] / raw.seconds:>6.3f}"
            f" {r['harness_cpu']:>11.1f} {cpu_text(r['sandbox_cpu'])[:-2]:>11}"
            f" {dash if others is None else f'{others:.1f}':>10} {_mib(r['maxrss_bytes']):>9}"
            f" {r['jobs']:>5} {r['inputs']:>7}  {_verdicts(r['verdicts'])}"
        )
    print(
        "  CPU seconds: harness = the validate process (raw rows: the raw process(es));"
        " sandbox = supervisors and programs (process: reaped children; docker: the"
        " containers' cgroups); others = the rest of the machine's busy time during the run"
        " (other users, dockerd, ...)"
    )
    print(
        f"  raw: {raw.calls} calls in {raw.seconds:.1f} s = {1000 * raw.seconds / raw.calls:.3f}"
        f" ms per call ({_verdicts(raw.statuses)}); its CPU time {raw.cpu_seconds:.1f} s"
        f" ({raw.cpu_seconds / raw.seconds:.0%} of the wall: the rest is other load); reading"
        f" the data {raw.load_seconds:.1f} s"
        f" more, importing the source {raw.import_seconds:.2f} s (not in the raw time)"
    )
    if par:
        print(
            "  raw x{}: the tasks split over {} processes started together, in shares of"
            " equal raw time; their call times {} s (CPU {} s): side by side, {:+.0%}"
            " against alone".format(
                len(par["seconds"]),
                len(par["seconds"]),
                " / ".join(f"{x:.1f}" for x in par["seconds"]),
                " / ".join(f"{x:.1f}" for x in par["cpu_seconds"]),
                sum(par["seconds"]) / raw.seconds - 1,
            )
        )
    if image:
        print(
            f"  raw in image: the same loop in one container of the runtime image, python"
            f" {image['python']} (the interpreter the docker backend runs programs with);"
            f" CPU {image['cpu_seconds']:.1f} s; {raw.seconds / image['seconds']:.2f}x as fast"
            f" as this process's python {sys.version.split()[0]}"
        )
    for r in runs:
        print(
            f"  {r['label']}: setup {r['setup']:.2f} s, sandbox start {r['start']:.2f} s, "
            f"Validator.run {r['run']:.1f} s, close {r['close']:.2f} s, outputs "
            f"{r['outputs']:.2f} s; harness CPU in run {r['harness_cpu_run']:.1f} s; machine"
            f" busy {r['machine_busy']:.1f} s of {os.cpu_count()} x {r['process_wall']:.1f} s"
            + (
                "; walls of the repeats " + ", ".join(f"{w:.1f}" for w in r["walls"]) + " s"
                if len(r.get("walls", [])) > 1
                else ""
            )
        )
    print("\ntargets:")
    ok = True
    for r in runs:
        if r["label"].endswith("warm") or r.get("baseline"):
            continue
        rows = [
            (
                f"{r['label']} wall / raw",
                f"<= {ratio:g}",
                f"{r['wall'] / raw.seconds:.3f}",
                r["wall"] / raw.seconds <= ratio,
            ),
            (
                f"{r['label']} harness peak memory",
                "< 1 GiB",
                _mib(r["maxrss_bytes"]),
                r["maxrss_bytes"] < TARGET_MEMORY,
            ),
        ]
        for what, target, got, passed in rows:
            ok = ok and passed
            print(f"  {what:<50} {target:<10} {got:<10} {'PASS' if passed else 'MISS'}")
    notes = []
    for r in runs:
        if r["label"].endswith("warm"):
            continue
        if r.get("sandbox_cpu") is not None:
            demand = r["harness_cpu"] + r["sandbox_cpu"]
            cores = os.cpu_count() or 1
            notes.append(
                f"{r['label']}: CPU used by the harness and the sandbox {demand:.1f} s -> even"
                f" with the {cores} cores to itself the run needs >= {demand / cores:.1f} s ="
                f" {demand / cores / raw.seconds:.3f}x raw"
            )
        if par:
            notes.append(
                f"{r['label']}: {r['wall'] / par['wall']:.2f}x the wall of raw x"
                f"{len(par['seconds'])} processes ({par['wall']:.1f} s, the best 2 cores give)"
            )
        if image and r["backend"] == "docker":
            notes.append(
                f"{r['label']}: {r['wall'] / image['seconds']:.3f}x raw in the image"
                f" ({image['seconds']:.1f} s, same interpreter as its workers)"
            )
    for before, after in itertools.pairwise(runs):
        if before.get("baseline") and not after.get("baseline"):
            notes.append(
                f"{after['label']}: {after['wall']:.1f} s against {before['wall']:.1f} s on the"
                f" baseline's harness ({after['wall'] / before['wall']:.3f}x)"
            )
    for note in notes:
        print(f"  note: {note}")
    return ok
