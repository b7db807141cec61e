"""``arcjudge dimensions score``: grade model answers against built instances.

Inputs: ``instances.jsonl`` from ``dimensions build``, an answers JSONL (one line per
``{task_id, dimension, model, run, answer}``), and optionally an ``arcjudge score`` output
directory for the Definition dimension (``--definitions``) with the programs file it
scored (``--programs``, else the path recorded in its ``summary.json``) for
self-consistency. Every verifier call, and every call of a model's Definition program,
runs in the sandbox, which is given input grids only, through the engine and the result
store (so an interrupted run resumes where it stopped).

One *item* is graded per ``(model, run, task, dimension)``: for every run of a model and
every instance of a dimension the model answered at all (in any run), so a missing answer
is a failed item (``no answer``), while a dimension the model never answered is reported
as not answered. Malformed lines and answers never stop the run: an unreadable line is
listed in ``summary.json`` under ``answers_problems``; a readable line with a malformed
answer fails its item with the reason.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.grids import Grid, to_grid
from arcjudge.harness.core.calls import Call, call_key, outputs_of, run_calls
from arcjudge.harness.core.engine import CandidateOutcome, Engine
from arcjudge.harness.core.programs import read_programs
from arcjudge.harness.core.store import ResultStore, module_fingerprint
from arcjudge.harness.dimensions.build import (
    DEFAULT_MIN_DISTANCE,
    EDIT_MAX_DISTANCE,
    pair_digest,
)
from arcjudge.harness.dimensions.consistency import agrees_many
from arcjudge.harness.dimensions.rules import (
    VerifierOutput,
    classification_verdict,
    editing_verdict,
    generation_verdict,
    inversion_verdict,
    normalize_dimension,
    parse_answer,
)
from arcjudge.harness.dimensions.statistics import model_statistics
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import (
    DEFINITION_LIMITS,
    VERIFIER_LIMITS,
    Limits,
    Program,
    Status,
)
from arcjudge.verifiers.sources import SourceError, VerifierSource
from arcjudge.vocabulary import (
    CONSISTENCY_DIMENSIONS,
    DEFINITION_ENTRY_POINTS,
    DIMENSIONS,
    Split,
    Verdict,
)

__all__ = ["DimensionScoreConfig", "DimensionScorer", "read_instances"]

_NO_ANSWER = object()
_PROBLEM_LIMIT = 200
_CHUNK = 256  # inputs per sandbox call


@dataclass(frozen=True)
class DimensionScoreConfig:
    """Everything ``dimensions score`` needs besides the sandbox."""

    instances_file: Path
    answers_file: Path
    definitions_dir: Path | None = None
    programs_file: Path | None = None
    min_distance: float = DEFAULT_MIN_DISTANCE
    edit_max_distance: float = EDIT_MAX_DISTANCE
    exclude_arcgen: bool = False
    strict_generation: bool = False
    verifier_limits: Limits = VERIFIER_LIMITS
    definition_limits: Limits = DEFINITION_LIMITS
    entry_points: tuple[str, ...] = DEFINITION_ENTRY_POINTS


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def read_instances(path: Path) -> dict[tuple[str, str], dict]:
    """Read ``instances.jsonl``; ``(task_id, dimension)`` -> record.

    Raises:
        InputError: When the file is not a ``dimensions build`` output.
    """
    result: dict[tuple[str, str], dict] = {}
    for number, text in enumerate(_lines(path), 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
            key = (str(record["task_id"]), str(record["dimension"]))
            if key[1] not in DIMENSIONS or not isinstance(record["prompt"], dict):
                raise ValueError(f"unknown dimension {key[1]!r}")
            if not isinstance(record["key"], dict) or not isinstance(record["verifier"], dict):
                raise ValueError("'key' and 'verifier' must be objects")
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}:{number}: not an instance record ({exc})") from None
        if key in result:
            raise InputError(f"{path}:{number}: second instance for {key[0]} {key[1]}")
        result[key] = record
    if not result:
        raise InputError(f"{path}: no instances")
    return result


@dataclass
class _Answer:
    line: int
    value: object  # the raw answer, or _NO_ANSWER when the line had no "answer" field


class DimensionScorer:
    """Grades answers; ``items`` and ``summary()`` hold the result after ``run``."""

    def __init__(
        self, config: DimensionScoreConfig, progress: Callable[[int], None] | None = None
    ) -> None:
        self.config = config
        self.progress = progress
        self.instances = read_instances(config.instances_file)
        self.tasks = sorted({t for t, _ in self.instances})
        self.verifier_specs = {t: r["verifier"] for (t, _), r in sorted(self.instances.items())}
        self.problems: list[str] = []
        self.problem_count = 0
        self.duplicates = 0
        self.unmatched = 0
        self.answers: dict[tuple[str, str, str, str], _Answer] = {}
        self._read_answers()
        self.definitions: dict[tuple[str, str, str], dict] = {}
        self.codes: dict[str, str] = {}
        self.definition_notes: list[str] = []
        if config.definitions_dir is not None:
            self._read_definitions()
        self.items: list[dict] = []
        self._verifiers: dict[str, VerifierSource] = {}
        self._fingerprints: dict[str, str] = {}

    # ------------------------------------------------------------------ inputs

    def _problem(self, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < _PROBLEM_LIMIT:
            self.problems.append(text)

    def _read_answers(self) -> None:
        for number, text in enumerate(_lines(self.config.answers_file), 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError as exc:
                self._problem(f"line {number}: not valid JSON ({exc})")
                continue
            if not isinstance(record, dict):
                self._problem(f"line {number}: not a JSON object")
                continue
            missing = [k for k in ("task_id", "dimension", "model", "run") if record.get(k) is None]
            if missing:
                self._problem(f"line {number}: missing {', '.join(missing)}")
                continue
            dimension = normalize_dimension(record["dimension"])
            if dimension is None:
                self._problem(f"line {number}: unknown dimension {str(record['dimension'])[:40]!r}")
                continue
            if dimension == "definition":
                self._problem(f"line {number}: definition is scored from --definitions; ignored")
                continue
            task_id = str(record["task_id"])
            if (task_id, dimension) not in self.instances:
                self.unmatched += 1
                self._problem(f"line {number}: no {dimension} instance for task {task_id[:40]!r}")
                continue
            key = (str(record["model"]), str(record["run"]), task_id, dimension)
            if key in self.answers:
                self.duplicates += 1
                self._problem(f"line {number}: second answer for the same item; ignored")
                continue
            self.answers[key] = _Answer(number, record.get("answer", _NO_ANSWER))

    def _read_definitions(self) -> None:
        directory = self.config.definitions_dir
        assert directory is not None
        for number, text in enumerate(_lines(directory / "results.jsonl"), 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
                task_id = str(record["task_id"])
                verdict = record["verdict"]
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    f"{directory}/results.jsonl:{number}: not a score result ({exc})"
                ) from None
            if record.get("model") is None or record.get("run") is None:
                self.definition_notes.append(f"line {number}: no model or run field; not used")
                continue
            key = (str(record["model"]), str(record["run"]), task_id)
            if key in self.definitions:
                self.definition_notes.append(f"line {number}: second program for {key}; ignored")
                continue
            if verdict not in ("pass", "fail"):
                raise InputError(f"{directory}/results.jsonl:{number}: unknown verdict {verdict!r}")
            self.definitions[key] = record
        programs = self.config.programs_file
        if programs is None:
            try:
                summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
                recorded = summary.get("programs_file")
            except (OSError, ValueError, AttributeError):
                recorded = None
            programs = Path(recorded) if recorded and Path(recorded).is_file() else None
        if programs is None:
            self.definition_notes.append(
                "no programs file (give --programs): self-consistency not computed"
            )
            return
        for record in read_programs(programs, self.config.entry_points):
            code_hash = hashlib.sha256(record.code.encode("utf-8")).hexdigest()
            self.codes[code_hash] = record.code

    def module_dirs(self) -> tuple[str, ...]:
        """Directories the instances' verifier sources import from (for the sandbox)."""
        dirs: list[str] = []
        for record in self.instances.values():
            source = self._verifier_source(record["verifier"])
            dirs.extend(d for d in source.module_dirs if d not in dirs)
        return tuple(dirs)

    def _verifier_source(self, spec: dict) -> VerifierSource:
        name = str(spec.get("source"))
        if name not in self._verifiers:
            try:
                self._verifiers[name] = VerifierSource(name, str(spec["kind"]), str(spec["path"]))
            except (SourceError, KeyError) as exc:
                raise InputError(
                    f"verifier {name!r} of the instances cannot be loaded: {exc}"
                ) from None
        return self._verifiers[name]

    # ------------------------------------------------------------------ items

    def _models(self) -> dict[str, dict[str, set[str]]]:
        """Model -> {"runs": runs, "dimensions": answered dimensions}."""
        models: dict[str, dict[str, set[str]]] = {}
        for model, run, _, dim in self.answers:
            entry = models.setdefault(model, {"runs": set(), "dimensions": set()})
            entry["runs"].add(run)
            entry["dimensions"].add(dim)
        for model, run, _ in self.definitions:
            entry = models.setdefault(model, {"runs": set(), "dimensions": set()})
            entry["runs"].add(run)
        return models

    def _parsed(self) -> dict[tuple[str, str, str, str], tuple[object | None, str | None]]:
        parsed = {}
        for key, answer in self.answers.items():
            if answer.value is _NO_ANSWER:
                parsed[key] = (None, "the line has no 'answer' field")
            else:
                parsed[key] = parse_answer(key[3], answer.value)
        return parsed

    def _verifier_outputs(
        self, engine: Engine, parsed: dict
    ) -> dict[tuple[str, Grid], VerifierOutput]:
        """Run each task's verifier on every input the answers propose (one call a task)."""
        wanted: dict[str, dict[Grid, None]] = {}
        for (_, _, task_id, dim), (value, _) in parsed.items():
            if value is None or dim == "classification":
                continue
            grid_in = value if dim == "inversion" else value[0]  # type: ignore[index]
            wanted.setdefault(task_id, {})[grid_in] = None
        calls, owners = [], []
        for task_id in sorted(wanted):
            spec = self.verifier_specs[task_id]
            source = self._verifier_source(spec)
            program = source.program_for(task_id).program
            if program is None:
                continue
            key = call_key(engine, program, self._fingerprint(source))
            calls.append(Call(program, key, list(wanted[task_id])))
            owners.append(task_id)
        outputs: dict[tuple[str, Grid], VerifierOutput] = {}

        def done(index: int, outcome: CandidateOutcome) -> None:
            task_id, call = owners[index], calls[index]
            found = outputs_of(call, outcome)
            for grid in call.inputs:
                outputs[(task_id, grid)] = found.get(grid, (Status.INFRA, None))
            if self.progress:
                self.progress(1)

        run_calls(engine, calls, done)
        return outputs

    def _fingerprint(self, source: VerifierSource) -> str:
        """``module_fingerprint`` of a verifier source's module directories (computed once)."""
        if source.name not in self._fingerprints:
            self._fingerprints[source.name] = module_fingerprint(source.module_dirs)
        return self._fingerprints[source.name]

    def _grade(
        self, task_id: str, dim: str, value: object, outputs: dict[tuple[str, Grid], VerifierOutput]
    ) -> Verdict:
        instance = self.instances[(task_id, dim)]
        prompt, key = instance["prompt"], instance["key"]
        missing: VerifierOutput = (Status.INFRA, None)
        if dim == "classification":
            return classification_verdict(key["labels"], value)  # type: ignore[arg-type]
        if dim == "generation":
            pair = value  # type: ignore[assignment]
            avoid = [(to_grid(p["input"]), to_grid(p["output"])) for p in prompt["avoid"]]
            digests = set(key.get("arcgen_digests", [])) if self.config.exclude_arcgen else None
            return generation_verdict(
                pair,  # type: ignore[arg-type]
                outputs.get((task_id, pair[0]), missing),  # type: ignore[index]
                avoid,
                self.config.min_distance,
                digests,
                pair_digest(*pair) if digests is not None else None,  # type: ignore[misc]
                strict=self.config.strict_generation,
            )
        if dim == "editing":
            corrupted = (to_grid(prompt["input"]), to_grid(prompt["output"]))
            return editing_verdict(
                corrupted,
                value,  # type: ignore[arg-type]
                outputs.get((task_id, value[0]), missing),  # type: ignore[index]
                self.config.edit_max_distance,
            )
        if dim == "inversion":
            return inversion_verdict(
                to_grid(prompt["output"]),
                outputs.get((task_id, value), missing),  # type: ignore[arg-type]
            )
        raise ValueError(f"no rule for {dim!r}")

    def _definition_item(self, model: str, run: str, task_id: str) -> dict:
        record = self.definitions.get((model, run, task_id))
        item = {"model": model, "run": run, "task_id": task_id, "dimension": "definition"}
        if record is None:
            return {**item, "passed": False, "reason": "no Definition program", "detail": {}}
        splits = record.get("splits") or {}
        detail = {"program": record.get("id"), "splits": splits}
        if record["verdict"] == "pass":
            return {**item, "passed": True, "reason": None, "detail": detail}
        reason = f"{record.get('failure') or 'fail'}"
        if record.get("status"):
            reason += f" ({record['status']})"
        return {**item, "passed": False, "reason": reason, "detail": detail}

    @staticmethod
    def _passes_train_test(record: dict | None) -> bool:
        if record is None or record.get("status"):
            return False
        splits = record.get("splits") or {}
        parts = [splits.get(s) for s in (Split.TRAIN, Split.TEST)]
        return all(p is not None and p[0] == p[1] and p[1] > 0 for p in parts)

    # ----------------------------------------------------------- consistency

    def _consistency(self, engine: Engine, parsed: dict) -> None:
        """Run each Definition program on its model's answers; annotate items."""
        by_cell: dict[tuple[str, str, str], list[dict]] = {}
        for item in self.items:
            if item["dimension"] in CONSISTENCY_DIMENSIONS:
                by_cell.setdefault((item["model"], item["run"], item["task_id"]), []).append(item)
        programs, plans = [], []
        for cell in sorted(by_cell):
            record = self.definitions.get(cell)
            code = self.codes.get(str(record.get("code_sha256"))) if record else None
            if record is None or code is None:
                continue
            checks: list[tuple[dict, int | None, Grid, Grid]] = []
            for item in by_cell[cell]:
                dim = item["dimension"]
                value, _ = parsed.get((*cell, dim), (None, None))
                instance = self.instances[(cell[2], dim)]
                if dim == "classification":
                    if value is None:
                        continue
                    for i, cand in enumerate(instance["prompt"]["candidates"]):
                        checks.append((item, i, to_grid(cand["input"]), to_grid(cand["output"])))
                elif value is not None:
                    if dim == "generation":
                        checks.append((item, None, value[0], value[1]))
                    else:
                        checks.append((item, None, value, to_grid(instance["prompt"]["output"])))
            if not checks:
                continue
            program = Program(
                code.encode("utf-8"), self.config.entry_points, (), "list", str(record["id"])
            )
            programs.append((program, [(c[2], c[3]) for c in checks]))
            plans.append((cell, checks))

        def done(index: int) -> None:
            if self.progress:
                self.progress(1)

        runs = agrees_many(programs, engine, done)
        for (cell, checks), agreement in zip(plans, runs, strict=True):
            passes = self._passes_train_test(self.definitions.get(cell))
            for (item, position, _, _), says_valid in zip(checks, agreement, strict=True):
                info = item.setdefault("consistency", {"definition_passes_train_test": passes})
                if position is None:
                    info["agree"] = says_valid
                else:
                    judged = parsed[(*cell, "classification")][0][position]
                    label = self.instances[(cell[2], "classification")]["key"]["labels"][position]
                    info.setdefault("agree", [None] * 5)[position] = judged == says_valid
                    info.setdefault("right", [None] * 5)[position] = judged == (label == "valid")

    # -------------------------------------------------------------------- run

    def work(self) -> int:
        """How many calls ``run`` reports at most, for a progress bar.

        One per task whose verifier runs and one per Definition program.
        """
        tasks = {k[2] for k in self.answers if k[3] != "classification"}
        return len(tasks) + len(self.definitions)

    def run(self, sandbox: Sandbox, store: ResultStore) -> None:
        """Grade every item: verifier calls and Definition programs in ``sandbox``.

        Every call goes through the engine and is cached in ``store``, so a rerun after an
        interruption redoes only the calls that are missing.
        """
        verifiers = Engine(sandbox, store, self.config.verifier_limits, PolicyMode.OFF, _CHUNK)
        parsed = self._parsed()
        outputs = self._verifier_outputs(verifiers, parsed)
        models = self._models()
        for model in sorted(models):
            answered = models[model]["dimensions"]
            for run in sorted(models[model]["runs"]):
                for task_id in self.tasks:
                    for dim in DIMENSIONS:
                        if (task_id, dim) not in self.instances:
                            continue
                        if dim == "definition":
                            if self.config.definitions_dir is not None:
                                self.items.append(self._definition_item(model, run, task_id))
                            continue
                        if dim not in answered:
                            continue
                        self.items.append(self._item(model, run, task_id, dim, parsed, outputs))
        if self.codes:
            definitions = Engine(
                sandbox, store, self.config.definition_limits, PolicyMode.OFF, _CHUNK
            )
            self._consistency(definitions, parsed)

    def _item(
        self, model: str, run: str, task_id: str, dim: str, parsed: dict, outputs: dict
    ) -> dict:
        item: dict = {"model": model, "run": run, "task_id": task_id, "dimension": dim}
        key = (model, run, task_id, dim)
        if key not in parsed:
            return {**item, "passed": False, "reason": "no answer", "detail": {}}
        item["answer_line"] = self.answers[key].line
        value, reason = parsed[key]
        if value is None:
            return {**item, "passed": False, "reason": f"malformed answer: {reason}", "detail": {}}
        verdict = self._grade(task_id, dim, value, outputs)
        return {
            **item,
            "passed": verdict.passed,
            "reason": verdict.reason,
            "detail": verdict.detail,
        }

    # ----------------------------------------------------------------- output

    def item_lines(self) -> Iterator[str]:
        """Lines of ``items.jsonl`` (model, run, task, dimension order)."""
        for item in self.items:
            yield json_dumps(item, sort_keys=True, separators=(",", ":")) + "\n"

    def full_tasks(self) -> list[str]:
        """Tasks with an instance of every dimension."""
        return [t for t in self.tasks if all((t, d) in self.instances for d in DIMENSIONS)]

    def summary(self) -> dict:
        """``summary.json``: per-model statistics and what was read."""
        reasons: Counter[str] = Counter()
        for item in self.items:
            if not item["passed"]:
                reasons[f"{item['dimension']}: {_reason_class(item['reason'])}"] += 1
        c = self.config
        return {
            "instances": str(c.instances_file),
            "answers": str(c.answers_file),
            "definitions": str(c.definitions_dir) if c.definitions_dir else None,
            "min_distance": c.min_distance,
            "edit_max_distance": c.edit_max_distance,
            "exclude_arcgen": c.exclude_arcgen,
            "strict_generation": c.strict_generation,
            "tasks": len(self.tasks),
            "full_tasks": len(self.full_tasks()),
            "items": len(self.items),
            "answers_read": len(self.answers),
            "answers_problems": self.problems,
            "answers_problem_count": self.problem_count,
            "duplicate_answers": self.duplicates,
            "unmatched_answers": self.unmatched,
            "definition_notes": self.definition_notes,
            "failure_reasons": dict(sorted(reasons.items())),
            "models": model_statistics(self.items, self.full_tasks()),
        }


def _reason_class(reason: str | None) -> str:
    """A short class of a failure reason for counting (its text up to the first colon)."""
    text = reason or "fail"
    if text.startswith("copy of demonstration"):
        return "copy of a demonstration"
    if text.startswith("wrong judgment"):
        return "wrong judgment"
    return text.split(":")[0].split(" (")[0]
