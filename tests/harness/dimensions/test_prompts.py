"""``arcjudge dimensions prompts``: instances -> chat prompts, with nothing of the key in them.

The instances are built from the bundled sample (validate, mutate, dimensions build with
an H-ARC file and a neighbours file of our own, so every candidate type occurs), plus
output-grid instances made by hand when the build makes none, and one of a task of our
own with two test inputs.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.grids import to_grid, to_lists
from arcjudge.harness.core.extract import extract_program
from arcjudge.harness.dimensions.grading import read_instances
from arcjudge.harness.dimensions.gridtext import grid_text
from arcjudge.harness.dimensions.prompts import (
    PLACEHOLDERS,
    TEMPLATE_DIR,
    TEMPLATE_NAMES,
    Prompt,
    load_templates,
    prompt_lines,
    read_prompts,
    render_messages,
    render_prompt,
    render_prompts,
)
from arcjudge.harness.dimensions.records import DimensionInstance, VerifierSpec, prompt_id
from arcjudge.harness.dimensions.replies import parse_grid, parse_pair
from arcjudge.harness.dimensions.strategies.classification import parse_judgments
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.tasks import Task, load_task
from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    CANDIDATE_KINDS,
    DEFINITION_ENTRY_POINTS,
    GRID_FORMATS,
    Dimension,
)
from tests.support.helpers import grids_in, strings_in

SAMPLE = sample_dir()
SOURCES = [
    f"re-arc=re-arc:{SAMPLE / 're-arc'}",
    f"golf=golf:{SAMPLE / 'golf'}",
    f"module=module:{SAMPLE / 'module'}",
]
OWN_TASK = "ffff0002"  # ours: each row reversed; two test pairs
OWN_GRIDS = {
    "train": [([[1, 2, 0], [0, 3, 4]], [[0, 2, 1], [4, 3, 0]]), ([[5, 6]], [[6, 5]])],
    "test": [
        ([[7, 0, 0, 8]], [[8, 0, 0, 7]]),
        ([[9, 1], [2, 9], [3, 3]], [[1, 9], [9, 2], [3, 3]]),
    ],
}


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


@pytest.fixture(scope="module")
def tasks_dir(tmp_path_factory) -> Path:
    """The sample's tasks and our own two-test task."""
    root = tmp_path_factory.mktemp("prompt-tasks")
    for path in (SAMPLE / "tasks").glob("*.json"):
        shutil.copy(path, root)
    own = {
        split: [{"input": i, "output": o} for i, o in pairs] for split, pairs in OWN_GRIDS.items()
    }
    (root / f"{OWN_TASK}.json").write_text(json.dumps(own))
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """instances.jsonl of the sample: validate, mutate, dimensions build."""
    root = tmp_path_factory.mktemp("prompts")
    args = [x for s in SOURCES for x in ("--source", s)]
    tasks = str(SAMPLE / "tasks")
    run_cli("validate", "--tasks", tasks, *args, "--out", str(root / "val"))
    run_cli(
        "mutate",
        "--tasks",
        tasks,
        *args,
        "--manifest",
        str(root / "val"),
        "--out",
        str(root / "mut"),
    )
    harc = root / "incorrect_submissions.csv"
    harc.write_text(
        "task_name,task_type,test_output_grid,count\n"
        "0d3d703e.json,training,|123|123|123|,3\n"
        "c8f0f002.json,training,|10|01|,2\n"
    )
    neighbours = root / "neighbours.jsonl"
    neighbours.write_text(
        '{"task_id": "0d3d703e", "neighbour_task_ids": ["c8f0f002", "74dd1130"]}\n'
        '{"task_id": "3c9b0459", "neighbour_task_ids": ["67a3c6ac"]}\n'
    )
    run_cli(
        "dimensions",
        "build",
        "--tasks",
        tasks,
        "--manifest",
        str(root / "val"),
        "--corruptions",
        str(root / "mut" / "corruptions.jsonl"),
        "--human-errors",
        str(harc),
        "--neighbours",
        str(neighbours),
        "--out",
        str(root / "dims"),
    )
    return root / "dims" / "instances.jsonl"


