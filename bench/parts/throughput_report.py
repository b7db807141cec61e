"""``throughput.py``'s tables, overheads, targets and notes."""

from __future__ import annotations

import statistics

from parts.throughput_modes import Context, Measurement
from parts.throughput_overheads import Overheads

TARGET_PER_PROGRAM_MS = 20.0
TARGET_PER_INPUT_MS = 0.5
TARGET_SPEEDUP = 1.5
TARGET_VS_DOCKER_RUN = 20.0
TARGET_COLD_START = 3.0


def print_workload(ctx: Context) -> None:
    wl = ctx.workload
    sizes = [len(g) * len(g[0]) for grids in wl.inputs for g in grids]
    print(
        f"workload: {len(wl.programs)} programs, {wl.n_inputs} inputs "
        f"(mean {statistics.mean(sizes):.0f} cells), {len(wl.jobs)} jobs of <= {wl.chunk} inputs"
    )


def print_raw_profile(ctx: Context) -> None:
    print("\nraw time per call, by program (ms):")
    wl = ctx.workload
    cells = []
    for i, prog in enumerate(wl.programs):
        times = [ctx.raw_call_seconds[(i, k)] for k in range(len(wl.inputs[i]))]
        if times:
            cells.append(f"{prog.name:<16} {prog.tier:<9} {1000 * statistics.mean(times):7.3f}")
    half = (len(cells) + 1) // 2
    right_column = cells[half:] + [""] * (2 * half - len(cells))
    for left, right in zip(cells[:half], right_column, strict=True):
        print(f"  {left}    {right}")


def print_table(ctx: Context, results: list[Measurement]) -> None:
    raw = ctx.raw_rate or float("nan")
    print()
    header = (
        f"{'mode':<22} {'measured':>9} {'seconds':>9} {'exec/s':>9} {'x raw':>7}"
        f" {'cold start':>10} {'exec/s incl. cold':>17} {'est. s for all':>14}"
    )
    print(header)
    print("-" * len(header))
    for m in results:
        cold = f"{m.cold_start:.3f}" if m.cold_start is not None else "-"
        cold_rate = f"{m.cold_rate:.0f}" if m.cold_rate is not None else "-"
        est = f"{m.full_seconds:.1f}" + ("*" if m.extrapolated else "")
        print(
            f"{m.mode:<22} {m.executions:>9} {m.seconds:>9.2f} {m.rate:>9.0f} {m.rate / raw:>7.3f}"
            f" {cold:>10} {cold_rate:>17} {est:>14}"
        )
    if any(m.extrapolated for m in results):
        print("* extrapolated from a sample")
    for m in results:
        for note in m.notes:
            print(f"  {m.mode}: {note}")


def print_overheads(ov: Overheads) -> None:
    q = statistics.quantiles(ov.per_program_samples, n=10)
    print(
        f"\n{ov.backend} overheads (1 worker, trivial program):\n"
        f"  per-program: {1000 * ov.per_program:.2f} ms "
        f"(median of {len(ov.per_program_samples)} runs on 1 input, "
        f"p10 {1000 * q[0]:.2f} / p90 {1000 * q[-1]:.2f} ms; raw call {1e6 * ov.raw_call:.1f} us)\n"
        f"  per-input:   {1000 * ov.per_input:.4f} ms "
        f"((run of {ov.batch_size} inputs {1000 * ov.batch_total:.1f} ms, median of 5"
        f" - raw {1000 * ov.batch_raw:.1f} ms) / {ov.batch_size}); "
        f"{1000 * ov.per_input_net:.4f} ms without the per-program part"
    )
    worker = "n/a" if ov.worker_cpu is None else f"{1e6 * ov.worker_cpu:.1f} us"
    print(
        f"  CPU per input in that run: worker processes (supervisor, programs) {worker}, "
        f"this process {1e6 * ov.harness_cpu:.1f} us (steadier than wall on a busy machine)"
    )


