"""The PotARCin benchmark as an inspect_ai task: ``inspect eval arcjudge/potarcin``.

Installed with ``pip install 'arcjudge[inspect]'``, this module is inspect_ai's entry point
for the ``arcjudge`` package (``[project.entry-points.inspect_ai]``), so
``inspect eval arcjudge/potarcin --model PROVIDER/MODEL -T instances=I -T prompts=P`` runs:

* dataset: the prompts of ``dimensions prompts`` (one sample per instance: id
  ``TASK_ID/DIMENSION``, the chat messages as input, ``task_id`` and ``dimension`` as
  metadata; no hidden key reaches the sample);
* solver: ``generate()``, one model call per sample (or, with ``replay=REPLIES.jsonl``,
  the replies of a replies file played back instead: the bundled sample's canned
  replies, or an earlier run's, through inspect without a model call);
* generation settings: the study's, temperature 1.0 and low reasoning effort, and a
  thinking budget when one is given (:data:`STUDY_TEMPERATURE`,
  :data:`STUDY_REASONING_EFFORT`; ``-T temperature=null`` or ``-T
  reasoning_effort=null`` leaves a setting to the provider), as the task's
  ``GenerateConfig``: inspect records it in the log (``plan.config``) and
  ``replies-from-inspect`` writes it, with each sample's token usage, on the replies;
* scorer (:func:`arcjudge_rules`): each reply graded by arcjudge's own grading
  (:class:`~arcjudge.harness.dimensions.reply_grader.ReplyGrader`: ``dimensions score
  --replies`` on that one reply, every verifier call and every Definition program in
  arcjudge's sandbox through its result store), one sandbox and store per task, opened at
  the first reply and closed when the run ends; the score is 1 or 0, ``answer`` says how
  the reply was read, ``explanation`` why it failed, ``metadata`` holds the item's detail;
* epochs are runs: the :func:`pooled` reducer keeps each sample's passes and runs, so the
  metrics pool over runs the way ``dimensions score`` does;
* metrics: per dimension, accuracy (:func:`dimension_accuracy`), the Wilson 95% interval
  (:func:`dimension_ci95`) and the number of items (:func:`dimension_items`), the numbers
  of ``summary.json``'s ``models.MODEL.dimensions``.

``arcjudge dimensions replies-from-inspect LOG --out replies.jsonl`` turns the log into the
replies file ``dimensions score`` grades, for the full statistics and report.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio.to_thread
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    Value,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from arcjudge.errors import InputError
from arcjudge.harness.core.jsonl import json_value
from arcjudge.harness.dimensions.build import DEFAULT_MIN_DISTANCE, EDIT_MAX_DISTANCE
from arcjudge.harness.dimensions.grading import DimensionScoreConfig, read_instances
from arcjudge.harness.dimensions.prompts import Prompt, read_prompts, render_prompts
from arcjudge.harness.dimensions.records import DimensionItem, read_build_repeats
from arcjudge.harness.dimensions.reply_grader import ReplyGrader
from arcjudge.harness.dimensions.statistics import proportion
from arcjudge.sandbox.types import Limits
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension

__all__ = [
    "REASONING_EFFORTS",
    "STUDY_REASONING_EFFORT",
    "STUDY_TEMPERATURE",
    "arcjudge_rules",
    "dimension_accuracy",
    "dimension_ci95",
    "dimension_items",
    "generation_config",
    "pooled",
    "potarcin",
    "read_prompt_samples",
    "read_replay",
    "render_prompt_samples",
    "replay_solver",
]

_log = logging.getLogger(__name__)

STUDY_TEMPERATURE = 1.0
"""The study's sampling temperature (where the API allows one)."""

STUDY_REASONING_EFFORT = "low"
"""The study's reasoning effort (for the models that take one)."""

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""The reasoning efforts inspect_ai's ``GenerateConfig`` takes."""


# ---------------------------------------------------------------- dataset