def output_grid_instance(task: Task) -> DimensionInstance:
    """An output-grid instance as ``dimensions build`` describes it, made by hand."""
    return DimensionInstance(
        task.task_id,
        Dimension.OUTPUT_GRID,
        77,
        VerifierSpec("module", "module", "/nowhere"),
        {"test_inputs": [to_lists(p.input) for p in task.test]},
        {"test_outputs": [to_lists(p.output) for p in task.test if p.output is not None]},
    )


@pytest.fixture(scope="module")
def instances(built, tasks_dir) -> list[DimensionInstance]:
    found = list(read_instances(built).values())
    made = [output_grid_instance(load_task(tasks_dir / f"{OWN_TASK}.json"))]
    if not any(i.dimension is Dimension.OUTPUT_GRID for i in found):  # not built yet
        made += [output_grid_instance(load_task(p)) for p in sorted((SAMPLE / "tasks").glob("*"))]
    return found + made


@pytest.fixture(scope="module")
def tasks(tasks_dir) -> dict[str, Task]:
    return {p.stem: load_task(p) for p in tasks_dir.glob("*.json")}


@pytest.fixture(scope="module")
def prompts(instances, tasks_dir) -> dict[str, list[Prompt]]:
    return {fmt: render_prompts(instances, tasks_dir, fmt) for fmt in GRID_FORMATS}


def by_id(instances: list[DimensionInstance]) -> dict[str, DimensionInstance]:
    return {prompt_id(i.task_id, i.dimension): i for i in instances}


# ---------------------------------------------------------------------------- leaks


# Words the templates use in their own sense; the labels' binding to candidates is checked
# separately. (The key's field names are not checked: "row", "kind" are plain English.)
GENERIC_WORDS = {"valid", "invalid", "input", "output", "train", "test"}


def shown(grid: list[list[int]], fmt: str) -> str:
    """How a grid would appear in a prompt: every grid is rendered in its own code block.

    (In the digits format a bare substring test would also match a run of rows of a
    larger grid; the fenced rendering matches exactly one whole grid. JSON renderings
    cannot occur inside another grid's: they start with ``[[``.)
    """
    return f"```\n{grid_text(grid, fmt)}\n```"


def leaks(prompt: Prompt, instance: DimensionInstance, task: Task, fmt: str) -> list[str]:
    """What of the instance's key (and the task's test outputs) appears in the prompt.

    Key grids that are also model-visible are not leaks and are left out: an Editing
    reference repair keeps the shown input, a Generation reference may share an output
    with a demonstration, an Inversion instance made from the test pair shows the test
    output, an instance-mismatch candidate shows a demonstration's output...
    """
    text = "\n".join(m["content"] for m in prompt.messages)
    lowered = text.lower()
    visible = {json.dumps(g) for g in grids_in(prompt.model_visible)}
    hidden = [*grids_in(dict(instance.key)), *(to_lists(p.output) for p in task.test if p.output)]
    found = []
    for grid in hidden:
        if json.dumps(grid) in visible:
            continue
        if shown(grid, fmt) in text or (fmt == "json" and grid_text(grid, fmt) in text):
            found.append(f"grid {grid}")
    for value in set(strings_in(dict(instance.key))) - GENERIC_WORDS:
        for form in {value.lower(), value.lower().replace("_", " ")}:
            if form in lowered:
                found.append(f"string {value!r}")
    if instance.dimension is Dimension.CLASSIFICATION:
        for n, label in enumerate(instance.labels(), 1):
            for claim in (f"candidate {n}: {label}", f"candidate {n} is {label}"):
                if claim in lowered:
                    found.append(f"label {claim!r}")
    return found


def hidden_grids(prompt: Prompt, instance: DimensionInstance, task: Task | None) -> list:
    """The key's grids (and the task's test outputs) that are not model-visible."""
    visible = {json.dumps(g) for g in grids_in(prompt.model_visible)}
    tests = [to_lists(p.output) for p in task.test if p.output] if task else []
    return [g for g in [*grids_in(dict(instance.key)), *tests] if json.dumps(g) not in visible]


def test_every_dimension_and_candidate_type_is_rendered(instances, prompts):
    for fmt in GRID_FORMATS:
        assert {p.dimension for p in prompts[fmt]} == set(BUILT_DIMENSIONS)
        assert len(prompts[fmt]) == len(instances)
    kinds = {k for i in instances if i.dimension is Dimension.CLASSIFICATION for k in i.kinds()}
    assert kinds == set(CANDIDATE_KINDS)
    editing = {i.key["kind"] for i in instances if i.dimension is Dimension.EDITING}
    assert len(editing) >= 2