def print_targets(ctx: Context, results: list[Measurement], overheads: list[Overheads]) -> bool:
    rows: list[tuple[str, str, str, bool | None]] = []
    for ov in overheads:
        rows.append(
            (
                f"{ov.backend} per-program overhead",
                f"<= {TARGET_PER_PROGRAM_MS:g} ms",
                f"{1000 * ov.per_program:.2f} ms",
                1000 * ov.per_program <= TARGET_PER_PROGRAM_MS,
            )
        )
        rows.append(
            (
                f"{ov.backend} per-input overhead",
                f"<= {TARGET_PER_INPUT_MS:g} ms",
                f"{1000 * ov.per_input:.4f} ms",
                1000 * ov.per_input <= TARGET_PER_INPUT_MS,
            )
        )
    by_mode = {m.mode: m for m in results}
    for m in results:
        if m.mode.endswith("-N") and ctx.raw_rate:
            ratio = m.rate / ctx.raw_rate
            rows.append(
                (
                    f"{m.mode} throughput ({ctx.args.workers} workers)",
                    f">= {TARGET_SPEEDUP:g}x raw",
                    f"{ratio:.2f}x raw",
                    ratio >= TARGET_SPEEDUP,
                )
            )
        if m.mode.endswith("-N") and m.cold_start is not None:
            rows.append(
                (
                    f"{m.mode} pool cold start ({ctx.args.workers} workers)",
                    f"<= {TARGET_COLD_START:g} s",
                    f"{m.cold_start:.2f} s",
                    m.cold_start <= TARGET_COLD_START,
                )
            )
    naive = by_mode.get("docker-run-per-program")
    notes: list[str] = []
    if naive is not None and "docker-N" in by_mode:
        pooled = by_mode["docker-N"]
        ratio = pooled.rate / naive.rate
        rows.append(
            (
                "docker-N vs docker-run-per-program",
                f">= {TARGET_VS_DOCKER_RUN:g}x",
                f"{ratio:.2f}x",
                ratio >= TARGET_VS_DOCKER_RUN,
            )
        )
        notes.extend(docker_run_break_even(ctx, naive, pooled))
    image = by_mode.get("raw-in-image")
    if image is not None:
        for name in ("docker-1", "docker-N"):
            if name in by_mode:
                notes.append(
                    f"{name} is {by_mode[name].rate / image.rate:.2f}x raw-in-image (the same"
                    f" interpreter as its workers; raw-in-image is {image.rate / ctx.raw_rate:.2f}x"
                    " raw)"
                )
    print("\ntargets:")
    ok = True
    for what, target, got, passed in rows:
        verdict = "PASS" if passed else "MISS"
        ok = ok and bool(passed)
        print(f"  {what:<44} {target:<14} {got:<14} {verdict}")
    if not rows:
        print("  (none measured)")
    for note in notes:
        print(f"  note: {note}")
    return ok


def docker_run_break_even(ctx: Context, naive: Measurement, pooled: Measurement) -> list[str]:
    """How the naive-vs-pooled ratio depends on the job size, from the measured overhead.

    The naive time is (time of all calls) + jobs x (per-container overhead), so the ratio
    grows as jobs shrink; with the pooled time held fixed, 20x needs jobs of at most
    ``n * o / (20 * T_pooled - T_calls)`` inputs.
    """
    n = ctx.workload.n_inputs
    jobs = len(ctx.workload.jobs)
    overhead = naive.per_job_overhead or 0.0
    compute = naive.full_seconds - jobs * overhead
    need = TARGET_VS_DOCKER_RUN * pooled.full_seconds - compute
    lines = [
        f"docker-run-per-program = calls {compute:.1f} s + {jobs} jobs x {overhead:.3f} s "
        f"container overhead; docker-N {pooled.full_seconds:.1f} s"
    ]
    if overhead > 0 and need > 0:
        lines.append(
            f"{TARGET_VS_DOCKER_RUN:g}x would need jobs of <= {n * overhead / need:.1f} inputs "
            f"(these are {ctx.workload.chunk}); at 1 input per container the ratio would be "
            f"~{(compute + n * overhead) / pooled.full_seconds:.0f}x"
        )
    return lines
