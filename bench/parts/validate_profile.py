"""``validate_full.py --profile``: where the time of a validate run goes."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from pathlib import Path

from common.data import task_pairs
from common.measure import now as _now
from common.verifier_source import golf_numbers
from parts.validate_child import SOURCE_NAME
from parts.validate_raw import RawResult, load_functions


def _median_run(sb, program, inputs, reps: int) -> float:
    from arcjudge.sandbox.types import ProgramStatus

    for _ in range(2):
        sb.run(program, inputs)
    times = []
    for _ in range(reps):
        t0 = _now()
        res = sb.run(program, inputs)
        times.append(_now() - t0)
        if res.status is not ProgramStatus.LOADED:
            raise RuntimeError(f"probe {program.name}: {res.status.value}: {res.error}")
    return statistics.median(times)


def profile_backend(
    backend: str,
    kind: str,
    source_dir: Path,
    task_ids: Sequence[str],
    tasks_dir: Path,
    arcgen_dir: Path,
    reps: int = 20,
) -> dict:
    """Per-program load cost and per-input overhead of one backend (1 worker)."""
    from arcjudge.sandbox.backends import make_sandbox
    from arcjudge.sandbox.types import Program
    from arcjudge.verifiers.sources import VerifierSource

    source = VerifierSource(SOURCE_NAME, kind, source_dir)
    fmt = "tuple" if kind == "re-arc" else "list"
    dirs = source.module_dirs
    task_id = task_ids[0]
    program = source.program_for(task_id).program
    assert program is not None
    pairs = task_pairs(tasks_dir, arcgen_dir, task_id)
    one = [pairs[0][0]]
    batch = [g for g, _ in pairs][:256]
    fns = load_functions(source_dir, kind, [task_id], golf_numbers())
    t0 = _now()
    for _ in range(reps):
        fns[task_id](tuple(tuple(r) for r in one[0]) if kind == "re-arc" else one[0])
    raw_one = (_now() - t0) / reps
    trivial = Program(b"def p(g):\n    return g\n", ("p",), dirs, fmt, "trivial")
    import_only = Program(
        b"from dsl import *\n\ndef p(g):\n    return g\n", ("p",), dirs, fmt, "import-dsl"
    )
    out = {"backend": backend, "task": task_id, "raw_one": raw_one}
    with make_sandbox(backend, 1, module_dirs=dirs) as sb:
        out["trivial"] = _median_run(sb, trivial, one, reps)
        if kind == "re-arc":
            out["import_dsl"] = _median_run(sb, import_only, one, reps)
        out["verifier"] = _median_run(sb, program, one, reps)
        out["trivial_batch"] = _median_run(sb, trivial, batch, max(3, reps // 4))
        out["batch"] = len(batch)
    return out


def compile_costs(source_dir: Path, kind: str, task_id: str) -> dict:
    """In-process compile times of what each program load compiles."""
    from arcjudge.verifiers.sources import VerifierSource

    source = VerifierSource(SOURCE_NAME, kind, source_dir)
    program = source.program_for(task_id).program
    assert program is not None
    costs = {"program_bytes": len(program.source), "program_lines": program.source.count(b"\n")}
    t0 = _now()
    for _ in range(20):
        compile(program.source, "program.py", "exec", dont_inherit=True)
    costs["program_compile"] = (_now() - t0) / 20
    if kind == "re-arc":
        dsl = (source_dir / "dsl.py").read_bytes()
        t0 = _now()
        for _ in range(20):
            compile(dsl, "dsl.py", "exec", dont_inherit=True)
        costs["dsl_compile"] = (_now() - t0) / 20
        costs["dsl_lines"] = dsl.count(b"\n")
        # A RE-ARC-sized dsl.py (~3,500 lines): the same text repeated, for its compile cost.
        big = b"\n".join([dsl] * max(1, 3500 // max(1, costs["dsl_lines"])))
        t0 = _now()
        for _ in range(5):
            compile(big, "dsl.py", "exec", dont_inherit=True)
        costs["big_dsl_compile"] = (_now() - t0) / 5
        costs["big_dsl_lines"] = big.count(b"\n")
    return costs


def print_profile(raw: RawResult, runs: list[dict], probes: list[dict], costs: dict) -> None:
    print("\nprofile (where the time goes):")
    print(
        f"  compile in-process: sliced program {costs['program_lines']} lines /"
        f" {costs['program_bytes']} bytes: {1000 * costs['program_compile']:.2f} ms"
    )
    if "dsl_compile" in costs:
        print(
            f"  compile in-process: dsl.py {costs['dsl_lines']} lines:"
            f" {1000 * costs['dsl_compile']:.2f} ms; a {costs['big_dsl_lines']}-line dsl.py"
            f" (RE-ARC size): {1000 * costs['big_dsl_compile']:.1f} ms (paid by every program"
            f" load: nothing is cached between programs)"
        )
    raw_ms = 1000 * raw.seconds / raw.calls
    for p in probes:
        per_program = p["trivial"] - p["raw_one"]
        load = p["verifier"] - p["trivial"] - p["raw_one"]
        per_input = (p["trivial_batch"] - p["trivial"]) / (p["batch"] - 1)
        line = (
            f"  {p['backend']} (1 worker): trivial program on 1 input {1000 * p['trivial']:.2f} ms;"
            f" task {p['task']}'s sliced verifier on 1 input {1000 * p['verifier']:.2f} ms"
            f" (raw call {1000 * p['raw_one']:.2f} ms) -> load cost {1000 * load:.2f} ms"
        )
        if "import_dsl" in p:
            line += f" (of which 'from dsl import *' {1000 * (p['import_dsl'] - p['trivial']):.2f})"
        print(line)
        print(
            f"      per-input overhead {1000 * per_input:.3f} ms (trivial program on"
            f" {p['batch']} inputs {1000 * p['trivial_batch']:.1f} ms)"
        )
        for r in runs:
            if r["backend"] != p["backend"] or r["label"].endswith("warm"):
                continue
            fixed = r["jobs"] * (per_program + max(0.0, load))
            inputs = r["inputs"] * per_input
            need = raw.seconds + fixed + inputs
            harness_ms = 1000 * r["harness_cpu"] / max(1, r["inputs"])
            print(
                f"      {r['label']}: {r['jobs']} programs x"
                f" {1000 * (per_program + max(0.0, load)):.1f} ms = {fixed:.1f} s;"
                f" {r['inputs']} inputs x {1000 * per_input:.3f} ms = {inputs:.1f} s; calls"
                f" (raw) {raw.seconds:.1f} s ({raw_ms:.3f} ms each) -> sandbox work ~{need:.1f}"
                f" s; harness CPU {r['harness_cpu']:.1f} s ({harness_ms:.3f}"
                f" ms per input); machine busy {r['machine_busy']:.1f} s of"
                f" {os.cpu_count()} x {r['process_wall']:.1f} s"
            )
            workers = r["workers"]
            best = max((need + r["harness_cpu"]) / (os.cpu_count() or 1), need / workers)
            print(
                f"      lower bound on wall with {workers} workers on {os.cpu_count()} cores:"
                f" ~{best:.1f} s = {best / raw.seconds:.3f} x raw"
            )
