"""Definition replies scored as ``arcjudge score`` would, on the inputs the build recorded.

A replies file's Definition replies are programs: their code is extracted with
``score``'s extraction and scored by its :class:`~arcjudge.harness.score.scorer.Scorer` in
the same run, on the tasks, ARC-GEN pairs and generator named by ``build.json`` beside
the instances (and the validate manifest it names). The results become the Definition
items and the programs of self-consistency, as ``--definitions`` results would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.core.manifest import read_manifest
from arcjudge.harness.core.programs import ProgramRecord, program_record
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.grade_inputs import DefinitionReply, DefinitionResult
from arcjudge.harness.dimensions.records import DimensionInstance, read_build_info
from arcjudge.harness.dimensions.summary import DefinitionScoring
from arcjudge.harness.score.scorer import ScoreConfig, Scorer
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import Limits
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import GeneratorSource, SourceError
from arcjudge.vocabulary import Dimension

__all__ = [
    "DefinitionsScored",
    "definition_score_config",
    "score_definition_replies",
    "scoring_record",
]


@dataclass(frozen=True)
class DefinitionsScored:
    """Definition replies, scored.

    Attributes:
        definitions: The result per ``(model, run, task_id)``.
        codes: Program code by its SHA-256 (for self-consistency).
        hows: How each reply's code was extracted (``code: ...``), when it was.
        result_lines: ``results.jsonl`` lines (the output's ``definitions.jsonl``).
    """

    definitions: dict[tuple[str, str, str], DefinitionResult]
    codes: dict[str, str]
    hows: dict[tuple[str, str, str], str]
    result_lines: list[str]


def definition_score_config(
    instances_file: Path,
    replies_file: Path | None,
    instances: Mapping[tuple[str, Dimension], DimensionInstance],
    definition_samples: int | None,
    entry_points: tuple[str, ...],
    limits: Limits,
) -> ScoreConfig:
    """How ``score`` scores Definition replies: the inputs the build recorded.

    The generator is the build's (``--generator``, its ``--samples``) when the build
    recorded one, else the validate run's (its sample count); ``definition_samples``
    (``--samples``) overrides the count either way.

    Args:
        instances_file: ``instances.jsonl`` (``build.json`` is read beside it).
        replies_file: The replies file (named as the programs file in the results).
        instances: The instances (their seed is the scoring's).
        definition_samples: Generator samples per task, when given.
        entry_points: The functions a program may define.
        limits: Limits per Definition program call.

    Raises:
        InputError: When the build's record is missing or names missing inputs.
    """
    path = instances_file.parent / "build.json"
    try:
        build = read_build_info(path)
    except FileNotFoundError:
        raise InputError(
            f"{path}: missing; Definition replies are scored on the inputs the build "
            "records there (keep build.json beside instances.jsonl)"
        ) from None
    if build.inputs is None:
        raise InputError(f"{path}: not a dimensions build record (field 'inputs': missing)")
    inputs = build.inputs
    tasks, arcgen, manifest_dir = inputs.tasks, inputs.arcgen, inputs.manifest
    built_with, built_samples, built_seed = (
        inputs.generator,
        build.generator_samples,
        build.seed,
    )
    for what, given in (("tasks", tasks), ("arcgen", arcgen), ("manifest", manifest_dir)):
        if given is not None and not Path(given).is_dir():
            raise InputError(
                f"{path}: the build's {what} directory {given!r} does not exist here "
                "(relative paths are read from the current directory)"
            )
    task_files(Path(tasks))
    recorded = read_manifest(Path(manifest_dir)).manifest
    # The build's generator when it drew its valid pairs from one, else validate's.
    where: Path | None = None
    spec: Mapping[str, Any] | None = None
    if recorded.generator is not None:
        spec = recorded.generator.to_json()
    samples = recorded.samples
    if built_with:
        spec, samples, where = built_with, built_samples or 0, path
    if definition_samples is not None:
        samples = definition_samples
    generator = None
    if spec and samples:
        try:
            generator = GeneratorSource(str(spec["kind"]), str(spec["path"]))
        except (SourceError, KeyError, TypeError) as exc:
            named = where or f"{manifest_dir}/manifest.json"
            raise InputError(f"{named}: generator: {exc}") from None
    # The build's seed (a configuration's own: its Definition sees its own samples).
    seed = next(iter(instances.values())).seed
    if built_seed is not None and built_seed != seed:
        raise InputError(
            f"{path}: seed {built_seed!r}, but the instances beside it were built with "
            f"seed {seed} (build.json of another build?)"
        )
    return ScoreConfig(
        programs_file=replies_file or instances_file,
        tasks_dir=Path(tasks),
        arcgen_dir=Path(arcgen) if arcgen else None,
        generator=generator,
        samples=samples if generator is not None else 0,
        seed=seed,
        verifiers_dir=Path(manifest_dir) if generator is not None else None,
        entry_points=entry_points,
        limits=limits,
        policy=PolicyMode.WARN,
    )


def score_definition_replies(
    replies: Sequence[DefinitionReply],
    config: ScoreConfig,
    sandbox: Sandbox,
    store: ResultStore,
    progress: Callable[[int], None] | None = None,
) -> DefinitionsScored:
    """Score the Definition replies as ``arcjudge score`` would, in the sandbox.

    Args:
        replies: The Definition replies, in file order.
        config: From :func:`definition_score_config`.
        sandbox: Where the programs run.
        store: The result store (a rerun redoes only missing calls).
        progress: Called with 1 per program scored.
    """
    records: list[ProgramRecord] = []
    codes: dict[str, str] = {}
    for reply in replies:
        fields = {
            "id": f"replies:{reply.line}",
            "task_id": reply.task_id,
            "model": reply.model,
            "run": reply.run,
            "response": reply.reply if isinstance(reply.reply, str) else "",
        }
        record = program_record(reply.line, fields, config.entry_points)
        assert record is not None  # a response string is always given
        records.append(record)
        code_hash = hashlib.sha256(record.code.encode("utf-8")).hexdigest()
        codes[code_hash] = record.code
    scorer = Scorer(config, sandbox, store, progress, records=records)
    scorer.run()
    definitions: dict[tuple[str, str, str], DefinitionResult] = {}
    hows: dict[tuple[str, str, str], str] = {}
    for reply, result, record in zip(replies, scorer.scored(), records, strict=True):
        cell = (reply.model, reply.run, reply.task_id)
        definitions[cell] = DefinitionResult.of(result)
        if record.extraction is not None:
            hows[cell] = f"code: {record.extraction['reason']}"
    return DefinitionsScored(definitions, codes, hows, list(scorer.result_lines()))


def scoring_record(config: ScoreConfig | None) -> DefinitionScoring | None:
    """Where Definition replies were scored (``None`` when there were none)."""
    if config is None:
        return None
    generator = config.generator
    return DefinitionScoring(
        tasks=str(config.tasks_dir),
        arcgen=str(config.arcgen_dir) if config.arcgen_dir else None,
        generator={"kind": generator.kind, "path": str(generator.path)} if generator else None,
        samples=config.samples,
        seed=config.seed,
        verifiers=str(config.verifiers_dir) if config.verifiers_dir else None,
    )