@pytest.mark.parametrize("fmt", GRID_FORMATS)
def test_no_hidden_label_reference_or_expected_output_is_in_any_prompt(
    fmt, instances, prompts, tasks
):
    instance_of = by_id(instances)
    checked = dict.fromkeys(BUILT_DIMENSIONS, 0)
    for prompt in prompts[fmt]:
        instance = instance_of[prompt.id]
        task = tasks[prompt.task_id]
        assert leaks(prompt, instance, task, fmt) == [], prompt.id
        checked[prompt.dimension] += len(hidden_grids(prompt, instance, task))
    # The check had hidden grids to look for in every dimension (test outputs at least).
    assert all(n > 0 for n in checked.values()), checked


def test_the_leak_check_finds_a_leak(instances, prompts, tasks):
    instance_of = by_id(instances)
    for fmt in GRID_FORMATS:
        for dimension in (Dimension.EDITING, Dimension.INVERSION, Dimension.OUTPUT_GRID):
            prompt = next(
                p
                for p in prompts[fmt]
                if p.dimension is dimension and hidden_grids(p, instance_of[p.id], None)
            )
            instance, task = instance_of[prompt.id], tasks[prompt.task_id]
            secret = hidden_grids(prompt, instance, None)[0]
            tampered = Prompt(
                prompt.id,
                prompt.task_id,
                prompt.dimension,
                (*prompt.messages, {"role": "user", "content": shown(secret, fmt)}),
                prompt.model_visible,
            )
            assert leaks(tampered, instance, task, fmt) != []
    classification = next(p for p in prompts["digits"] if p.dimension is Dimension.CLASSIFICATION)
    instance = instance_of[classification.id]
    for extra in (f"Candidate 1: {instance.labels()[0]}", instance.kinds()[0].replace("_", " ")):
        if extra in GENERIC_WORDS:
            continue
        tampered = Prompt(
            classification.id,
            classification.task_id,
            classification.dimension,
            (*classification.messages, {"role": "user", "content": extra}),
            classification.model_visible,
        )
        assert leaks(tampered, instance, tasks[classification.task_id], "digits") != []


def scrambled(key: dict[str, Any]) -> dict[str, Any]:
    """Another key of the same shape: labels flipped, every grid replaced, strings changed."""

    def change(value: object) -> object:
        if isinstance(value, list):
            if value and all(
                isinstance(r, list) and r and all(type(c) is int for c in r) for r in value
            ):
                return [[(c + 1) % 10 for c in row] for row in value]
            return [change(v) for v in value]
        if isinstance(value, dict):
            return {k: change(v) for k, v in value.items()}
        if value == "valid":
            return "invalid"
        if value == "invalid":
            return "valid"
        if isinstance(value, str):
            return value + "-other"
        return value

    return change(key)


def test_prompts_do_not_depend_on_the_key(instances, tasks):
    for instance in instances:
        task = tasks[instance.task_id]
        for other_key in ({}, scrambled(dict(instance.key))):
            other = DimensionInstance(
                instance.task_id,
                instance.dimension,
                instance.seed + 1,
                VerifierSpec("x", "y", "/z"),
                instance.prompt,
                other_key,
            )
            for fmt in GRID_FORMATS:
                assert render_prompt(other, task, fmt) == render_prompt(instance, task, fmt)


def test_model_visible_is_the_material_and_renders_the_messages_again(prompts, instances, tasks):
    material = {
        Dimension.OUTPUT_GRID: "test_inputs",
        Dimension.DEFINITION: "test_inputs",
        Dimension.CLASSIFICATION: "candidates",
        Dimension.GENERATION: "avoid",
        Dimension.EDITING: "pair",
        Dimension.INVERSION: "output",
    }
    instance_of = by_id(instances)
    for fmt in GRID_FORMATS:
        for prompt in prompts[fmt]:
            instance, task = instance_of[prompt.id], tasks[prompt.task_id]
            assert set(prompt.model_visible) == {"demonstrations", material[prompt.dimension]}
            assert prompt.model_visible["demonstrations"] == [
                {"input": to_lists(p.input), "output": to_lists(p.output)} for p in task.train
            ]
            if prompt.dimension is Dimension.DEFINITION:
                assert prompt.model_visible["test_inputs"] == [to_lists(p.input) for p in task.test]
            elif prompt.dimension is not Dimension.EDITING:
                key = material[prompt.dimension]
                assert prompt.model_visible[key] == instance.prompt[key]
            else:
                assert prompt.model_visible["pair"] == dict(instance.prompt)
            assert render_messages(prompt.dimension, prompt.model_visible, fmt) == prompt.messages
            assert [m["role"] for m in prompt.messages] == ["system", "user"]
            assert prompt.id == f"{prompt.task_id}/{prompt.dimension}"
            # every grid shown is rendered, in its own code block
            content = prompt.messages[1]["content"]
            for grid in grids_in(prompt.model_visible):
                assert shown(grid, fmt) in content