def _message(data: Mapping[str, str], where: str) -> ChatMessage:
    role, content = data["role"], data["content"]
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "user":
        return ChatMessageUser(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    raise InputError(f"{where}: unknown message role {str(role)[:20]!r}")


def _sample(prompt: Prompt) -> Sample:
    """A prompt of ``dimensions prompts`` as a sample (no instance key is in a prompt)."""
    where = f"prompt {prompt.id}"
    return Sample(
        input=[_message(m, where) for m in prompt.messages],
        id=prompt.id,
        metadata={"task_id": prompt.task_id, "dimension": str(prompt.dimension)},
    )


def read_prompt_samples(path: Path) -> list[Sample]:
    """The samples of a prompts file (``dimensions prompts``), in its order.

    A sample has the prompt's id (``TASK_ID/DIMENSION``), its chat messages as input, and
    its task and dimension as metadata (``model_visible``, what the messages were rendered
    from, stays out).

    Raises:
        InputError: When the file is not a prompts file.
    """
    return [_sample(p) for p in read_prompts(path)]


def render_prompt_samples(instances: Path, tasks: Path) -> list[Sample]:
    """The samples of the instances' prompts, rendered as ``dimensions prompts`` does.

    Raises:
        InputError: For unreadable instances or tasks.
    """
    return [_sample(p) for p in render_prompts(read_instances(instances).values(), tasks)]


def _dimensions(names: str | Sequence[str] | None) -> set[str] | None:
    if names is None:
        return None
    listed = names.split(",") if isinstance(names, str) else list(names)
    chosen = {str(n).strip().lower() for n in listed if str(n).strip()}
    unknown = sorted(chosen - set(BUILT_DIMENSIONS))
    if unknown:
        raise InputError(f"unknown dimension(s): {', '.join(unknown)}")
    return chosen


# --------------------------------------------------------------- grading


class _Grading:
    """A :class:`ReplyGrader` used from one thread of its own (its store is SQLite)."""

    def __init__(self, grader: ReplyGrader) -> None:
        self.grader = grader
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _thread(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="arcjudge-grading")
                _OPEN.add(self)
            return self._executor

    async def grade(self, reply_id: str, model: str, run: str, reply: str) -> DimensionItem:
        future = self._thread().submit(self.grader.grade, reply_id, model, run, reply)
        return await anyio.to_thread.run_sync(future.result)

    def close(self) -> None:
        """Close the grader's sandbox and store in its thread; the next reply reopens them."""
        with self._lock:
            executor, self._executor = self._executor, None
            _OPEN.discard(self)
        if executor is not None:
            try:
                executor.submit(self.grader.close).result()
            finally:
                executor.shutdown()


_OPEN: weakref.WeakSet[_Grading] = weakref.WeakSet()
"""Gradings with a thread (and perhaps a sandbox) open."""


def _close_all() -> None:
    for grading in list(_OPEN):
        grading.close()


atexit.register(_close_all)


@hooks(name="arcjudge_sandboxes", description="Closes the sandboxes of arcjudge's scorers.")
class _CloseSandboxes(Hooks):
    """Closes every grading's sandbox and store when an eval run ends."""

    async def on_run_end(self, data: RunEnd) -> None:
        """Close them (a later reply opens its grading's sandbox again)."""
        await anyio.to_thread.run_sync(_close_all)


def _grader(
    instances: str,
    backend: str,
    workers: int | None,
    store: str | None,
    wall: float,
    min_distance: float,
    strict_generation: bool,
    exclude_arcgen: bool,
    attempts: int,
    definition_samples: int | None,
) -> ReplyGrader:
    try:
        limits = Limits(wall_seconds=float(wall))
    except ValueError as exc:
        raise InputError(f"wall={wall!r}: {exc}") from None
    if not 0 <= float(min_distance) < 1:
        raise InputError(f"min_distance={min_distance!r}: must be in [0, 1)")
    if int(attempts) < 1:
        raise InputError(f"attempts={attempts!r}: must be >= 1")
    config = DimensionScoreConfig(
        instances_file=Path(instances),
        min_distance=float(min_distance),
        edit_max_distance=EDIT_MAX_DISTANCE,
        exclude_arcgen=bool(exclude_arcgen),
        strict_generation=bool(strict_generation),
        verifier_limits=limits,
        attempts=int(attempts),
        definition_samples=None if definition_samples is None else int(definition_samples),
    )
    return ReplyGrader(
        config,
        backend=backend,
        workers=workers,
        store=Path(store) if store else None,
        warn=_log.warning,
    )


def _score(item: DimensionItem) -> Score:
    detail = dict(item.detail)
    if item.dimension is Dimension.DEFINITION:  # "program" names the one-line file's line
        detail.pop("program", None)
    return Score(
        value=1.0 if item.passed else 0.0,
        answer=item.how,
        explanation=item.reason or "passed",
        metadata={"task_id": item.task_id, "dimension": str(item.dimension), "detail": detail},
    )


# ---------------------------------------------------------------- metrics


def _counts(scores: list[SampleScore]) -> dict[str, tuple[int, int]]:
    """Dimension -> (passed, items), pooled over runs (:func:`pooled` keeps the counts).

    A score reduced by another reducer counts as one item passed when its value is 1.
    """
    counts: dict[str, list[int]] = {}
    for sample_score in scores:
        meta = sample_score.score.metadata or {}
        dimension = meta.get("dimension") or (sample_score.sample_metadata or {}).get("dimension")
        passed, runs = meta.get("passed"), meta.get("runs")
        if not isinstance(passed, int) or not isinstance(runs, int):
            passed, runs = int(sample_score.score.as_float() == 1.0), 1
        entry = counts.setdefault(str(dimension), [0, 0])
        entry[0] += passed
        entry[1] += runs
    order = [str(d) for d in BUILT_DIMENSIONS]
    ranked = sorted(counts, key=lambda d: (order.index(d) if d in order else len(order), d))
    return {d: (counts[d][0], counts[d][1]) for d in ranked}


@metric
def dimension_accuracy() -> Metric:
    """Accuracy per dimension, pooled over runs (6 decimals, as in ``summary.json``)."""

    def compute(scores: list[SampleScore]) -> Value:
        return {d: proportion(p, n)["accuracy"] for d, (p, n) in _counts(scores).items()}

    return compute


@metric
def dimension_ci95() -> Metric:
    """Wilson 95% interval per dimension: ``DIMENSION_low`` and ``DIMENSION_high``."""

    def compute(scores: list[SampleScore]) -> Value:
        result: dict[str, float] = {}
        for d, (p, n) in _counts(scores).items():
            low, high = proportion(p, n)["ci95"]
            result[f"{d}_low"], result[f"{d}_high"] = low, high
        return result

    return compute


@metric
def dimension_items() -> Metric:
    """Items per dimension, ``DIMENSION_items``: samples times runs (the intervals' ``n``)."""

    def compute(scores: list[SampleScore]) -> Value:
        return {f"{d}_items": n for d, (_, n) in _counts(scores).items()}

    return compute


@score_reducer
def pooled() -> ScoreReducer:
    """Reduce a sample's runs (epochs) to its pass rate, keeping passes and runs.

    The metrics count ``passed`` of ``runs`` items per sample, so intervals are over items
    (samples times runs), as ``dimensions score`` pools its runs.
    """

    def reduce(scores: list[Score]) -> Score:
        passed = sum(1 for s in scores if s.as_float() == 1.0)
        first = scores[0]
        meta = {k: v for k, v in (first.metadata or {}).items() if k != "detail"}
        meta.update(passed=passed, runs=len(scores))
        reasons = sorted({s.explanation or "" for s in scores})
        return Score(
            value=passed / len(scores),
            answer=first.answer if len({s.answer for s in scores}) == 1 else None,
            explanation="; ".join(reasons),
            metadata=meta,
        )

    return reduce


@scorer(metrics=[dimension_accuracy(), dimension_ci95(), dimension_items()])
def arcjudge_rules(
    instances: str,
    backend: str = "auto",
    workers: int | None = 1,
    store: str | None = None,
    wall: float = 10.0,
    min_distance: float = DEFAULT_MIN_DISTANCE,
    strict_generation: bool = False,
    exclude_arcgen: bool = False,
    attempts: int = 1,
    definition_samples: int | None = None,
) -> Scorer:
    """Grade each reply by arcjudge's rules, verifier calls in arcjudge's sandbox.

    Args:
        instances: ``instances.jsonl`` of ``dimensions build``.
        backend: arcjudge's sandbox backend (``auto``: docker if it answers, else process).
        workers: The sandbox's pool size (replies are graded one at a time).
        store: arcjudge's result store file (default: a temporary one); reusing one makes
            a rerun skip the verifier calls already made.
        wall: Seconds per verifier call.
        min_distance: Generation's copy threshold (``dimensions score --min-distance``).
        strict_generation: ``dimensions score --strict-generation``.
        exclude_arcgen: ``dimensions score --exclude-arcgen``.
        attempts: Output grid: candidates per test input (``--attempts``, pass@k).
        definition_samples: Definition: generator samples per task (default: as many as
            the build drew with its generator, else the validate run;
            ``--definition-samples``).
    """
    grading = _Grading(
        _grader(
            instances, backend, workers, store, wall, min_distance,
            strict_generation, exclude_arcgen, attempts, definition_samples,
        )
    )  # fmt: skip

    async def score(state: TaskState, target: Target) -> Score:
        item = await grading.grade(
            str(state.sample_id), str(state.model), str(state.epoch), state.output.completion
        )
        return _score(item)

    return score


# ------------------------------------------------------------------- task


def read_replay(path: Path, model: str | None) -> dict[tuple[str, str], str]:
    """``(prompt id, run)`` -> reply, from a replies file (one model's lines).

    Raises:
        InputError: When the file is unreadable or malformed, or holds several models and
            ``model`` does not choose one.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    table: dict[tuple[str, str], str] = {}
    models: set[str] = set()
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            data = json_value(text)
            row = (str(data["id"]), str(data["model"]), str(data["run"]), data["reply"])
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}:{number}: not a reply line ({exc})") from None
        models.add(row[1])
        if model is None or row[1] == model:
            table.setdefault((row[0], row[2]), row[3] if isinstance(row[3], str) else "")
    if model is None and len(models) > 1:
        raise InputError(f"{path}: replies of {len(models)} models: choose one (replay_model=)")
    if model is not None and model not in models:
        raise InputError(f"{path}: no replies of model {model!r}")
    return table


@solver(name="replay")
def replay_solver(path: str, model: str | None = None) -> Solver:
    """Play back the replies of a replies file instead of calling a model.

    The reply for a sample is the file's line with the sample's id and ``run`` equal to
    the epoch (else the line of the lowest run); a sample without one gets an empty reply
    (graded as unparsable, as a model's empty reply would be).

    Args:
        path: A replies file (``{"id", "model", "run", "reply"}`` lines).
        model: The model whose replies to play (needed when the file has several).
    """
    table = read_replay(Path(path), model)
    first: dict[str, str] = {}
    for (reply_id, _), reply in sorted(table.items()):
        first.setdefault(reply_id, reply)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        reply_id = str(state.sample_id)
        reply = table.get((reply_id, str(state.epoch)), first.get(reply_id, ""))
        state.output = ModelOutput.from_content(model or "replay", reply)
        state.messages.append(state.output.message)
        return state

    return solve


def generation_config(
    temperature: float | None, reasoning_effort: str | None, reasoning_tokens: int | None
) -> GenerateConfig:
    """The task's generation settings (``None``: the provider's default).

    Raises:
        InputError: For a negative temperature, an unknown effort or a budget below 1.
    """
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
        or temperature < 0
    ):  # fmt: skip
        raise InputError(f"temperature={temperature!r}: must be a number >= 0 (or null)")
    if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
        raise InputError(
            f"reasoning_effort={reasoning_effort!r}: one of {', '.join(REASONING_EFFORTS)} "
            "(or null)"
        )
    if reasoning_tokens is not None and (
        isinstance(reasoning_tokens, bool) or not isinstance(reasoning_tokens, int)
        or reasoning_tokens < 1
    ):  # fmt: skip
        raise InputError(f"reasoning_tokens={reasoning_tokens!r}: must be an integer >= 1")
    return GenerateConfig(
        temperature=None if temperature is None else float(temperature),
        reasoning_effort=reasoning_effort,  # type: ignore[arg-type]  # checked above
        reasoning_tokens=reasoning_tokens,
    )


@task
def potarcin(
    instances: str,
    prompts: str | None = None,
    tasks: str | None = None,
    dimensions: str | None = None,
    backend: str = "auto",
    workers: int | None = 1,
    store: str | None = None,
    wall: float = 10.0,
    min_distance: float = DEFAULT_MIN_DISTANCE,
    strict_generation: bool = False,
    exclude_arcgen: bool = False,
    attempts: int = 1,
    definition_samples: int | None = None,
    replay: str | None = None,
    replay_model: str | None = None,
    temperature: float | None = STUDY_TEMPERATURE,
    reasoning_effort: str | None = STUDY_REASONING_EFFORT,
    reasoning_tokens: int | None = None,
) -> Task:
    """PotARCin: a model answers each instance's prompt; arcjudge's rules grade it.

    Args:
        instances: ``instances.jsonl`` of ``dimensions build`` (graded against).
        prompts: ``prompts.jsonl`` of ``dimensions prompts`` (what the model sees).
        tasks: Without ``prompts``: the task files the instances were built from, to
            render the prompts as ``dimensions prompts`` does (its default templates).
        dimensions: Comma-separated dimensions to evaluate (default: every prompt's).
        backend: arcjudge's sandbox backend for verifier calls.
        workers: The sandbox's pool size.
        store: arcjudge's result store file (default: a temporary one).
        wall: Seconds per verifier call.
        min_distance: Generation's copy threshold.
        strict_generation: Generation's strict reading.
        exclude_arcgen: Fail generated pairs equal to an ARC-GEN pair.
        attempts: Output grid: candidates per test input (pass@k).
        definition_samples: Definition: generator samples per task.
        replay: A replies file to play back instead of calling the model (see
            :func:`replay_solver`; e.g. the bundled sample's ``replies.jsonl``).
        replay_model: The model of the replies file to play back.
        temperature: The sampling temperature (the study's 1.0; ``None``: the
            provider's default). ``inspect eval --temperature`` overrides it.
        reasoning_effort: The reasoning effort (the study's ``low``; ``None``: the
            provider's default), for the models that take one.
        reasoning_tokens: The thinking budget in tokens (``None``: none set; the study
            gave one model 120,000), for the models that take one.

    Raises:
        InputError: For unreadable inputs or arguments, or a prompt without an instance.
    """
    grader_args = (instances, backend, workers, store, wall, min_distance,
                   strict_generation, exclude_arcgen, attempts, definition_samples)  # fmt: skip
    chosen = _dimensions(dimensions)
    config = generation_config(temperature, reasoning_effort, reasoning_tokens)
    if prompts is not None:
        every = read_prompt_samples(Path(prompts))
    elif tasks is not None:
        every = render_prompt_samples(Path(instances), Path(tasks))
    else:
        raise InputError("give prompts=PROMPTS.jsonl (or tasks=TASKS_DIR to render them)")
    samples = [s for s in every if chosen is None or (s.metadata or {}).get("dimension") in chosen]
    rules = arcjudge_rules(*grader_args)
    known = _grader(*grader_args).instances  # (a grader opens nothing before its first reply)
    missing = [str(s.id) for s in samples if str(s.id) not in known]
    if missing:
        raise InputError(f"prompts without an instance in {instances}: {missing[:5]}")
    if not samples:
        raise InputError("no prompt of the dimensions chosen")
    return Task(
        dataset=MemoryDataset(samples, name="potarcin"),
        solver=generate() if replay is None else replay_solver(replay, replay_model),
        scorer=rules,
        config=config if replay is None else GenerateConfig(),  # a replay calls no model
        # the build's repeats (build --repeats R) are its runs, unless --epochs says otherwise
        epochs=Epochs(read_build_repeats(Path(instances)) or 1, pooled()),
        name="potarcin",
    )
