"""The inspect_ai task ``arcjudge/potarcin``, offline, with mockllm's canned replies.

mockllm answers each prompt with a canned reply (tests/support/canned.py: oracle replies built from
the instances' keys, wrong ones that fail by the rules); the expected accuracies follow
from which replies are oracles. The log, turned into ``replies.jsonl``, is graded by the
JSONL path (``dimensions score``), whose summary must equal the task's metrics exactly.

mockllm counts tokens with tiktoken unless a reply carries its usage, and tiktoken
downloads its vocabulary: the canned replies carry their usage, and the ``inspect eval``
command-line run patches mockllm's counter (no network here or in CI).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

if os.environ.get("ARCJUDGE_REQUIRE_INSPECT") == "1":  # .ci/run: fail, never skip, without it
    import inspect_ai
inspect_ai = pytest.importorskip(
    "inspect_ai", reason="needs inspect_ai (pip install -e '.[test]' or '.[inspect]')"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalLog  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from arcjudge import cli  # noqa: E402
from arcjudge.errors import InputError  # noqa: E402
from arcjudge.harness.core.stats import wilson_interval  # noqa: E402
from arcjudge.integrations import inspect_task  # noqa: E402
from arcjudge.integrations.inspect_log import replies_from_inspect_log  # noqa: E402
from arcjudge.integrations.inspect_task import potarcin  # noqa: E402
from tests.support.canned import (  # noqa: E402
    REPLY_DIMENSIONS,
    build_instances,
    expected_passes,
    oracle_reply,
    read_records,
    reply_id,
    write_prompts,
    wrong_reply,
)

ROOT = Path(__file__).resolve().parents[2]
MODEL = "mockllm/model"
# inspect_ai's own retry set-up uses a parameter its tenacity deprecates
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter:DeprecationWarning")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    instances = build_instances(root)
    prompts = root / "prompts.jsonl"
    write_prompts(instances, prompts)
    records = [r for r in read_records(instances) if r["dimension"] in REPLY_DIMENSIONS]
    return instances, prompts, records


def canned_model(replies: dict[str, list[str]], usage=None):
    """mockllm answering prompt ID's k-th call with ``replies[ID][k]`` (the last repeats).

    ``usage(ID, k)``: the ``ModelUsage`` of that call (default: one token in, one out).
    """
    calls: Counter[str] = Counter()

    def outputs(messages, tools, tool_choice, config):
        found = re.match(r"\[([^\]]+)\]", messages[-1].text)
        assert found, messages[-1].text[:80]
        rid = found.group(1)
        these = replies[rid]
        reply = these[min(calls[rid], len(these) - 1)]
        output = ModelOutput.from_content(MODEL, reply)
        output.usage = (
            ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            if usage is None
            else usage(rid, calls[rid])
        )
        calls[rid] += 1
        return output

    return get_model(MODEL, custom_outputs=outputs, memoize=False)


def run_eval(built, tmp_path, replies, usage=None, task_args=None, **options) -> EvalLog:
    instances, prompts, _ = built
    task = potarcin(instances=str(instances), prompts=str(prompts), backend="process",
                    **(task_args or {}))  # fmt: skip
    (log,) = inspect_eval(
        task, model=canned_model(replies, usage), log_dir=str(tmp_path / "logs"),
        display="none", **options,
    )  # fmt: skip
    assert log.status == "success", log.error
    assert not inspect_task._OPEN, "the run's end did not close the grading sandbox"
    return log


def metrics(log: EvalLog) -> dict[str, float]:
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def expected_metrics(counts: dict[str, tuple[int, int]]) -> dict[str, float]:
    """The metrics for (passed, items) per dimension, computed here from the counts."""
    result: dict[str, float] = {}
    for dim, (passed, total) in counts.items():
        low, high = wilson_interval(passed, total)
        result[dim] = round(passed / total, 6)
        result[f"{dim}_low"], result[f"{dim}_high"] = round(low, 6), round(high, 6)
        result[f"{dim}_items"] = total
    return result


def test_oracle_replies_pass_where_the_key_has_an_answer(built, tmp_path):
    _, _, records = built
    replies = {reply_id(r): [oracle_reply(r) or wrong_reply(r)] for r in records}
    log = run_eval(built, tmp_path, replies)
    counts = expected_passes(records)
    assert all(p >= 1 for p, _ in counts.values()), counts  # every dimension is tested
    assert metrics(log) == expected_metrics(counts)
    for sample in log.samples:
        score = sample.scores["arcjudge_rules"]
        record = next(r for r in records if reply_id(r) == sample.id)
        passes = oracle_reply(record) is not None
        assert score.value == (1.0 if passes else 0.0)
        assert score.explanation == "passed" if passes else score.explanation != "passed"
        assert score.answer  # how the reply was read
        assert score.metadata["dimension"] == record["dimension"]


def test_wrong_replies_all_fail(built, tmp_path):
    _, _, records = built
    log = run_eval(built, tmp_path, {reply_id(r): [wrong_reply(r)] for r in records})
    counts = {d: (0, n) for d, (_, n) in expected_passes(records).items()}
    assert metrics(log) == expected_metrics(counts)
    reasons = {s.id: s.scores["arcjudge_rules"].explanation for s in log.samples}
    assert any(r.startswith("copy of demonstration") for r in reasons.values())
    assert any(r.startswith("wrong judgment") for r in reasons.values())


def jsonl_summary(instances: Path, replies: Path, tmp_path: Path) -> dict:
    """``dimensions score --replies``: its summary and items."""
    out = tmp_path / "scored"
    assert cli.main(["dimensions", "score", "--instances", str(instances), "--replies",
                     str(replies), "--out", str(out), "--backend", "process",
                     "--no-progress"]) == 0  # fmt: skip
    return {
        "summary": json.loads((out / "summary.json").read_text()),
        "items": read_records(out / "items.jsonl"),
    }


def test_two_epochs_are_two_runs_and_match_the_jsonl_path(built, tmp_path, capsys):
    instances, _, records = built
    # epoch order is not call order: whichever epoch asks first gets the oracle reply
    replies = {reply_id(r): [oracle_reply(r) or wrong_reply(r), wrong_reply(r)] for r in records}
    log = run_eval(built, tmp_path, replies, epochs=2)
    counts = {d: (p, 2 * n) for d, (p, n) in expected_passes(records).items()}
    assert metrics(log) == expected_metrics(counts)

    path = Path(log.location)
    out = tmp_path / "replies.jsonl"
    assert cli.main(["dimensions", "replies-from-inspect", str(path), "--out", str(out)]) == 0
    assert f"wrote {2 * len(records)} replies of {MODEL}" in capsys.readouterr().out
    lines = read_records(out)
    assert out.read_text() == "".join(replies_from_inspect_log(path).lines())
    assert sorted((x["id"], x["run"]) for x in lines) == sorted(
        (reply_id(r), epoch) for r in records for epoch in (1, 2)
    )
    assert all(x["model"] == MODEL and x["reply"] in replies[x["id"]] for x in lines)

    graded = jsonl_summary(instances, out, tmp_path)
    dims = graded["summary"]["models"][MODEL]["dimensions"]
    seen = metrics(log)
    for dim, (passed, total) in counts.items():
        assert dims[dim] == {
            "passed": passed,
            "total": total,
            "accuracy": seen[dim],
            "ci95": [seen[f"{dim}_low"], seen[f"{dim}_high"]],
        }
        assert seen[f"{dim}_items"] == total
    assert {d for d, v in dims.items() if v is not None} == set(counts)
    # item by item: each epoch's sample score is the JSONL path's item
    items = {(i["run"], i["task_id"], i["dimension"]): i for i in graded["items"]}
    for sample in log.samples:
        task_id, dim = str(sample.id).split("/")
        item = items[(str(sample.epoch), task_id, dim)]
        score = sample.scores["arcjudge_rules"]
        assert score.value == float(item["passed"])
        assert score.explanation == (item["reason"] or "passed")
        assert score.answer == item["how"]
        detail = item["detail"]
        if dim == "definition":  # its "program" names the replies file's line
            detail = {k: v for k, v in detail.items() if k != "program"}
        assert score.metadata["detail"] == detail


def made_usage(rid: str, call: int) -> ModelUsage:
    """A usage told apart per prompt and call (reasoning reported on every other prompt)."""
    size = len(rid) + 10 * call
    reasoning = 3 * size if len(rid) % 2 else None
    return ModelUsage(input_tokens=100 + size, output_tokens=size, total_tokens=100 + 2 * size,
                      reasoning_tokens=reasoning)  # fmt: skip


def test_settings_and_usage_reach_the_replies_and_the_summary(built, tmp_path, capsys):
    instances, _, records = built
    replies = {reply_id(r): [oracle_reply(r) or wrong_reply(r)] for r in records}
    log = run_eval(built, tmp_path, replies, usage=made_usage,
                   task_args={"reasoning_tokens": 4096})  # fmt: skip
    assert log.plan.config.temperature == 1.0 and log.plan.config.reasoning_effort == "low"
    lines = replies_from_inspect_log(Path(log.location)).replies
    assert len(lines) == len(records)
    settings = {"temperature": 1.0, "reasoning_effort": "low", "reasoning_tokens": 4096}
    for line in lines:
        made = made_usage(line["id"], 0)
        want = {"input": made.input_tokens, "output": made.output_tokens}
        if made.reasoning_tokens is not None:
            want["reasoning"] = made.reasoning_tokens
        assert line["usage"] == want and line["settings"] == settings

    out = tmp_path / "replies.jsonl"
    out.write_text("".join(replies_from_inspect_log(Path(log.location)).lines()))
    graded = jsonl_summary(instances, out, tmp_path)
    assert all(i["usage"] and i["settings"] == settings for i in graded["items"])
    (tokens,) = graded["summary"]["token_usage"].values()
    made = [made_usage(line["id"], 0) for line in lines]
    reasoning = [m.reasoning_tokens for m in made if m.reasoning_tokens is not None]
    assert (tokens["replies"], tokens["output"], tokens["reasoning"], tokens["settings"]) == (
        len(lines),
        sum(m.output_tokens for m in made),
        sum(reasoning),
        [settings],
    )


def test_the_provider_defaults_are_an_option(built, tmp_path):
    instances, prompts, records = built
    task = potarcin(instances=str(instances), prompts=str(prompts))
    assert (task.config.temperature, task.config.reasoning_effort) == (1.0, "low")
    assert task.config.reasoning_tokens is None
    replies = {reply_id(r): [wrong_reply(r)] for r in records}
    log = run_eval(built, tmp_path, replies,
                   task_args={"temperature": None, "reasoning_effort": None})  # fmt: skip
    lines = replies_from_inspect_log(Path(log.location)).replies
    assert lines and all("settings" not in line for line in lines)
    assert all(line["usage"] == {"input": 1, "output": 1} for line in lines)
    # inspect eval --temperature overrides the task's, and the replies say so
    log = run_eval(built, tmp_path / "hot", replies, temperature=0.3)
    lines = replies_from_inspect_log(Path(log.location)).replies
    assert {str(line["settings"]) for line in lines} == {
        str({"temperature": 0.3, "reasoning_effort": "low"})
    }
    for bad in ({"temperature": -1}, {"reasoning_effort": "lots"}, {"reasoning_tokens": 0}):
        with pytest.raises(InputError):
            potarcin(instances=str(instances), prompts=str(prompts), **bad)
    canned = tmp_path / "canned.jsonl"
    canned.write_text(json.dumps({"id": reply_id(records[0]), "model": "m", "run": 1,
                                  "reply": "[[1]]"}) + "\n")  # fmt: skip
    replayed = potarcin(instances=str(instances), prompts=str(prompts), replay=str(canned))
    assert replayed.config.temperature is None and replayed.config.reasoning_effort is None


def test_task_arguments_are_checked(built, tmp_path):
    instances, prompts, records = built
    only = potarcin(instances=str(instances), prompts=str(prompts), dimensions="inversion")
    assert {s.metadata["dimension"] for s in only.dataset} == {"inversion"}
    assert len(only.dataset) == sum(r["dimension"] == "inversion" for r in records)
    with pytest.raises(InputError, match="unknown dimension"):
        potarcin(instances=str(instances), prompts=str(prompts), dimensions="telepathy")
    with pytest.raises(InputError, match="give prompts"):
        potarcin(instances=str(instances))
    rendered = potarcin(instances=str(instances), tasks=str(instances.parents[1] / "tasks"))
    assert [s.id for s in rendered.dataset] == [reply_id(r) for r in records]
    assert all(s.input[0].role == "system" for s in rendered.dataset)
    stray = tmp_path / "stray.jsonl"
    line = json.loads(prompts.read_text().splitlines()[0])
    stray.write_text(json.dumps({**line, "id": "zzz/inversion", "task_id": "zzz",
                                 "dimension": "inversion"}) + "\n")  # fmt: skip
    with pytest.raises(InputError, match="without an instance"):
        potarcin(instances=str(instances), prompts=str(stray))
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text(json.dumps({**line, "id": "other"}) + "\n")
    with pytest.raises(InputError, match="is not"):
        potarcin(instances=str(instances), prompts=str(leaky))


def test_the_builds_repeats_are_the_default_epochs(built, tmp_path):
    instances, prompts, _ = built
    assert potarcin(instances=str(instances), prompts=str(prompts)).epochs == 1
    repeated = tmp_path / "repeated"
    repeated.mkdir()
    (repeated / "instances.jsonl").write_bytes(instances.read_bytes())
    summary = json.loads((instances.parent / "build.json").read_text())
    (repeated / "build.json").write_text(json.dumps({**summary, "repeats": 3}))
    task = potarcin(instances=str(repeated / "instances.jsonl"), prompts=str(prompts))
    assert task.epochs == 3


def installed_env() -> dict[str, str]:
    """The environment without PYTHONPATH: inspect_ai namespaces a task (``arcjudge/...``)
    only when it comes from an installed distribution, not from a path."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