# ---------------------------------------------------------------------------- answer formats


def oracle_reply(prompt: Prompt, answers: list[str]) -> str:
    """A reply in exactly the asked format: the prompt's answer skeleton, filled in.

    The skeleton is what follows the "Answer format:" paragraph; each ``<...>`` in it is
    replaced by the next answer. Some reasoning comes first, as the system message allows.
    """
    content = prompt.messages[1]["content"]
    tail = content[content.rindex("\nAnswer format:") :].split("\n\n", 1)[1]
    holes = re.findall(r"<[^<>\n]+>", tail)
    assert len(holes) == len(answers), (prompt.id, holes)
    for hole, answer in zip(holes, answers, strict=True):
        tail = tail.replace(hole, answer, 1)
    return "Looking at the demonstrations, the rule is clear.\n\n" + tail


def test_an_oracle_reply_in_the_asked_format_parses_back(prompts, instances, tasks):
    instance_of = by_id(instances)
    for fmt in GRID_FORMATS:
        for prompt in prompts[fmt]:
            instance, task = instance_of[prompt.id], tasks[prompt.task_id]
            key = instance.key
            dimension = prompt.dimension
            if dimension is Dimension.OUTPUT_GRID:
                expected = key["test_outputs"]
                reply = oracle_reply(prompt, [grid_text(g, fmt) for g in expected])
                if len(expected) == 1:
                    assert parse_grid(reply).answer == expected[0]
                else:  # labelled "Test N:"; the lead's output-grid parser reads these too
                    parts = re.split(r"^Test \d+:$", reply, flags=re.MULTILINE)[1:]
                    assert [parse_grid(p).answer for p in parts] == expected
            elif dimension is Dimension.CLASSIFICATION:
                labels = [str(label) for label in instance.labels()]
                assert parse_judgments(oracle_reply(prompt, labels)).answer == labels
            elif dimension in (Dimension.GENERATION, Dimension.EDITING):
                pair = key.get("reference") or key.get("reference_edit") or instance.prompt
                if "input" not in pair:  # no reference: a demonstration stands in
                    pair = prompt.model_visible["demonstrations"][0]
                pair = {"input": pair["input"], "output": pair["output"]}
                reply = oracle_reply(prompt, [grid_text(pair[s], fmt) for s in pair])
                assert parse_pair(reply).answer == pair
            elif dimension is Dimension.INVERSION:
                reply = oracle_reply(prompt, [grid_text(key["input"], fmt)])
                assert parse_grid(reply).answer == key["input"]
            else:
                body = "return [row[::-1] for row in grid]"
                extraction = extract_program(oracle_reply(prompt, [body]), DEFINITION_ENTRY_POINTS)
                assert extraction.code == f"def transform(grid):\n    {body}\n"
                compile(extraction.code, "<reply>", "exec")  # compiled, never run
            assert task.task_id == prompt.task_id


def test_several_test_inputs_are_labelled(prompts):
    for fmt in GRID_FORMATS:
        prompt = next(p for p in prompts[fmt] if p.id == f"{OWN_TASK}/output_grid")
        content = prompt.messages[1]["content"]
        assert "Test 1:\n```\n<output grid for test input 1>\n```" in content
        assert "Test 2:\n```\n<output grid for test input 2>\n```" in content
        single = next(p for p in prompts[fmt] if p.id == "0d3d703e/output_grid")
        assert "Test 1:" not in single.messages[1]["content"]


# ---------------------------------------------------------------------------- grids


