"""Running sandbox work on a Ray cluster: one local sandbox pool per node.

:class:`RaySandbox` is the shared pool (``pool.py``) over a :class:`RayNodes` transport,
so it is a ``Sandbox`` like any other and every command (validate, score, mutate,
dimensions) runs unchanged on a cluster with ``--executor ray``. The driver (the harness
process) stays the only writer of the result store and the only holder of expected
outputs; what travels is a ``Program`` and a batch of input grids (plain data), put once
into Ray's object store and fetched once per node, and a raw reply back.

On each node with CPUs a :class:`NodePool` actor is pinned (node affinity, not soft) and
lazily starts that node's own sandbox pool (``--backend``: docker where the node has the
daemon and image, else process with ``auto``), sized to the node's CPUs. The driver hands
items to nodes through slots, two per pool worker (one item running, one queued on the
node, so no worker waits for a round trip to the driver). When an actor (its worker
process) or a whole node dies mid-item, the driver re-creates the actor if its node still
lives and runs the item again on a live node: results already returned are kept by the
harness, and the outputs equal an undisturbed run's.
Closing the sandbox (also after Ctrl-C) closes every node pool, then kills the actors;
each pool's workers also die with their actor process (their pipe or attach socket closes).

Ray is optional: ``pip install 'arcjudge[ray]'``. It is imported only when this backend is
used.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arcjudge.sandbox.interface import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.pool import STRONG_PROTECTIONS, PooledSandbox
from arcjudge.sandbox.registry import (
    BackendOptions,
    BackendUnavailable,
    ExecutorOptions,
    backend_factory,
    sandbox_executor,
)
from arcjudge.sandbox.transport import Inputs, Opened, Reply, Transport, WorkerLost
from arcjudge.sandbox.types import (
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
)

__all__ = [
    "NodeSpec",
    "NodeStats",
    "RayNodes",
    "RaySandbox",
    "RayUnavailable",
    "ray_address_default",
]

log = logging.getLogger(__name__)

ATTEMPTS = 4
"""Runs of one item before it is given up as ``infra`` (each after a node or actor loss)."""

_DEPTH = 2
"""Items in flight per pool worker: one running, one queued on its node, so a worker does
not sit idle during the round trip to the driver."""
_REF_CACHE = 4096
_RESPONSE_SLACK = 60.0


class RayUnavailable(BackendUnavailable):
    """Ray is not installed or the cluster cannot be reached; the message says why."""


def ray_address_default() -> str:
    """``auto`` when ``RAY_ADDRESS`` is set (join that cluster), else ``local``.

    ``local`` always starts a fresh single-node Ray instance for the run: a bare
    ``ray.init()`` would also join whatever cluster ``/tmp/ray/ray_current_cluster`` names,
    which a crashed earlier run may have left behind.
    """
    return "auto" if os.environ.get("RAY_ADDRESS") else "local"


@dataclass(frozen=True)
class NodeSpec:
    """The sandbox pool each node runs (the same on every node).

    Attributes:
        backend: The backend each node uses (``auto``, ``process``, ``docker``, ...).
        workers: Pool size per node (``None``: the node's CPUs).
        module_dirs: Directories programs import from; the same paths must exist on every
            node (a shared file system, or the same checkout everywhere).
        docker_runtime: The OCI runtime of docker nodes' containers (``None``: each
            node's ``$ARCJUDGE_DOCKER_RUNTIME``, else its daemon's default).
    """

    backend: str = "auto"
    workers: int | None = None
    module_dirs: tuple[str, ...] = ()
    docker_runtime: str | None = None


class NodePool:
    """The per-node actor: a local sandbox pool, started on first use.

    Plain class; :class:`RayNodes` wraps it with ``ray.remote``. Its methods run in the
    actor's threads (``max_concurrency``), and the pool is thread-safe.
    """

    def __init__(self, spec: NodeSpec) -> None:
        self.spec = spec
        self._box: Sandbox | None = None
        self._lock = threading.Lock()

    def _sandbox(self) -> Sandbox:
        with self._lock:
            if self._box is None:
                spec = self.spec
                box = backend_factory(spec.backend)(
                    BackendOptions(spec.workers, spec.module_dirs, log.warning, spec.docker_runtime)
                )
                box.start()
                self._box = box
            return self._box

    def info(self) -> dict[str, Any]:
        """Start the pool; report the node, the backend and its protections."""
        box = self._sandbox()
        return {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "backend": box.name,
            "size": box.size,
            "protections": box.protections(),
            "runtime": box.runtime(),
            "strong": list(getattr(box, "strong_protections", STRONG_PROTECTIONS)),
        }

    def execute(self, program: Program, inputs: Inputs, limits: Limits, mode: str) -> Reply:
        """Run one item on this node's pool (policy already checked by the driver).

        Returns:
            The supervisor's raw reply (plain data: cheaper to ship than decoded results;
            the driver decodes it), or a decoded result from a backend without raw
            replies (not a ``PooledSandbox``), or an ``infra`` result.
        """
        box = self._sandbox()
        if isinstance(box, PooledSandbox):
            return box.exchange(program, inputs, limits, mode)
        if mode == "generate":
            calls = [c for c in inputs if isinstance(c, GeneratorCall)]
            return box.generate(program, calls, limits, policy=PolicyMode.OFF)
        grids = [g for g in inputs if not isinstance(g, GeneratorCall)]
        return box.run(program, grids, limits, policy=PolicyMode.OFF)

    def execute_variants(
        self,
        program: Program,
        variants: tuple[bytes, ...],
        inputs: list[Grid],
        limits: Limits,
        call_seconds: float,
        shareable: tuple[int, ...] = (),
    ) -> Reply:
        """Run a batch of variants on this node's pool (policy checked by the driver).

        Returns:
            The supervisor's raw reply, or an ``infra`` result (also from a backend
            without batches, not a ``PooledSandbox``: the caller then runs each variant
            alone).
        """
        box = self._sandbox()
        if isinstance(box, PooledSandbox):
            return box.exchange_variants(program, variants, inputs, limits, call_seconds, shareable)
        return ProgramResult(ProgramStatus.INFRA, error=f"{box.name} runs no batches of variants")

    def pid(self) -> int:
        """The actor's process id (tests kill it)."""
        return os.getpid()

    def close(self) -> bool:
        """Stop the pool's workers (containers or processes)."""
        with self._lock:
            box, self._box = self._box, None
        if box is not None:
            box.close()
        return True


