"""Backends by name: the decorator, installed packages' entry points, and the shared pool.

The toy backends here never run a program: they answer with canned results, so nothing
untrusted runs in the test process.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

import pytest

from arcjudge import cli
from arcjudge.sandbox import (
    ENTRY_POINT_GROUP,
    BackendOptions,
    BackendUnavailable,
    Job,
    PooledSandbox,
    Program,
    ProgramResult,
    ProgramStatus,
    Sandbox,
    backend_names,
    sandbox_backend,
)
from arcjudge.sandbox.backends import make_sandbox
from arcjudge.sandbox.process import ProcessSandbox
from arcjudge.sandbox.ray_pool import NodePool, NodeSpec
from arcjudge.sandbox.registry import unregister
from arcjudge.sandbox.transport import LocalWorkers, WorkerLost
from arcjudge.sandbox.types import VERIFIER_LIMITS, GeneratorCall, RunResult, Status

PROGRAM = Program(b"def transform(g):\n    return g\n")


class ToySandbox:
    """A ``Sandbox`` that answers every input with ``ok`` and a 1x1 grid, running nothing."""

    name = "toy"

    def __init__(self, options: BackendOptions) -> None:
        self.options = options
        self.closed = False

    @property
    def size(self) -> int:
        return self.options.workers or 1

    def start(self) -> None:
        if self.closed:
            raise RuntimeError("sandbox is closed")

    def _answer(self, n: int) -> ProgramResult:
        results = tuple(RunResult(k, Status.OK, ((7,),)) for k in range(n))
        return ProgramResult(ProgramStatus.LOADED, results)

    def run(self, program, inputs, limits=VERIFIER_LIMITS, *, policy=None) -> ProgramResult:
        return self._answer(len(inputs))

    def generate(self, program, calls, limits=VERIFIER_LIMITS, *, policy=None) -> ProgramResult:
        return self._answer(len(calls))

    def map(
        self, jobs: Iterable[Job], *, mode: str = "transform"
    ) -> Iterator[tuple[int, ProgramResult]]:
        for index, job in enumerate(jobs):
            yield index, self._answer(len(job.inputs))

    def protections(self) -> dict[str, bool]:
        return {"canned_answers": True}

    def runtime(self) -> dict[str, str]:
        return {"backend": self.name}

    def runtime_fingerprint(self) -> str:
        return '{"backend":"toy"}'

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> ToySandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


@pytest.fixture
def toy_backend():
    factory = sandbox_backend("toy")(ToySandbox)
    yield factory
    unregister("toy")


def test_a_decorated_backend_comes_from_make_sandbox(toy_backend):
    assert "toy" in backend_names()
    with make_sandbox("toy", 3, module_dirs=("/m",)) as sb:
        assert isinstance(sb, ToySandbox) and isinstance(sb, Sandbox)
        assert sb.options == BackendOptions(3, ("/m",), None, None)
        assert sb.size == 3
        assert sb.run(PROGRAM, [((1,),)]).results[0].grid == ((7,),)
    assert sb.closed
    # --docker-runtime is the docker backend's, not another's
    with pytest.raises(
        BackendUnavailable, match=r"only the docker backend has one .this is the toy backend"
    ):
        make_sandbox("toy", docker_runtime="runsc")


def test_the_builtin_backends_satisfy_the_interface():
    assert backend_names()[:3] == ("auto", "process", "docker")
    sb = make_sandbox("process", 1)
    try:
        assert isinstance(sb, ProcessSandbox) and isinstance(sb, Sandbox)
    finally:
        sb.close()


def test_a_name_is_registered_once(toy_backend):
    with pytest.raises(ValueError, match="already registered"):
        sandbox_backend("toy")(lambda options: ToySandbox(options))
    with pytest.raises(ValueError, match="non-empty"):
        sandbox_backend(" ")


def test_an_unknown_backend_names_the_choices():
    with pytest.raises(BackendUnavailable) as info:
        make_sandbox("no-such-backend")
    assert str(info.value) == (
        "unknown backend 'no-such-backend' (choose from " + ", ".join(backend_names()) + ")"
    )
    assert str(info.value).startswith("unknown backend 'no-such-backend' (choose from auto, ")


def _install(root: Path, dist: str, module: str, body: str, entry: str) -> None:
    """A package installed on ``root``: its module and a dist-info with one entry point."""
    (root / f"{module}.py").write_text(textwrap.dedent(body))
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry}\n")


TOY_PACKAGE = """
    from arcjudge.sandbox.types import ProgramResult, ProgramStatus

    class Installed:
        name = "installed"
        def __init__(self, options):
            self.options = options
        def run(self, program, inputs, limits=None, *, policy=None):
            return ProgramResult(ProgramStatus.LOAD_ERROR, error="installed backend")
        def close(self):
            pass

    def make(options):
        return Installed(options)