def test_grid_text_formats():
    grid = ((0, 1, 2), (3, 4, 0))
    assert grid_text(grid, "digits") == "012\n340"
    assert grid_text([[0, 1, 2], [3, 4, 0]], "json") == "[[0,1,2],[3,4,0]]"
    with pytest.raises(ValueError):
        grid_text(grid, "xml")
    big = tuple(tuple((r * 7 + c) % 10 for c in range(30)) for r in range(30))
    for g in (((5,),), grid, big):
        for fmt in GRID_FORMATS:
            assert to_grid(parse_grid(f"```\n{grid_text(g, fmt)}\n```").answer) == g


# ---------------------------------------------------------------------------- files


def prompts_cli(*argv: str) -> int:
    return cli.main(["dimensions", "prompts", *argv])


def test_same_inputs_same_bytes_and_the_file_reads_back(built, tmp_path, capsys):
    out = [tmp_path / "a" / "prompts.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"]
    args = ["--instances", str(built), "--tasks", str(SAMPLE / "tasks")]
    assert prompts_cli(*args, "--out", str(out[0])) == 0
    summary = capsys.readouterr().out
    assert "60 prompts: output_grid 10, definition 10, classification 10" in summary
    assert prompts_cli(*args, "--out", str(out[1]), "--grid-format", "digits") == 0
    assert prompts_cli(*args, "--out", str(out[2]), "--grid-format", "json") == 0
    assert out[0].read_bytes() == out[1].read_bytes()
    assert out[0].read_bytes() != out[2].read_bytes()
    assert out[0].stat().st_mode & 0o777 == 0o600
    records = [json.loads(line) for line in out[0].read_text().splitlines()]
    assert all(
        sorted(r) == ["dimension", "id", "messages", "model_visible", "task_id"] for r in records
    )
    read = read_prompts(out[0])
    assert prompt_lines(read) == out[0].read_text()
    assert read == render_prompts(read_instances(built).values(), SAMPLE / "tasks")


@pytest.mark.parametrize("listed", [False, True], ids=["as-demonstrations", "as-avoid"])
def test_after_lists_the_accepted_pairs_and_nothing_of_the_key(
    built, tasks, tmp_path, capsys, listed
):
    """``prompts --after ITEMS --model M``: M's accepted pairs, and still no key material.

    By default (the study's protocol) each accepted pair is one more demonstration;
    ``--after-shown-as avoid`` lists it after them as a pair not to copy.
    """
    built_instances = list(read_instances(built).values())
    generation = [i for i in built_instances if i.dimension is Dimension.GENERATION]
    accepted: dict[str, dict] = {}
    items = []
    for n, instance in enumerate(generation):
        # pairs of our own (no key grid: 2x3 grids of this pattern are in no sample task)
        pair = {"input": [[n % 10, 7, 7], [8, 8, 8]], "output": [[8, 8, 8], [7, 7, n % 10]]}
        accepted[instance.task_id] = pair
        refused = {"input": [[9, 9, 9], [9, n % 10, 9]], "output": [[1, 1, 1], [1, 1, 1]]}
        other = {"input": [[6, 6, 6], [6, 6, n % 10]], "output": [[2, 2, 2], [2, 2, 2]]}
        for model, passed, given in (("m", True, pair), ("m", False, refused), ("x", True, other)):
            items.append(
                {
                    "model": model,
                    "run": "1",
                    "task_id": instance.task_id,
                    "dimension": "generation",
                    "passed": passed,
                    "reason": None if passed else "wrong",
                    "detail": {"pair": given},
                }
            )
    after = tmp_path / "items.jsonl"
    after.write_text("".join(json.dumps(i) + "\n" for i in items))
    args = ["--instances", str(built), "--tasks", str(SAMPLE / "tasks"), "--after", str(after)]
    how = ["--after-shown-as", "avoid"] if listed else []
    for fmt in GRID_FORMATS:
        out = tmp_path / f"{fmt}.jsonl"
        assert (
            prompts_cli(*args, *how, "--model", "m", "--grid-format", fmt, "--out", str(out)) == 0
        )
        said = f"{len(generation)} pair(s) m run 1 had accepted added to the Generation prompts"
        said += f" of {len(generation)} task(s) as "
        said += "pairs not to copy" if listed else "demonstrations"
        assert said in capsys.readouterr().out
        plain = {p.id: p for p in render_prompts(built_instances, SAMPLE / "tasks", fmt)}
        instance_of = by_id(built_instances)
        for prompt in read_prompts(out):
            instance, task = instance_of[prompt.id], tasks[prompt.task_id]
            assert leaks(prompt, instance, task, fmt) == [], prompt.id
            if prompt.dimension is not Dimension.GENERATION:
                assert prompt == plain[prompt.id]
                continue
            pair = accepted[prompt.task_id]
            assert prompt.model_visible["avoid"] == [*plain[prompt.id].model_visible["avoid"], pair]
            text = prompt.messages[1]["content"]
            note = "It must not be a copy or a near copy of any of these pairs either:"
            demos = len(task.train)
            if listed:
                _, after_note = text.split(note)
                assert shown(pair["input"], fmt) in after_note
                assert shown(pair["output"], fmt) in after_note
                assert after_note.count("Pair ") == 1  # the accepted pair: demonstrations above
                assert f"Example {demos + 1}" not in text
            else:  # the next demonstration, before the request; no note
                assert note not in text and "Pair " not in text
                head, rest = text.split(f"Example {demos + 1}", 1)
                assert shown(pair["input"], fmt) not in head
                assert f"Example {demos + 2}" not in rest
                request = rest.index("Make up a new pair")
                assert shown(pair["input"], fmt) in rest[:request]
                assert shown(pair["output"], fmt) in rest[:request]
            for item in items:  # another model's pairs and refused pairs are not shown
                if item["task_id"] == prompt.task_id and item["detail"]["pair"] != pair:
                    assert shown(item["detail"]["pair"]["input"], fmt) not in text
    # Whose pairs: one model and run must be named when the items hold several.
    out = tmp_path / "p.jsonl"
    for extra, message in (
        ([], "several models or runs (m run 1, x run 1)"),
        (["--model", "nobody"], "no item of --model nobody"),
        (["--model", "m", "--run", "2"], "no item of --model m --run 2"),
    ):
        assert prompts_cli(*args, *extra, "--out", str(out)) == 2
        assert message in capsys.readouterr().err and not out.exists()
    base = ["--instances", str(built), "--tasks", str(SAMPLE / "tasks"), "--out", str(out)]
    assert prompts_cli(*base, "--model", "m") == 2
    assert "give --after" in capsys.readouterr().err


