"""One ``arcjudge validate`` run of ``validate_full.py``, in a child process of its own.

Through the API (``common.harness``), so the jobs and inputs sent to the sandbox can be
counted and the harness profiled; in a fresh interpreter, so its peak RSS is the
harness's alone.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from common.measure import container_cpu_seconds, machine_busy_seconds
from common.measure import now as _now
from parts.validate_timeline import Timeline

SCRIPT = Path(__file__).resolve().parents[1] / "validate_full.py"
SOURCE_NAME = "synthetic"


def child_validate(spec: dict) -> dict:
    """Run one validation as ``arcjudge validate`` would; report wall, CPU and peak RSS."""
    from arcjudge.sandbox.backends import make_sandbox
    from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
    from common.harness import ResultStore, ValidateConfig, Validator, write_outputs

    t_begin = _now()
    source = VerifierSource(SOURCE_NAME, spec["kind"], spec["source_dir"])
    samples = int(spec.get("samples", 0))
    generator = GeneratorSource("arc-gen", spec["gen_dir"]) if samples else None
    config = ValidateConfig(
        Path(spec["tasks_dir"]),
        sources=(source,),
        arcgen_dir=Path(spec["arcgen_dir"]),
        generator=generator,
        samples=samples,
        chunk=spec["chunk"],
    )
    module_dirs = source.module_dirs + (generator.module_dirs if generator else ())
    store = ResultStore(spec["store"])
    counted = {"jobs": 0, "inputs": 0}
    timeline = Timeline()
    try:
        sb = make_sandbox(spec["backend"], spec["workers"], module_dirs=module_dirs)
        with sb:
            t0 = _now()
            sb.start()
            t_started = _now()
            timeline.install(sb)
            inner_run = sb.run
            lock = threading.Lock()
            # --cprofile: CPU time (thread_time) per thread, so waiting does not count; the
            # harness calls the sandbox from a thread pool, each thread gets its profiler.
            profiling = bool(spec.get("cprofile"))
            thread_profilers: list[cProfile.Profile] = []
            local = threading.local()

            def counting_run(program, inputs, *args, **kwargs):  # count the work items
                with lock:
                    counted["jobs"] += 1
                    counted["inputs"] += len(inputs)
                if not profiling:
                    return inner_run(program, inputs, *args, **kwargs)
                prof = getattr(local, "profiler", None)
                if prof is None:
                    prof = local.profiler = cProfile.Profile(time.thread_time)
                    with lock:
                        thread_profilers.append(prof)
                return prof.runcall(inner_run, program, inputs, *args, **kwargs)

            inner_map = sb.map

            def counting_map(jobs, *args, **kwargs):  # if the harness sends batches instead
                def counted_jobs():
                    for job in jobs:
                        if kwargs.get("mode", "transform") == "transform":  # verifiers only
                            with lock:
                                counted["jobs"] += 1
                                counted["inputs"] += len(job.inputs)
                        yield job

                return inner_map(counted_jobs(), *args, **kwargs)

            sb.run = counting_run  # type: ignore[method-assign]
            sb.map = counting_map  # type: ignore[method-assign]
            validator = Validator(config, sb, store)
            profiler = cProfile.Profile(time.thread_time) if profiling else None
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
            if profiler:
                profiler.enable()
            timeline.start()
            validator.run()
            recorded = timeline.stop()
            if profiler:
                profiler.disable()
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            t_run = _now()
            containers = [
                getattr(w, "container", None) for w in getattr(sb, "workers", [])
            ]  # docker: read the containers' CPU time before they go
            container_cpu = [container_cpu_seconds(c.id) for c in containers if c is not None]
        t_closed = _now()
        manifest = write_outputs(validator, Path(spec["out"]))
        t_end = _now()
    finally:
        store.close()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "wall": t_end - t_begin,
        "setup": t0 - t_begin,
        "start": t_started - t0,
        "run": t_run - t_started,
        "close": t_closed - t_run,
        "outputs": t_end - t_closed,
        "harness_cpu": me.ru_utime + me.ru_stime,
        "harness_cpu_run": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime),
        "children_cpu": kids.ru_utime + kids.ru_stime,
        "sandbox_cpu": (
            sum(container_cpu)  # type: ignore[arg-type]
            if container_cpu and None not in container_cpu
            else (kids.ru_utime + kids.ru_stime if spec["backend"] == "process" else None)
        ),
        "maxrss_bytes": me.ru_maxrss * 1024,
        "verdicts": dict(manifest.per_source[SOURCE_NAME]),
        "jobs": counted["jobs"],
        "inputs": counted["inputs"],
        "sample_jobs": sum(1 for j in recorded["jobs"] if j[2] == "generate"),
        "samples_ok": sum((t.generator or {}).get("ok", 0) for t in manifest.tasks.values()),
        "timeline": recorded,
    }
    if profiler:
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        for prof in thread_profilers:
            stats.add(prof)
        stats.sort_stats("tottime").print_stats(30)
        result["cprofile"] = text.getvalue()
    return result


def spawn_validate(spec: dict, work: Path) -> dict:
    """Run ``child_validate`` in a fresh interpreter; add machine-wide CPU and wall."""
    spec_path = work / f"spec-{spec['label']}.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ)
    if spec.get("pythonpath"):  # --baseline-src: the harness of another checkout
        env["PYTHONPATH"] = spec["pythonpath"]
    busy0, t0 = machine_busy_seconds(), _now()
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--child", str(spec_path)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    busy1, t1 = machine_busy_seconds(), _now()
    if proc.returncode != 0:
        raise RuntimeError(f"validate child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["machine_busy"] = busy1 - busy0
    result["process_wall"] = t1 - t0
    return result


def validate_specs(
    args: argparse.Namespace, backends: list[str], work: Path, paths: dict[str, Path]
) -> list[dict]:
    """The validate runs to make, as ``child_validate`` specs (stale stores removed).

    Per backend a cold run (``fresh``: its store removed before each repeat), with
    ``--baseline-src`` the same cold run on that checkout's harness just before it, a warm one
    on the filled store unless ``--no-warm``, a cold one at ``--also-chunk``; then the
    ``--cprofile`` run (process backend). ``paths`` names ``source_dir``, ``tasks_dir``,
    ``arcgen_dir`` and (with ``--samples``) ``gen_dir``.
    """
    specs: list[dict] = []
    for backend in backends:
        store = work / f"store-{backend}" / "cache.sqlite"
        if store.parent.exists():
            shutil.rmtree(store.parent)
        base = {
            "kind": args.kind,
            "source_dir": str(paths["source_dir"]),
            "tasks_dir": str(paths["tasks_dir"]),
            "arcgen_dir": str(paths["arcgen_dir"]),
            "backend": backend,
            "workers": args.workers,
            "store": str(store),
            "out": str(work / f"out-{backend}"),
            "chunk": args.chunk,
            "samples": args.samples,
            "gen_dir": str(paths["gen_dir"]) if args.samples else "",
        }
        name = f"validate {backend}-{args.workers} chunk {args.chunk}"
        if args.baseline_src:  # the same run on the baseline's harness, just before
            before = work / f"store-{backend}-base" / "cache.sqlite"
            if before.parent.exists():
                shutil.rmtree(before.parent)
            specs.append(
                {
                    **base,
                    "store": str(before),
                    "out": str(work / f"out-{backend}-base"),
                    "label": f"{name} base",
                    "fresh": True,
                    "baseline": True,
                    "pythonpath": str(Path(args.baseline_src).resolve()),
                }
            )
        specs.append({**base, "label": name, "fresh": True})
        if not args.no_warm:
            specs.append({**base, "label": f"{name} warm"})
        if args.also_chunk:
            specs.append(
                {
                    **base,
                    "chunk": args.also_chunk,
                    "store": str(work / f"store-{backend}-chunk" / "cache.sqlite"),
                    "out": str(work / f"out-{backend}-chunk"),
                    "label": f"validate {backend}-{args.workers} chunk {args.also_chunk}",
                    "fresh": True,
                }
            )
    if args.cprofile:
        store = work / "store-cprofile" / "cache.sqlite"
        if store.parent.exists():
            shutil.rmtree(store.parent)
        specs.append(
            {
                **specs[0],
                "backend": "process",
                "store": str(store),
                "out": str(work / "out-cprofile"),
                "label": f"validate process-{args.workers} chunk {args.chunk} cProfile",
                "cprofile": True,
                "fresh": True,
            }
        )
    return specs