FIND_ENTRY_POINT = """
from importlib.metadata import entry_points
found = [e for e in entry_points(group="inspect_ai") if e.name == "arcjudge"]
print(found[0].load().__file__ if found else "")
"""


def entry_point_is_this_checkout() -> bool:
    found = subprocess.run([sys.executable, "-c", FIND_ENTRY_POINT], capture_output=True,
                           text=True, env=installed_env(), timeout=300)  # fmt: skip
    where = found.stdout.strip()
    return bool(where) and Path(where).resolve().is_relative_to(ROOT / "src")


OFFLINE_INSPECT = """
import sys
from inspect_ai.model._providers.mockllm import MockLLM
async def count_text_tokens(self, text):  # tiktoken would download its vocabulary
    return len(text) // 4 + 1
MockLLM.count_text_tokens = count_text_tokens
from inspect_ai._cli.main import main
sys.argv[0] = "inspect"
main()
"""


def test_inspect_eval_finds_the_task_by_its_entry_point(built, tmp_path):
    if not entry_point_is_this_checkout():
        pytest.skip("arcjudge's inspect_ai entry point is not this checkout's (pip install -e .)")
    instances, prompts, records = built
    logs = tmp_path / "logs"
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_INSPECT, "eval", "arcjudge/potarcin", "--model", MODEL,
         "-T", f"instances={instances}", "-T", f"prompts={prompts}", "-T", "backend=process",
         "--log-dir", str(logs), "--display", "none"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=installed_env(),
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    (path,) = logs.glob("*.eval")
    log = replies_from_inspect_log(path)
    assert len(log.replies) == len(records) and not log.errored
    # mockllm's default output is no answer at all: every item fails
    out = tmp_path / "replies.jsonl"
    out.write_text("".join(log.lines()))
    graded = jsonl_summary(instances, out, tmp_path)
    dims = graded["summary"]["models"][MODEL]["dimensions"]
    assert {d: (v["passed"], v["total"]) for d, v in dims.items() if v} == {
        d: (0, n) for d, (_, n) in expected_passes(records).items()
    }