def test_prompt_records_round_trip(prompts):
    for fmt in GRID_FORMATS:
        for prompt in prompts[fmt]:
            data = json.loads(json.dumps(prompt.to_json()))
            assert Prompt.from_json(data) == prompt
            assert Prompt.from_json(data).to_json() == data


def test_bad_prompt_lines_name_the_line(prompts, tmp_path):
    good = prompt_lines(prompts["digits"][:1])
    record = json.loads(good)
    cases = {
        "not json": "{",
        "wrong id": json.dumps({**record, "id": "other/editing"}),
        "no messages": json.dumps({**record, "messages": []}),
        "unknown dimension": json.dumps({**record, "dimension": "poetry"}),
        "missing field": json.dumps({k: v for k, v in record.items() if k != "model_visible"}),
    }
    for why, line in cases.items():
        path = tmp_path / "p.jsonl"
        path.write_text(good + "\n" + line + "\n")
        with pytest.raises(InputError, match=r"p\.jsonl:3: not a prompt record"):
            read_prompts(path)
        assert why
    path.write_text(good + good)
    with pytest.raises(InputError, match=r":2: second prompt"):
        read_prompts(path)
    path.write_text("\n")
    with pytest.raises(InputError, match="no prompts"):
        read_prompts(path)


def test_a_task_missing_from_tasks_is_named(instances, built, tmp_path, capsys):
    partial = tmp_path / "tasks"
    partial.mkdir()
    shutil.copy(SAMPLE / "tasks" / "0d3d703e.json", partial)
    with pytest.raises(InputError, match=r"no task file for \d+ task\(s\).*1e0a9b12"):
        render_prompts(instances, partial)
    out = tmp_path / "p.jsonl"
    assert prompts_cli("--instances", str(built), "--tasks", str(partial), "--out", str(out)) == 2
    assert "1e0a9b12" in capsys.readouterr().err
    assert not out.exists()


def test_a_task_file_other_than_the_built_one_is_refused(instances, tmp_path):
    definition = next(i for i in instances if i.dimension is Dimension.DEFINITION)
    task = load_task(SAMPLE / "tasks" / f"{definition.task_id}.json")
    fewer = Task(task.task_id, task.train[:-1], task.test)
    with pytest.raises(InputError, match="train pair"):
        render_prompt(definition, fewer)


