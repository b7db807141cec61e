"""Issue 16's acceptance check as one pipeline: oracle replies in six styles, end to end.

Shared by ``tests/end_to_end/test_oracle_replies.py`` (a dozen tasks) and
``bench/oracle_replies.py`` (the 400 ARC-AGI-1 training tasks); importable as
``tests.support.oracle_pipeline`` because pytest puts the checkout on ``sys.path`` (the
benchmark puts it there itself, as ``bench/unprivileged_backend.py`` does). The steps, all
through the ``arcjudge`` command line:

1. the tasks (and their ARC-GEN pairs) copied into a work directory, and one
   lookup-table verifier of our own per task (a ``module`` source: ``<task_id>.py``
   defining ``transform(grid)``, which answers every demonstration and ARC-GEN input from a
   table and raises on any other input), so every verifier is valid by construction;
2. ``validate`` (no generator), ``dimensions build`` (with a neighbours file: the next
   three task ids), ``dimensions prompts`` in both grid formats;
3. a leak check of every prompt against its instance's key (no hidden grid, key string or
   label-to-candidate binding in any message, nor any test output of the task);
4. oracle replies from the instances' keys, in six reply styles rotating over tasks and
   dimensions (Definition: a ```python block holding the same lookup table as the
   verifier); each parsed back here with :mod:`arcjudge.harness.dimensions.replies` (and
   Definition's code extraction) and compared with the key, then scored by ``dimensions
   score --replies``: every oracle item whose key has a reference must pass, read the way
   the direct parse read it;
5. output-grid replies made of the demonstrations' outputs (the first demonstration's
   output for every test input; and, scored with ``--attempts 2``, the first two
   demonstrations' outputs per test input), whose accuracy must equal what plain Python
   over the task files says;
6. junk replies (not text, empty, broken grids, four judgments, Definition code that does
   not compile, raises or exits): the run must finish and fail every one of their items.

:func:`run_pipeline` returns a :class:`PipelineReport`; its ``problems`` are empty exactly
when every check held.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.harness.core.extract import extract_program
from arcjudge.harness.dimensions.replies import MAX_REPLY_SIDE
from arcjudge.harness.dimensions.strategies import parse_reply
from arcjudge.vocabulary import BUILT_DIMENSIONS, DEFINITION_ENTRY_POINTS, Dimension
from tests.support.helpers import grids_in, strings_in

Grid = list[list[int]]
Runner = Callable[[list[str]], str]
"""Runs ``arcjudge ARGV`` (raising on a non-zero exit) and returns what it printed."""

STYLES = (
    "fenced digits",
    "json in prose",
    "rows after chatter",
    "self-correction",
    "json object",
    "mixed rows",
)
"""The reply styles, rotated per instance (``(task index + dimension index) % 6``)."""

ROW_VARIANTS = ("bracketed rows", "double spaced", "row labels", "pipes")
"""The sub-styles of ``mixed rows`` (rotated by task index)."""

CHATTER = (
    "Let me think about this step by step. The demonstrations share one rule, and I will "
    "apply it exactly as shown."
)
CORRECTION = "Wait, correction: I misapplied the rule above. Here is the right answer."


# ---------------------------------------------------------------------------- inputs


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write records as JSON lines; return how many."""
    lines = [json.dumps(r, separators=(",", ":")) + "\n" for r in records]
    path.write_text("".join(lines))
    return len(lines)