@dataclass
class NodeStats:
    """What one node did, for the per-node summary line."""

    node_id: str
    address: str
    cpus: int
    items: int = 0
    seconds: float = 0.0
    failures: int = 0
    lost: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """``node ADDRESS (ID): N items, S s in the sandbox, F failures, L actor losses``."""
        return (
            f"node {self.address} ({self.node_id[:8]}, {self.cpus} CPU): {self.items} items, "
            f"{self.seconds:.1f} s in the sandbox, {self.failures} infra failures, "
            f"{self.lost} actor losses"
        )


@dataclass
class _Node:
    stats: NodeStats
    actor: Any = None
    alive: bool = True
    generation: int = 0


_RayRequest = tuple[
    Any, Any, Limits, str, "tuple[tuple[bytes, ...], float, tuple[int, ...]] | None"
]
"""Object-store references to a program and a batch, the limits, the mode, and for a
batch of variants their sources, call deadline and shareable inputs."""


class RayNodes(Transport[str, _RayRequest]):
    """A pool's transport to :class:`NodePool` actors, one per cluster node with CPUs.

    Slots are node ids, ``_DEPTH`` per pool worker of the node. A lost actor is
    re-created while its node lives; a dead node's slots are dropped, so its items move
    to the other nodes.

    Args:
        ray: The ``ray`` module.
        spec: The pool each node runs.
        address: Ray address (``auto``, ``ray://...``, ``host:port``, ``local``).

    Raises:
        RayUnavailable: If ``address`` is ``host:port`` and nothing listens there.
    """

    attempts = ATTEMPTS
    response_slack = _RESPONSE_SLACK
    exhausted_error = "no node left"

    def __init__(self, ray: Any, spec: NodeSpec, address: str) -> None:
        self._ray = ray
        self.spec = spec
        self.address = address
        self.nodes: dict[str, _Node] = {}
        self._refs: OrderedDict[Any, tuple[Any, Any]] = OrderedDict()
        self._refs_lock = threading.Lock()
        self._nodes_lock = threading.Lock()
        self._we_started_ray = False
        self._actor_class: Any = None
        self._closed = False
        self._check_reachable()

    # ----------------------------------------------------------------- set-up

    def _check_reachable(self) -> None:
        """Fail fast when nothing listens at a ``host:port`` address (Ray waits minutes)."""
        address = self.address
        if address == "auto":
            address = os.environ.get("RAY_ADDRESS", "")
        if not address or address == "local" or "://" in address:
            return
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise RayUnavailable(f"Ray address {address!r}: expected HOST:PORT, auto or local")
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
        except OSError as exc:
            raise RayUnavailable(
                f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
                "'ray start --head' or check the address"
            ) from None

    def _connect(self) -> None:
        ray = self._ray
        if not ray.is_initialized():
            self._check_reachable()
            try:
                ray.init(
                    address=self.address,
                    include_dashboard=False,
                    logging_level=logging.ERROR,
                    log_to_driver=False,
                    configure_logging=True,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise RayUnavailable(
                    f"cannot reach Ray at {self.address or 'local'}: {exc}"
                ) from None
            self._we_started_ray = True
        self._actor_class = ray.remote(NodePool)

    def _make_actor(self, node: _Node) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        workers = self.spec.workers or node.stats.cpus
        node.generation += 1
        return self._actor_class.options(
            num_cpus=0,
            max_concurrency=_DEPTH * workers + 4,
            max_restarts=0,
            name=None,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.stats.node_id, soft=False),
        ).remote(replace(self.spec, workers=workers))

    def open(self) -> Opened[str]:
        """Connect, create one actor per node with CPUs, start their pools.

        Raises:
            RayUnavailable: If Ray cannot be reached or has no live node with CPUs.
        """
        self._connect()
        nodes = [
            n
            for n in self._ray.nodes()
            if n.get("Alive") and int(n.get("Resources", {}).get("CPU", 0)) > 0
        ]
        if not nodes:
            raise RayUnavailable("the Ray cluster has no live node with CPUs")
        for n in sorted(nodes, key=lambda n: n["NodeID"]):
            cpus = int(n["Resources"]["CPU"])
            stats = NodeStats(n["NodeID"], str(n.get("NodeManagerAddress", "?")), cpus)
            node = _Node(stats)
            node.actor = self._make_actor(node)
            self.nodes[stats.node_id] = node
        infos: list[dict[str, Any]] = self._ray.get(
            [n.actor.info.remote() for n in self.nodes.values()]
        )
        slots: list[str] = []
        for node, info in zip(self.nodes.values(), infos, strict=True):
            node.stats.info = info
            slots += [node.stats.node_id] * (_DEPTH * (self.spec.workers or node.stats.cpus))
        # A protection counts only when every node has it.
        keys: set[str] = set().union(*(i["protections"] for i in infos))
        protections = {k: all(i["protections"].get(k, False) for i in infos) for k in keys}
        runtimes = {json.dumps(i["runtime"], sort_keys=True) for i in infos}
        return Opened(
            slots, protections, {"nodes": " | ".join(sorted(runtimes))}, {},
            strong_protections=tuple(infos[0]["strong"]),
        )  # fmt: skip

    # -------------------------------------------------------------- transport

    def _ref(self, key: Any, value: Any) -> Any:
        """An object-store reference for ``value``, put once and reused (LRU bounded)."""
        with self._refs_lock:
            hit = self._refs.get(key)
            if hit is not None:
                self._refs.move_to_end(key)
                return hit[0]
        ref = self._ray.put(value)
        with self._refs_lock:
            self._refs[key] = (ref, value)  # value kept alive: id-based keys stay valid
            while len(self._refs) > _REF_CACHE:
                self._refs.popitem(last=False)
        return ref

    def prepare(self, program: Program, inputs: Inputs, limits: Limits, mode: str) -> _RayRequest:
        """Object-store references to the program and the batch (each put once)."""
        program_ref = self._ref(("program", program), program)
        batch: list[Grid | GeneratorCall] = list(inputs)
        inputs_ref = self._ref(("inputs", tuple(id(x) for x in batch)), batch)
        return program_ref, inputs_ref, limits, mode, None

    def prepare_variants(
        self,
        program: Program,
        variants: Sequence[bytes],
        inputs: Sequence[Grid],
        limits: Limits,
        call_seconds: float,
        shareable: Sequence[int] = (),
    ) -> _RayRequest:
        """As ``prepare``, with the variants' sources, call deadline and shareable inputs."""
        program_ref, inputs_ref, _, _, _ = self.prepare(program, inputs, limits, "transform")
        extra = (tuple(variants), call_seconds, tuple(shareable))
        return program_ref, inputs_ref, limits, "variants", extra

    def send(self, slot: str, request: _RayRequest, timeout: float) -> Reply:
        """Run the item on the slot's node (raises ``WorkerLost`` on actor or node loss)."""
        node = self.nodes[slot]
        generation, actor = node.generation, node.actor
        try:
            program_ref, inputs_ref, limits, mode, variants = request
            if variants is None:
                call = actor.execute.remote(program_ref, inputs_ref, limits, mode)
            else:
                call = actor.execute_variants.remote(program_ref, variants[0], inputs_ref,
                                                     limits, variants[1], variants[2])  # fmt: skip
            reply: Reply = self._ray.get(call, timeout=timeout)
        except Exception as exc:  # actor or node death, object loss, timeout
            if not self._closed:
                self._node_lost(node, generation, exc)
            raise WorkerLost(f"{type(exc).__name__}: {str(exc)[:300]}") from None
        self._count(node.stats, reply)
        return reply

    def recover(self, slot: str, error: WorkerLost) -> str:
        """The slot goes back (``send`` re-created the actor or retired the node)."""
        return slot

    def usable(self, slot: str) -> bool:
        """Whether the slot's node still lives."""
        return self.nodes[slot].alive

    def exhausted(self) -> bool:
        """Whether every node is gone."""
        with self._nodes_lock:
            return not any(n.alive for n in self.nodes.values())

    def _node_lost(self, node: _Node, generation: int, error: BaseException) -> None:
        """The actor died: re-create it if its node still lives, else retire the node."""
        with self._nodes_lock:
            if node.generation != generation or self._closed:
                return  # another thread already handled this loss
            node.stats.lost += 1
            alive = {n["NodeID"] for n in self._ray.nodes() if n.get("Alive")}
            if node.stats.node_id in alive:
                log.warning("ray actor on node %s lost (%s); restarting it",
                            node.stats.address, type(error).__name__)  # fmt: skip
                node.actor = self._make_actor(node)
            else:
                log.warning("ray node %s lost; its items move to other nodes", node.stats.address)
                node.alive = False

    def _count(self, stats: NodeStats, reply: Reply) -> None:
        """Add one item to its node's line (seconds: the supervisor's, without queueing)."""
        if isinstance(reply, dict):
            seconds = float(reply.get("seconds") or 0.0)
            infra = reply.get("status") == ProgramStatus.INFRA.value
        else:
            seconds, infra = reply.seconds, reply.status is ProgramStatus.INFRA
        with self._nodes_lock:
            stats.items += 1
            stats.seconds += seconds
            stats.failures += infra

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        """Close every node's pool, kill the actors, disconnect (if we connected)."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        nodes = list(self.nodes.values())
        pending = []
        for node in nodes:
            if node.actor is not None and node.alive:
                try:
                    pending.append(node.actor.close.remote())
                except Exception:  # the actor may already be gone
                    pass
        if pending:
            try:
                ray.wait(pending, num_returns=len(pending), timeout=60)
            except Exception:
                pass
        for node in nodes:
            if node.actor is not None:
                try:
                    ray.kill(node.actor)
                except Exception:
                    pass
        self._refs.clear()
        if self._we_started_ray and ray.is_initialized():
            ray.shutdown()


class RaySandbox(PooledSandbox):
    """The shared pool over :class:`RayNodes`: items run on one actor per cluster node.

    Args:
        backend: The backend each node uses (``auto``, ``process``, ``docker``, ...).
        address: Ray address (``auto``, ``ray://...``, ``host:port``), or ``local`` (the
            default without ``RAY_ADDRESS``) to start a Ray instance on this machine.
        module_dirs: Directories programs import from; the same paths must exist on every
            node (a shared file system, or the same checkout everywhere).
        workers_per_node: Pool size per node (default: the node's CPUs).
        report: Receives one line per node when the sandbox is closed.
        docker_runtime: The OCI runtime of docker nodes' containers (``None``: each
            node's ``$ARCJUDGE_DOCKER_RUNTIME``, else its daemon's default).

    Raises:
        RayUnavailable: If Ray is not installed, or nothing listens at a ``host:port``
            address.
    """

    name = "ray"

    def __init__(
        self,
        backend: str = "auto",
        address: str | None = None,
        *,
        module_dirs: tuple[str, ...] = (),
        workers_per_node: int | None = None,
        report: Callable[[str], None] | None = None,
        docker_runtime: str | None = None,
    ) -> None:
        try:
            import ray
        except ImportError:
            raise RayUnavailable(
                "the ray executor needs Ray: pip install 'arcjudge[ray]' (or pip install ray)"
            ) from None
        self.spec = NodeSpec(backend, workers_per_node, tuple(module_dirs), docker_runtime)
        self.address = address or ray_address_default()
        self.report = report
        self._nodes = RayNodes(ray, self.spec, self.address)
        super().__init__(self._nodes)

    def node_stats(self) -> list[NodeStats]:
        """Per-node counts so far (node id order)."""
        return [n.stats for n in self._nodes.nodes.values()]

    def close(self) -> None:
        """Close every node's pool, kill the actors, disconnect; report per node."""
        with self._lock:
            if self._closed:
                return
        super().close()
        if self.report is not None:
            for stats in self.node_stats():
                self.report(stats.line())


DOCKER_RUNTIME_BACKENDS = ("docker", "auto")
"""The backends whose nodes take an OCI runtime (``--docker-runtime``)."""


@sandbox_executor("ray")
def ray_executor(executor: ExecutorOptions, options: BackendOptions) -> Sandbox:
    """The backend's pool on every node of a Ray cluster (:class:`RaySandbox`).

    Raises:
        RayUnavailable: If Ray is not installed or the cluster cannot be reached.
    """
    runtime = None
    if executor.backend in DOCKER_RUNTIME_BACKENDS:
        from arcjudge.sandbox.docker_daemon import requested_runtime

        runtime = requested_runtime(options.docker_runtime)
    return RaySandbox(
        executor.backend,
        executor.address,
        module_dirs=options.module_dirs,
        workers_per_node=options.workers,
        report=executor.report,
        docker_runtime=runtime,
    )