"""


def test_an_installed_package_adds_a_backend(tmp_path, monkeypatch):
    _install(tmp_path, "arcjudge_toy", "arcjudge_toy_backend", TOY_PACKAGE,
             "installed = arcjudge_toy_backend:make")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "installed" in backend_names()
        sb = make_sandbox("installed", 2)
        assert type(sb).__module__ == "arcjudge_toy_backend"
        assert sb.options.workers == 2
        assert sb.run(PROGRAM, []).error == "installed backend"
        # the command line offers it too (its choices are read from the registry)
        args = cli._parser().parse_args(["run", "--backend", "installed", "--task", "t", "x"])
        assert args.backend == "installed"
    finally:
        unregister("installed")


def test_a_broken_installed_backend_is_a_clear_error(tmp_path, monkeypatch):
    _install(tmp_path, "arcjudge_broken", "arcjudge_broken_backend", "raise ImportError('x')\n",
             "broken = arcjudge_broken_backend:make")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(BackendUnavailable, match=r"backend 'broken' .* cannot be loaded"):
        make_sandbox("broken")


def test_a_ray_node_runs_a_backend_that_is_not_a_pool(toy_backend):
    node = NodePool(NodeSpec("toy", 2))
    assert node.info()["strong"] and node.info()["backend"] == "toy"
    result = node.execute(PROGRAM, [((1,),), ((2,),)], VERIFIER_LIMITS, "transform")
    assert isinstance(result, ProgramResult) and len(result.results) == 2
    result = node.execute(PROGRAM, [GeneratorCall(seed=1)], VERIFIER_LIMITS, "generate")
    assert isinstance(result, ProgramResult) and len(result.results) == 1
    assert node.close()


class FakeWorker:
    """A worker whose supervisor is always lost (nothing runs)."""

    def __init__(self) -> None:
        self.protections = {"network_namespace": True}
        self.runtime = {"python": "3"}
        self.hints: dict[str, str] = {}
        self.closed = False

    def request(self, message, timeout):
        raise WorkerLost("gone")

    def close(self) -> None:
        self.closed = True


def test_a_pool_that_cannot_start_every_worker_stops_those_it_started():
    made: list[FakeWorker] = []

    def spawn(slot: int) -> FakeWorker:
        if len(made) == 2:
            raise WorkerLost("no more")
        made.append(FakeWorker())
        return made[-1]

    sb = PooledSandbox(LocalWorkers(spawn, 3), 3)
    with pytest.raises(BackendUnavailable, match="could not start a worker: no more"):
        sb.start()
    assert len(made) == 2 and all(w.closed for w in made)
    sb.close()


def test_a_worker_that_cannot_be_replaced_is_infra_not_an_exception():
    made: list[FakeWorker] = []

    def spawn(slot: int) -> FakeWorker:
        if made:
            raise WorkerLost("cannot start another")
        made.append(FakeWorker())
        return made[-1]

    with PooledSandbox(LocalWorkers(spawn, 1), 1) as sb:
        result = sb.run(PROGRAM, [((1,),)])
        assert result.status is ProgramStatus.INFRA
        assert "no replacement: cannot start another" in (result.error or "")
        # the capacity is gone: later jobs fail at once rather than wait forever
        assert sb.run(PROGRAM, [((1,),)]).error == "no worker left"
    assert made[0].closed


def test_workers_get_distinct_cpu_slots_and_a_replacement_takes_the_lost_ones():
    slots: list[int] = []

    def spawn(slot: int) -> FakeWorker:
        slots.append(slot)
        return FakeWorker()

    workers = LocalWorkers(spawn, 3)
    opened = workers.open()
    assert sorted(slots) == [0, 1, 2]
    lost = opened.slots[1]  # its slot: the second one started
    fresh = workers.recover(lost, WorkerLost("gone"))
    assert fresh is not None and slots[-1] == slots[1]
    # a second loss of the same slot's worker: the slot is free again, not doubled up
    assert workers.recover(fresh, WorkerLost("gone")) is not None and slots[-1] == slots[1]
    workers.close()


class OutOfMemoryWorker(FakeWorker):
    """A worker whose container its program killed by filling its memory (docker, gVisor)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    def request(self, message, timeout):
        from arcjudge.sandbox.docker_worker import out_of_memory

        self.requests += 1
        raise WorkerLost("container gone", outcome=out_of_memory(message))


def test_a_worker_lost_to_its_programs_memory_is_that_programs_memory_failure():
    made: list[OutOfMemoryWorker] = []

    def spawn(slot: int) -> OutOfMemoryWorker:
        made.append(OutOfMemoryWorker())
        return made[-1]

    with PooledSandbox(LocalWorkers(spawn, 1), 1) as sb:
        result = sb.run(PROGRAM, [((1,),), ((2,),)])
        assert result.status is ProgramStatus.LOADED  # never infra: the program's doing
        assert [r.status for r in result.results] == [Status.MEMORY, Status.MEMORY]
        assert "ran out of memory" in (result.results[0].error or "")
        # sent once (not retried: it would kill the next container too), worker replaced
        assert [w.requests for w in made] == [1, 0] and made[0].closed