def choose_tasks(tasks_dir: Path, arcgen_dir: Path, count: int) -> list[str]:
    """``count`` task ids (sorted) for a small run that still exercises what matters.

    About a third of them the first tasks (in sorted order) with several test inputs,
    about a third the first whose test outputs are all among the first two demonstrations'
    outputs (so the pass@2 demonstration check is not trivially zero), the first whose
    ARC-GEN pairs have a grid of more than 30 rows or columns (past ARC's limit; its
    instances show and expect such grids), then the first of the rest.
    """
    ids = sorted(p.stem for p in tasks_dir.glob("*.json"))
    tasks = {t: json.loads((tasks_dir / f"{t}.json").read_text()) for t in ids}
    multi = [t for t in ids if len(tasks[t]["test"]) > 1]
    hits = [t for t in ids if _demonstration_hit(tasks[t], 2)]
    large = next((t for t in ids if largest_side(arcgen_dir / f"{t}.json") > 30), None)
    chosen: list[str] = []
    for group in (multi[: count // 3], hits[: count // 3], [large] if large else [], ids):
        for task in group:
            if len(chosen) < count and task not in chosen:
                chosen.append(task)
    return sorted(chosen)


def largest_side(path: Path) -> int:
    """The largest side of any grid in an ARC-GEN file (0 when there is none)."""
    if not path.is_file():
        return 0
    grids = [g for pair in json.loads(path.read_text()) for g in pair.values()]
    return max((max(len(g), len(g[0])) for g in grids), default=0)


def copy_inputs(tasks_src: Path, arcgen_src: Path, ids: Sequence[str], root: Path) -> None:
    """The chosen tasks into ``root/tasks`` and their ARC-GEN files into ``root/arcgen``."""
    for name, source in (("tasks", tasks_src), ("arcgen", arcgen_src)):
        (root / name).mkdir(parents=True)
        for task in ids:
            path = source / f"{task}.json"
            if path.is_file():
                shutil.copyfile(path, root / name / path.name)


def known_pairs(tasks_dir: Path, arcgen_dir: Path, task_id: str) -> list[list[Grid]]:
    """``[input, output]`` of every train, test and ARC-GEN pair of a task (with an output)."""
    task = json.loads((tasks_dir / f"{task_id}.json").read_text())
    pairs = [*task["train"], *task["test"]]
    extra = arcgen_dir / f"{task_id}.json"
    if extra.is_file():
        pairs += json.loads(extra.read_text())
    return [[p["input"], p["output"]] for p in pairs if "output" in p]


def lookup_source(pairs: Sequence[Sequence[Grid]]) -> str:
    """A program defining ``transform(grid)``: the output of a known input, else KeyError.

    The table is one JSON string literal, decoded once when the module loads.
    """
    data = json.dumps(pairs, separators=(",", ":"))
    return (
        "import json\n"
        f"_PAIRS = {data!r}\n"
        '_TABLE = {json.dumps(i, separators=(",", ":")): o for i, o in json.loads(_PAIRS)}\n'
        "\n"
        "\n"
        "def transform(grid):\n"
        '    return _TABLE[json.dumps(grid, separators=(",", ":"))]\n'
    )


def write_verifiers(tasks_dir: Path, arcgen_dir: Path, out: Path) -> int:
    """One lookup-table verifier ``<task_id>.py`` per task into ``out``; return how many."""
    out.mkdir(parents=True)
    ids = sorted(p.stem for p in tasks_dir.glob("*.json"))
    for task in ids:
        (out / f"{task}.py").write_text(lookup_source(known_pairs(tasks_dir, arcgen_dir, task)))
    return len(ids)


def arcgen_pairs(arcgen_dir: Path, task_id: str) -> list[list[Grid]]:
    """``[input, output]`` of every ARC-GEN pair of a task, in file order (none: ``[]``)."""
    path = arcgen_dir / f"{task_id}.json"
    if not path.is_file():
        return []
    return [[p["input"], p["output"]] for p in json.loads(path.read_text())]


def generator_source(pairs: Sequence[Sequence[Grid]]) -> str:
    """An ARC-GEN layout generator of our own: ``generate()`` draws one of ``pairs``.

    It draws with the global ``random``, so the harness's ``random.seed(SEED + i)`` before
    sample ``i`` makes the samples reproducible; the pairs are one JSON string literal.
    """
    data = json.dumps(pairs, separators=(",", ":"))
    return (
        '"""A generator of our own: one of the task\'s ARC-GEN stable pairs, at random."""\n'
        "\n"
        "import json\n"
        "import random\n"
        "\n"
        f"_PAIRS = json.loads({data!r})\n"
        "\n"
        "\n"
        "def generate():\n"
        "    grid_in, grid_out = random.choice(_PAIRS)\n"
        '    return {"input": grid_in, "output": grid_out}\n'
    )


def write_generators(arcgen_dir: Path, ids: Sequence[str], out: Path) -> int:
    """``out/tasks/task_<id>.py`` per task with ARC-GEN pairs (``--generator arc-gen:out``).

    Returns:
        How many generators were written.
    """
    (out / "tasks").mkdir(parents=True)
    written = 0
    for task in ids:
        pairs = arcgen_pairs(arcgen_dir, task)
        if pairs:
            (out / "tasks" / f"task_{task}.py").write_text(generator_source(pairs))
            written += 1
    return written


def write_human_errors(tasks_dir: Path, ids: Sequence[str], out: Path) -> int:
    """An H-ARC style ``incorrect_submissions.csv`` of our own.

    Per task, its first test output with the top-left cell's color plus one (mod 10),
    count 2, so that the human-error type exists.

    Returns:
        The number of rows written.
    """
    rows = ["task_name,task_type,test_output_grid,count"]
    for task in ids:
        test = json.loads((tasks_dir / f"{task}.json").read_text())["test"][0]
        if "output" not in test:
            continue
        grid = [list(row) for row in test["output"]]
        grid[0][0] = (grid[0][0] + 1) % 10
        cells = "|".join("".join(map(str, row)) for row in grid)
        rows.append(f"{task}.json,training,|{cells}|,2")
    out.write_text("\n".join(rows) + "\n")
    return len(rows) - 1


def corrupted(grid: Grid) -> Grid:
    """A grid with every cell of its first row one color up (mod 10): never the same grid."""
    return [[(c + 1) % 10 for c in grid[0]], *(list(row) for row in grid[1:])]


def write_corruptions(tasks_dir: Path, arcgen_dir: Path, ids: Sequence[str], out: Path) -> int:
    """A ``corruptions.jsonl`` of our own, as if ``mutate`` had killed a mutant per pair.

    Per task, the first three ARC-GEN pairs whose input is no demonstration input, and the
    first one whose input is (which the build must drop: no candidate shows a
    demonstration input), each with its output :func:`corrupted`.

    Returns:
        The number of records written.
    """
    records = []
    for task in ids:
        train = [p["input"] for p in json.loads((tasks_dir / f"{task}.json").read_text())["train"]]
        pairs = list(enumerate(arcgen_pairs(arcgen_dir, task)))
        fresh = [(i, p) for i, p in pairs if p[0] not in train][:3]
        shown = [(i, p) for i, p in pairs if p[0] in train][:1]
        for index, (grid_in, grid_out) in sorted(fresh + shown, key=lambda e: e[0]):
            wrong = corrupted(grid_out)
            records.append({
                "task_id": task,
                "kind": "corrupted_verifier",
                "mutant_id": f"{task}:table:first_row_up:arc-gen-{index}",
                "split": "arc-gen",
                "index": index,
                "input": grid_in,
                "output": wrong,
                "correct_output": grid_out,
                "hamming": round(len(grid_out[0]) / (len(grid_out) * len(grid_out[0])), 6),
                "same_shape": True,
            })  # fmt: skip
    return write_jsonl(out, records)


def write_neighbours(ids: Sequence[str], out: Path) -> None:
    """Each task's neighbours: the next three task ids (cyclically), as JSON lines."""
    rows = [
        {"task_id": t, "neighbour_task_ids": [ids[(i + k) % len(ids)] for k in (1, 2, 3)]}
        for i, t in enumerate(ids)
    ]
    write_jsonl(out, rows)


# ---------------------------------------------------------------------------- grids as text


def digits(grid: Grid) -> str:
    """Rows of digits, no separators (the prompts' ``digits`` format)."""
    return "\n".join("".join(map(str, row)) for row in grid)


def compact_json(grid: Grid) -> str:
    """Nested lists without spaces (the prompts' ``json`` format)."""
    return json.dumps(grid, separators=(",", ":"))


def spaced(grid: Grid) -> str:
    """Rows of space-separated digits."""
    return "\n".join(" ".join(map(str, row)) for row in grid)


def bracketed_rows(grid: Grid) -> str:
    """``[0, 1],`` per row, the last without the comma."""
    return ",\n".join(json.dumps(row) for row in grid)


def double_spaced(grid: Grid) -> str:
    """Space-separated rows with a blank line between rows."""
    return "\n\n".join(" ".join(map(str, row)) for row in grid)


def row_labels(grid: Grid) -> str:
    """``Row N: 0 1 2`` per row."""
    return "\n".join(f"Row {i}: {' '.join(map(str, row))}" for i, row in enumerate(grid, 1))


def pipes(grid: Grid) -> str:
    """``| 0 | 1 |`` per row."""
    return "\n".join("| " + " | ".join(map(str, row)) + " |" for row in grid)


ROW_WRITERS: dict[str, Callable[[Grid], str]] = {
    "bracketed rows": bracketed_rows,
    "double spaced": double_spaced,
    "row labels": row_labels,
    "pipes": pipes,
}


def fenced(text: str, info: str = "") -> str:
    """A fenced code block."""
    return f"```{info}\n{text}\n```"


def wrong(grid: Grid) -> Grid:
    """Another grid of the same shape (every cell shifted by one colour)."""
    return [[(c + 1) % 10 for c in row] for row in grid]


# ---------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Style:
    """A reply style: one of :data:`STYLES`, and for ``mixed rows`` its row variant."""

    name: str
    variant: str = ""

    @property
    def label(self) -> str:
        """The style's name, with the variant."""
        return f"{self.name}: {self.variant}" if self.variant else self.name


def style_for(task_index: int, dimension: str) -> Style:
    """The style of an instance: rotating over dimensions and tasks."""
    dim_index = BUILT_DIMENSIONS.index(Dimension(dimension))
    name = STYLES[(task_index + dim_index) % len(STYLES)]
    variant = ROW_VARIANTS[task_index % len(ROW_VARIANTS)] if name == "mixed rows" else ""
    return Style(name, variant)


def grid_reply(grids: Sequence[tuple[str, Grid]], style: Style, lone: str = "output") -> str:
    """Labelled grids (``(label, grid)``; label ``""`` for a lone grid) in a reply style.

    Used for output grids (labels ``Test N``) and inversion (one unlabelled grid); ``lone``
    is the JSON object's key for a lone grid.
    """
    name = style.name
    if name == "fenced digits":
        parts = [(f"{label}:\n" if label else "") + fenced(digits(g)) for label, g in grids]
        return "Looking at the demonstrations, the rule is clear.\n\n" + "\n".join(parts)
    if name == "json in prose":
        said = [
            (f"for {label.lower()} it is " if label else "it is ") + json.dumps(g)
            for label, g in grids
        ]
        return "Applying the rule, " + ", and ".join(said) + "."
    if name == "rows after chatter":
        parts = [(f"{label}:\n" if label else "") + spaced(g) for label, g in grids]
        return CHATTER + "\n\n" + "\n\n".join(parts) + "\n"
    if name == "self-correction":
        first = grid_reply([(lb, wrong(g)) for lb, g in grids], Style("fenced digits"), lone)
        return first + "\n\n" + CORRECTION + "\n\n" + grid_reply(grids, Style("fenced digits"))
    if name == "json object":
        if len(grids) == 1 and not grids[0][0]:
            return fenced(json.dumps({lone: grids[0][1]}), "json")
        return fenced(json.dumps({label: g for label, g in grids}), "json")
    if name == "mixed rows":
        write = ROW_WRITERS[style.variant]
        parts = [(f"{label}:\n" if label else "Answer:\n") + write(g) for label, g in grids]
        return "My answer:\n\n" + "\n\n".join(parts)
    raise ValueError(f"unknown style {name!r}")


def output_grid_reply(answers: Sequence[Sequence[Grid]], style: Style) -> str:
    """Output grids: per test input, its attempts (in order)."""
    labelled: list[tuple[str, Grid]] = []
    for i, attempts in enumerate(answers, 1):
        for j, grid in enumerate(attempts, 1):
            label = f"Test {i}" if len(answers) > 1 else ""
            if len(attempts) > 1:
                label = f"{label or 'Output'} attempt {j}"
            labelled.append((label, grid))
    if style.name == "json object" and len(labelled) > 1:
        return fenced(json.dumps({"test_outputs": [list(a) for a in answers]}), "json")
    return grid_reply(labelled, style)


def pair_reply(pair: Mapping[str, Grid], style: Style) -> str:
    """A generated or edited pair: its input grid, then its output grid."""
    grid_in, grid_out = pair["input"], pair["output"]
    name = style.name
    if name == "fenced digits":
        return (
            "Here is the pair.\n\nInput:\n" + fenced(digits(grid_in))
            + "\nOutput:\n" + fenced(digits(grid_out))
        )  # fmt: skip
    if name == "json in prose":
        return (
            f"The input grid is {json.dumps(grid_in)} and the rule turns it into the output "
            f"grid {json.dumps(grid_out)}."
        )
    if name == "rows after chatter":
        return CHATTER + f"\n\nInput:\n{spaced(grid_in)}\nOutput:\n{spaced(grid_out)}\n"
    if name == "self-correction":
        first = pair_reply({"input": grid_in, "output": wrong(grid_out)}, Style("fenced digits"))
        return (
            first + "\n\n" + CORRECTION + "\n\n**Input grid:**\n" + fenced(digits(grid_in))
            + "\n\n**Output grid:**\n" + fenced(digits(grid_out))
        )  # fmt: skip
    if name == "json object":
        return fenced(json.dumps({"input": grid_in, "output": grid_out}), "json")
    if name == "mixed rows":
        write = ROW_WRITERS[style.variant]
        return f"Input:\n{write(grid_in)}\n\nOutput:\n{write(grid_out)}\n"
    raise ValueError(f"unknown style {name!r}")


def judgments_reply(labels: Sequence[str], style: Style) -> str:
    """Five judgments, ``valid``/``invalid``, in candidate order."""
    name = style.name

    def lines(judged: Sequence[str]) -> str:
        return "\n".join(f"Candidate {i}: {j}" for i, j in enumerate(judged, 1))

    if name == "fenced digits":  # the asked format
        return "I compared each candidate with the rule.\n\n" + lines(labels)
    if name == "json in prose":
        return f"My judgments, in candidate order: {json.dumps(list(labels))}."
    if name == "rows after chatter":
        return CHATTER + "\n\n" + " ".join(labels)
    if name == "self-correction":
        flipped = ["invalid" if j == "valid" else "valid" for j in labels]
        return lines(flipped) + "\n\n" + CORRECTION + "\n\n" + lines(labels)
    if name == "json object":
        return fenced(json.dumps({"judgments": list(labels)}), "json")
    if name == "mixed rows":
        if style.variant in ("bracketed rows", "pipes"):
            return "\n".join(f"{i}. {j.capitalize()}" for i, j in enumerate(labels, 1))
        if style.variant == "double spaced":
            return "\n\n".join(j.upper() for j in labels)
        return "\n".join(
            f"**Candidate {i}** is {'valid' if j == 'valid' else 'not valid'}"
            for i, j in enumerate(labels, 1)
        )
    raise ValueError(f"unknown style {name!r}")


WRONG_PROGRAM = "def transform(grid):\n    return grid\n"


def definition_reply(code: str, style: Style) -> str:
    """A Definition reply: the program in a code block, in one of several layouts."""
    name = style.name
    if name == "fenced digits":
        return "```python\n" + code + "```"
    if name == "json in prose":
        return "Here is the program.\n\n```python\n" + code + "```\n\nIt fits every example."
    if name == "rows after chatter":
        return CHATTER + "\n\n~~~python\n" + code + "~~~\n"
    if name == "self-correction":
        return (
            "```python\n" + WRONG_PROGRAM + "```\n\n" + CORRECTION + "\n\n```python\n"
            + code + "```"
        )  # fmt: skip
    if name == "json object":
        return "```\n" + code + "```"
    if name == "mixed rows":  # an indented fence (as in a list item), the code indented too
        indented = "".join("  " + line for line in code.splitlines(keepends=True))
        return "1. The function:\n\n  ```py\n" + indented + "  ```\n"
    raise ValueError(f"unknown style {name!r}")


# ---------------------------------------------------------------------------- oracle


@dataclass(frozen=True)
class OracleReply:
    """One oracle reply and what it must parse back to."""

    id: str
    task_id: str
    dimension: str
    style: Style
    reply: str
    expected: object  # the parsed answer (Definition: the program's code)
    tests: int = 1


def oracle_answer(instance: Mapping[str, Any], code: str) -> object | None:
    """What the oracle answers for an instance, from its key (``None``: no reference)."""
    dim, key = instance["dimension"], instance["key"]
    if dim == Dimension.OUTPUT_GRID:
        return [[grid] for grid in key["test_outputs"]]
    if dim == Dimension.DEFINITION:
        return code
    if dim == Dimension.CLASSIFICATION:
        return list(key["labels"])
    if dim == Dimension.GENERATION:
        ref = key["reference"]
        return None if ref is None else {"input": ref["input"], "output": ref["output"]}
    if dim == Dimension.EDITING:
        ref = key["reference_edit"]
        return None if ref is None else {"input": ref["input"], "output": ref["output"]}
    if dim == Dimension.INVERSION:
        return key["input"]
    raise ValueError(f"unknown dimension {dim!r}")


def render_reply(dimension: str, answer: Any, style: Style) -> str:
    """An answer of a dimension as a reply in a style."""
    if dimension == Dimension.OUTPUT_GRID:
        return output_grid_reply(answer, style)
    if dimension == Dimension.DEFINITION:
        return definition_reply(answer, style)
    if dimension == Dimension.CLASSIFICATION:
        return judgments_reply(answer, style)
    if dimension in (Dimension.GENERATION, Dimension.EDITING):
        return pair_reply(answer, style)
    return grid_reply([("", answer)], style, "input")


def oracle_replies(
    instances: Sequence[Mapping[str, Any]], tasks_dir: Path, arcgen_dir: Path
) -> tuple[list[OracleReply], list[str]]:
    """The oracle's replies, and the ids of instances it cannot answer (no reference)."""
    task_ids = sorted({i["task_id"] for i in instances})
    index = {t: n for n, t in enumerate(task_ids)}
    replies, unanswerable = [], []
    for instance in instances:
        task, dim = instance["task_id"], instance["dimension"]
        prompt = f"{task}/{dim}"
        code = ""
        if dim == Dimension.DEFINITION:
            code = lookup_source(known_pairs(tasks_dir, arcgen_dir, task))
        answer = oracle_answer(instance, code)
        if answer is None:
            unanswerable.append(prompt)
            continue
        style = style_for(index[task], dim)
        tests = len(instance["prompt"].get("test_inputs", [])) or 1
        text = render_reply(dim, answer, style)
        replies.append(OracleReply(prompt, task, dim, style, text, answer, tests))
    return replies, unanswerable


def parse_back(reply: OracleReply, attempts: int = 1) -> tuple[object, str]:
    """What arcjudge reads from a reply: ``(answer, how)`` (Definition: the code)."""
    if reply.dimension == Dimension.DEFINITION:
        extraction = extract_program(reply.reply, DEFINITION_ENTRY_POINTS)
        return extraction.code, f"code: {extraction.reason}"
    parsed = parse_reply(reply.dimension, reply.reply, tests=reply.tests, attempts=attempts)
    return parsed.answer, parsed.how


def reply_records(model: str, replies: Iterable[OracleReply]) -> Iterator[dict[str, Any]]:
    """Lines of a replies file (``{id, model, run, reply}``)."""
    for reply in replies:
        yield {"id": reply.id, "model": model, "run": 1, "reply": reply.reply}


# ---------------------------------------------------------------------------- leaks


GENERIC_WORDS = frozenset({"valid", "invalid", "input", "output", "train", "test", "arc-gen"})
"""Key strings the templates use in their own sense (labels are checked bound to candidates)."""


def leaks(
    prompt: Mapping[str, Any],
    instance: Mapping[str, Any],
    test_outputs: Sequence[Grid],
    fmt: str,
    looked_for: Counter[str] | None = None,
) -> list[str]:
    """What of the key (and of the task's test outputs) appears in a prompt's messages.

    A grid appears when its rendering in the prompt's grid format is a code block of the
    prompt (JSON: anywhere); key grids that are model-visible anyway (shown material) are
    not leaks. ``looked_for`` counts the hidden grids, key strings and labels looked for.
    """
    text = "\n".join(m["content"] for m in prompt["messages"])
    lowered = text.lower()
    visible = {compact_json(g) for g in grids_in(prompt["model_visible"])}
    looked_for = Counter() if looked_for is None else looked_for
    found = []
    for grid in [*grids_in(instance["key"]), *test_outputs]:
        if compact_json(grid) in visible:
            continue
        looked_for["hidden grids"] += 1
        shown = digits(grid) if fmt == "digits" else compact_json(grid)
        if fenced(shown) in text or (fmt == "json" and shown in text):
            found.append(f"{prompt['id']} ({fmt}): grid {compact_json(grid)[:60]}")
    strings = set(strings_in(instance["key"])) - GENERIC_WORDS
    looked_for["key strings"] += len(strings)
    for value in strings:
        for form in {value.lower(), value.lower().replace("_", " ")}:
            if form and form in lowered:
                found.append(f"{prompt['id']} ({fmt}): key string {value!r}")
    if instance["dimension"] == Dimension.CLASSIFICATION:
        looked_for["candidate labels"] += len(instance["key"]["labels"])
        for n, label in enumerate(instance["key"]["labels"], 1):
            for claim in (f"candidate {n}: {label}", f"candidate {n} is {label}"):
                if claim in lowered:
                    found.append(f"{prompt['id']} ({fmt}): label {claim!r}")
    return found


# ---------------------------------------------------------------------------- demonstrations


def _demonstration_hit(task: Mapping[str, Any], first: int) -> bool:
    """Plain Python: every test output is one of the first ``first`` train outputs."""
    shown = [pair["output"] for pair in task["train"][:first]]
    return all(pair["output"] in shown for pair in task["test"])


def demonstration_replies(
    instances: Sequence[Mapping[str, Any]], tasks_dir: Path, first: int
) -> list[OracleReply]:
    """Output-grid replies: per test input, the first ``first`` demonstrations' outputs."""
    grid_instances = [i for i in instances if i["dimension"] == Dimension.OUTPUT_GRID]
    task_ids = sorted({i["task_id"] for i in grid_instances})
    replies = []
    for n, task_id in enumerate(task_ids):
        task = json.loads((tasks_dir / f"{task_id}.json").read_text())
        outputs = [pair["output"] for pair in task["train"][:first]]
        answer = [list(outputs) for _ in task["test"]]
        style = style_for(n, Dimension.OUTPUT_GRID)
        text = output_grid_reply(answer, style)
        prompt = f"{task_id}/{Dimension.OUTPUT_GRID}"
        replies.append(
            OracleReply(prompt, task_id, Dimension.OUTPUT_GRID, style, text, answer,
                        len(task["test"]))
        )  # fmt: skip
    return replies


def demonstration_expected(tasks_dir: Path, task_ids: Iterable[str], first: int) -> set[str]:
    """The tasks the demonstration replies answer right, by plain Python over the task files."""
    return {
        t
        for t in task_ids
        if _demonstration_hit(json.loads((tasks_dir / f"{t}.json").read_text()), first)
    }


# ---------------------------------------------------------------------------- junk

JUNK_TEXT: tuple[object, ...] = (
    None,
    42,
    ["not", "text"],
    {"reply": "nested"},
    "",
    "   \n\n\t",
    "\ud800\x00 lone surrogate and a NUL",
    "[[1, 2], [3]]",
    "[[10, 1], [1, 1]]",
    "1 2\n3",
    "[[" * 2000,
    "Candidate 1: valid\nCandidate 2: invalid",
    fenced("\n".join("1" * (MAX_REPLY_SIDE + 1) for _ in range(3))),  # too wide
    "I cannot solve this one.",
)
"""Replies no parser can read an answer from (every dimension but Definition)."""

JUNK_PROGRAMS: tuple[object, ...] = (
    None,
    "I cannot write this program.",
    fenced("def transform(grid:\n    return grid", "python"),
    fenced("def transform(grid):\n    raise RuntimeError('no')", "python"),
    fenced("def transform(grid):\n    return 'not a grid'", "python"),
    fenced("import os\nos._exit(3)\ndef transform(grid):\n    return grid", "python"),
    fenced("transform = 5", "python"),
    fenced("def transform(grid):\n    return [[10]]", "python"),
)
"""Definition replies whose program cannot pass (no code, no compile, raises, exits...)."""


def junk_records(instances: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One junk reply per instance (model ``junk``), rotating over the lists above."""
    records = []
    for n, instance in enumerate(instances):
        dim = instance["dimension"]
        pool = JUNK_PROGRAMS if dim == Dimension.DEFINITION else JUNK_TEXT
        reply = pool[n % len(pool)]
        if dim == Dimension.EDITING and n % 3 == 0:
            reply = pair_reply(instance["prompt"], Style("fenced digits"))  # not repaired
        record = {"id": f"{instance['task_id']}/{dim}", "model": "junk", "run": 1, "reply": reply}
        records.append(record)
    return records


# ---------------------------------------------------------------------------- the pipeline


@dataclass
class PipelineReport:
    """What :func:`run_pipeline` found; ``problems`` is empty when every check held."""

    tasks: int = 0
    validated: int = 0
    instances: Counter[str] = field(default_factory=Counter)
    prompts: dict[str, Counter[str]] = field(default_factory=dict)
    looked_for: Counter[str] = field(default_factory=Counter)  # by the leak check
    replies: Counter[str] = field(default_factory=Counter)  # per dimension
    parsed_back: Counter[str] = field(default_factory=Counter)
    scored: Counter[str] = field(default_factory=Counter)  # oracle items graded
    passed: Counter[str] = field(default_factory=Counter)
    unanswerable: Counter[str] = field(default_factory=Counter)
    styles: Counter[str] = field(default_factory=Counter)  # style label -> replies
    style_dimensions: Counter[tuple[str, str]] = field(default_factory=Counter)
    hows: Counter[tuple[str, str]] = field(default_factory=Counter)  # (dimension, how)
    demonstrations: dict[str, dict[str, Any]] = field(default_factory=dict)
    junk: dict[str, Any] = field(default_factory=dict)
    steps: list[tuple[str, float, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        """Record a failed check."""
        self.problems.append(text)


def _items(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(i["model"], i["task_id"], i["dimension"]): i for i in read_jsonl(path)}


def run_pipeline(
    data_tasks: Path,
    data_arcgen: Path,
    ids: Sequence[str],
    root: Path,
    run: Runner,
    box: Sequence[str] = (),
) -> PipelineReport:
    """Every step of the acceptance check in ``root`` (a new or empty directory).

    Args:
        data_tasks: The ARC-AGI-1 training task directory.
        data_arcgen: The ARC-GEN stable-set directory.
        ids: The tasks to use.
        root: The work directory.
        run: Runs one ``arcjudge`` command.
        box: Options for the sandboxed commands (``--backend``, ``--workers``...).
    """
    report = PipelineReport(tasks=len(ids))

    def step(name: str, argv: list[str]) -> None:
        start = time.perf_counter()
        printed = run(argv)
        report.steps.append((name, time.perf_counter() - start, printed))

    def timed(name: str, start: float) -> None:
        report.steps.append((name, time.perf_counter() - start, ""))

    start = time.perf_counter()
    copy_inputs(data_tasks, data_arcgen, ids, root)
    tasks, arcgen = root / "tasks", root / "arcgen"
    write_verifiers(tasks, arcgen, root / "tables")
    write_neighbours(list(ids), root / "neighbours.jsonl")
    timed("write inputs and lookup verifiers", start)
    common = ["--tasks", str(tasks), "--arcgen", str(arcgen)]
    step("validate", ["validate", *common, "--source", f"table=module:{root / 'tables'}",
                      "--out", str(root / "val"), *box])  # fmt: skip
    verdicts = read_jsonl(root / "val" / "verdicts.jsonl")
    report.validated = sum(v["verdict"] == "valid" for v in verdicts)
    for v in verdicts:
        if v["verdict"] != "valid":
            report.problem(f"validate: {v['task_id']} table verifier is {v['verdict']}")
    step("dimensions build", ["dimensions", "build", *common, "--manifest", str(root / "val"),
                              "--neighbours", str(root / "neighbours.jsonl"),
                              "--out", str(root / "dims"), *box])  # fmt: skip
    instances_file = root / "dims" / "instances.jsonl"
    instances = read_jsonl(instances_file)
    report.instances.update(i["dimension"] for i in instances)
    for dim in BUILT_DIMENSIONS:
        if report.instances[dim] == 0:
            report.problem(f"build: no {dim} instance")
    by_id = {f"{i['task_id']}/{i['dimension']}": i for i in instances}

    # prompts in both grid formats, and the leak check
    test_outputs = {
        t: [p["output"] for p in json.loads((tasks / f"{t}.json").read_text())["test"]] for t in ids
    }
    for fmt in ("digits", "json"):
        out = root / f"prompts-{fmt}.jsonl"
        step(f"dimensions prompts ({fmt})", ["dimensions", "prompts", "--instances",
             str(instances_file), "--tasks", str(tasks), "--out", str(out),
             "--grid-format", fmt])  # fmt: skip
        start = time.perf_counter()
        prompts = read_jsonl(out)
        report.prompts[fmt] = Counter(p["dimension"] for p in prompts)
        if sorted(p["id"] for p in prompts) != sorted(by_id):
            report.problem(f"prompts ({fmt}): the prompt ids are not the instance ids")
        for prompt in prompts:
            instance = by_id.get(prompt["id"])
            if instance is not None:
                outputs = test_outputs[prompt["task_id"]]
                found = leaks(prompt, instance, outputs, fmt, report.looked_for)
                report.problems.extend(f"leak: {text}" for text in found)
        timed(f"leak check ({fmt})", start)

    # oracle replies: written, parsed back here, scored by arcjudge
    start = time.perf_counter()
    replies, unanswerable = oracle_replies(instances, tasks, arcgen)
    report.unanswerable.update(p.rsplit("/", 1)[1] for p in unanswerable)
    write_jsonl(root / "oracle-replies.jsonl", reply_records("oracle", replies))
    timed("write oracle replies", start)
    start = time.perf_counter()
    direct: dict[str, str] = {}
    for reply in replies:
        report.replies[reply.dimension] += 1
        report.styles[reply.style.label] += 1
        report.style_dimensions[(reply.style.name, reply.dimension)] += 1
        answer, how = parse_back(reply)
        direct[reply.id] = how
        report.hows[(reply.dimension, how)] += 1
        if answer == reply.expected:
            report.parsed_back[reply.dimension] += 1
        else:
            report.problem(
                f"parse-back: {reply.id} ({reply.style.label}) read as {how!r}: "
                f"{json.dumps(answer)[:120]}, expected {json.dumps(reply.expected)[:120]}"
            )
    timed("parse back", start)
    step("dimensions score (oracle)", ["dimensions", "score", "--instances", str(instances_file),
         "--replies", str(root / "oracle-replies.jsonl"), "--out", str(root / "scored"),
         *box])  # fmt: skip
    items = _items(root / "scored" / "items.jsonl")
    for reply in replies:
        item = items.get(("oracle", reply.task_id, reply.dimension))
        if item is None:
            report.problem(f"score: no item for {reply.id}")
            continue
        report.scored[reply.dimension] += 1
        if item["passed"]:
            report.passed[reply.dimension] += 1
        else:
            report.problem(f"score: oracle {reply.id} ({reply.style.label}): {item['reason']}")
        if item.get("how") != direct[reply.id]:
            report.problem(
                f"score: {reply.id} read as {item.get('how')!r}, parsed here as "
                f"{direct[reply.id]!r}"
            )
    for prompt in unanswerable:
        task, dim = prompt.rsplit("/", 1)
        item = items.get(("oracle", task, dim))
        if item is None or item["passed"] or item["reason"] != "no answer":
            report.problem(f"score: unanswered {prompt} graded {item}")

    # demonstrations' outputs as output-grid answers: pass@1 and pass@2
    grid_tasks = sorted(i["task_id"] for i in instances if i["dimension"] == Dimension.OUTPUT_GRID)
    for first in (1, 2):
        name = f"first {first} demonstration(s), pass@{first}"
        demo = demonstration_replies(instances, tasks, first)
        path = root / f"demonstrations-{first}.jsonl"
        write_jsonl(path, reply_records("demonstrations", demo))
        for reply in demo:
            answer, how = parse_back(reply, first)
            if answer != reply.expected:
                report.problem(f"demonstrations {first}: {reply.id} read as {how!r}")
        out = root / f"scored-demonstrations-{first}"
        step(f"dimensions score ({name})", ["dimensions", "score", "--instances",
             str(instances_file), "--replies", str(path), "--attempts", str(first),
             "--out", str(out), *box])  # fmt: skip
        passed = {t for (_, t, _), i in _items(out / "items.jsonl").items() if i["passed"]}
        expected = demonstration_expected(tasks, grid_tasks, first)
        summary = json.loads((out / "summary.json").read_text())
        grid = summary["models"]["demonstrations"]["dimensions"][Dimension.OUTPUT_GRID]
        want = round(len(expected) / len(grid_tasks), 6) if grid_tasks else None
        report.demonstrations[name] = {
            "passed": sorted(passed),
            "expected": sorted(expected),
            "accuracy": grid["accuracy"],
            "expected_accuracy": want,
            "total": grid["total"],
        }
        if passed != expected or grid["accuracy"] != want or grid["total"] != len(grid_tasks):
            report.problem(
                f"demonstrations {first}: passed {sorted(passed)} (accuracy {grid['accuracy']}"
                f" of {grid['total']}), the task files say {sorted(expected)} ({want})"
            )

    # junk: the run finishes and fails every junk item
    path = root / "junk-replies.jsonl"
    write_jsonl(path, junk_records(instances))
    step("dimensions score (junk)", ["dimensions", "score", "--instances", str(instances_file),
         "--replies", str(path), "--out", str(root / "scored-junk"), *box])  # fmt: skip
    junk = [i for i in read_jsonl(root / "scored-junk" / "items.jsonl") if i["model"] == "junk"]
    reasons = Counter(str(i["reason"]).split(":")[0].split(" (")[0] for i in junk)
    report.junk = {"items": len(junk), "passed": sum(i["passed"] for i in junk),
                   "reasons": dict(reasons.most_common())}  # fmt: skip
    if len(junk) != len(instances):
        report.problem(f"junk: {len(junk)} items for {len(instances)} instances")
    for item in junk:
        if item["passed"] or not item["reason"]:
            report.problem(f"junk: {item['task_id']}/{item['dimension']} passed or no reason")
    return report