def test_malformed_instance_material_is_an_input_error(tasks):
    task = tasks[OWN_TASK]
    broken = DimensionInstance(
        OWN_TASK,
        Dimension.OUTPUT_GRID,
        1,
        VerifierSpec("a", "b", "c"),
        {"test_inputs": [[[1, 12]]]},
        {},
    )
    with pytest.raises(InputError, match=f"{OWN_TASK}/output_grid"):
        render_prompt(broken, task)
    with pytest.raises(InputError, match="malformed"):
        render_messages(Dimension.INVERSION, {"demonstrations": []})


# ---------------------------------------------------------------------------- templates


def test_templates_override_by_name(instances, tasks_dir, built, tmp_path):
    override = tmp_path / "templates"
    override.mkdir()
    (override / "editing.txt").write_text("EDIT THIS ($demonstration_count examples):\n$pair\n")
    (override / "system.txt").write_text("Be brief. $grid_format Cost: $$0.\n")
    default = render_prompts(instances, tasks_dir)
    custom = render_prompts(instances, tasks_dir, templates_dir=override)
    for before, after in zip(default, custom, strict=True):
        assert after.messages[0]["content"].startswith("Be brief. A grid is written as rows")
        assert after.messages[0]["content"].endswith("Cost: $0.")
        if before.dimension is Dimension.EDITING:
            pair = before.model_visible["pair"]
            count = len(before.model_visible["demonstrations"])
            assert after.messages[1]["content"] == (
                f"EDIT THIS ({count} examples):\nInput:\n{shown(pair['input'], 'digits')}\n"
                f"Output:\n{shown(pair['output'], 'digits')}"
            )
        else:
            assert after.messages[1] == before.messages[1]
    out = tmp_path / "p.jsonl"
    argv = ["--instances", str(built), "--tasks", str(tasks_dir), "--out", str(out)]
    assert prompts_cli(*argv, "--templates", str(override)) == 0
    assert "EDIT THIS" in out.read_text()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("inversion.txt", "$demonstrations $pair", r"unknown placeholder \$pair in the inversion"),
        ("system.txt", "$demonstrations", r"unknown placeholder \$demonstrations in the system"),
        ("generation.txt", "Costs $5", r"a '\$' that starts no placeholder"),
        ("editng.txt", "$pair", r"editng\.txt: names no template"),
        ("definition.txt", b"\xff\xfe", "cannot read the definition template"),
    ],
)
def test_bad_templates_are_input_errors(tmp_path, capsys, built, name, text, message):
    override = tmp_path / "templates"
    override.mkdir()
    path = override / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_templates(override)
    out = tmp_path / "p.jsonl"
    argv = ["--instances", str(built), "--tasks", str(SAMPLE / "tasks"), "--out", str(out)]
    assert prompts_cli(*argv, "--templates", str(override)) == 2
    assert "arcjudge: error:" in capsys.readouterr().err
    assert not out.exists()


def test_the_shipped_templates_use_only_their_placeholders():
    templates = load_templates()
    assert set(templates.templates) == set(TEMPLATE_NAMES) == set(PLACEHOLDERS)
    for name in TEMPLATE_NAMES:
        assert templates.origins[name] == TEMPLATE_DIR / f"{name}.txt"
        used = set(templates.templates[name].get_identifiers())
        assert used <= PLACEHOLDERS[name]
        if name != "system":
            assert "demonstrations" in used
            assert "Answer format:" in templates.templates[name].template
    assert {p.name for p in TEMPLATE_DIR.iterdir()} == {f"{n}.txt" for n in TEMPLATE_NAMES}


def test_the_leak_helpers_find_every_grid_and_string_in_a_value():
    value = {
        "labels": ["valid", "invalid"],
        "nested": [{"kind": "color_flip"}, ("mutant:1", [[1, 2], [3, 4]])],
        "grid": ((5,), (6,)),
        "no grid": [[1], []],  # an empty row: not a grid, and [1] holds no rows
        "count": 3,
    }
    assert sorted(strings_in(value)) == ["color_flip", "invalid", "mutant:1", "valid"]
    assert list(grids_in(value)) == [[[1, 2], [3, 4]], [[5], [6]]]
