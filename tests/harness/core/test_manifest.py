"""validate's ``manifest.json`` is one record: written through it, read back through it.

A bad field names the file and the field; what validate writes reads back to the same
bytes, with and without ``--quarantine-suspects`` (its keys written only then).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.core.manifest import (
    Manifest,
    ManifestCoverage,
    ManifestDifferential,
    ManifestGenerator,
    ManifestSource,
    ManifestTask,
    read_manifest,
)
from arcjudge.harness.core.record import RecordError
from arcjudge.safetext import json_dumps
from arcjudge.vocabulary import Verdict


def _written(manifest: Manifest) -> str:
    return json_dumps(manifest.to_json(), sort_keys=True, indent=1) + "\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("manifest")
    found = {}
    for name, extra in (("plain", []), ("quarantine", ["--quarantine-suspects"])):
        out = root / name
        argv = ["validate", "--sample", "--samples", "3", "--out", str(out), "--backend",
                "process", "--wall", "2", "--no-progress", *extra]  # fmt: skip
        assert cli.main(argv) == 0
        found[name] = out
    return found


@pytest.mark.parametrize("name", ["plain", "quarantine"])
def test_validate_writes_the_record_and_reads_it_back(runs, name):
    text = (runs[name] / "manifest.json").read_text(encoding="utf-8")
    read = read_manifest(runs[name])
    assert read.path == runs[name] / "manifest.json"
    assert _written(read.manifest) == text
    data = json.loads(text)
    assert read.manifest.chosen == {t: e["chosen"] for t, e in data["tasks"].items() if e["chosen"]}
    assert read.manifest.valid == {t: set(e["valid"]) for t, e in data["tasks"].items()}
    first = read.manifest.sources[0]
    assert read.manifest.verifier_source(first.name).kind == first.kind
    entry = next(iter(read.manifest.tasks.values()))
    assert entry.suspects is not None and entry.generator is not None  # 3 sources, samples
    quarantined = name == "quarantine"
    assert (entry.valid_quarantined is not None) is quarantined
    assert ("chosen_quarantined" in next(iter(data["tasks"].values()))) is quarantined
    assert (read.manifest.differential.covered_quarantined is not None) is quarantined


def _with(data: dict[str, Any], path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    changed = json.loads(json.dumps(data))
    inner = changed
    for step in path[:-1]:
        inner = inner[step]
    if value is _DROP:
        del inner[path[-1]]
    else:
        inner[path[-1]] = value
    return changed


_DROP = object()


def test_a_bad_manifest_field_names_the_file_and_the_field(runs, tmp_path):
    good = json.loads((runs["plain"] / "manifest.json").read_text(encoding="utf-8"))
    task = sorted(good["tasks"])[0]
    bad = [
        (("seed",), "x", "field 'seed': expected int, got str"),
        (("sources", 1, "kind"), _DROP, "field 'sources[1].kind': missing"),
        (("tasks", task, "chosen"), 3, f"field 'tasks.{task}.chosen': expected"),
        (("tasks", task, "chosen"), "nobody", f"field 'tasks.{task}.chosen': source 'nobody'"),
        (("tasks", task, "valid"), "re-arc", f"field 'tasks.{task}.valid': expected"),
        (("limits", "wall_seconds"), _DROP, "field 'limits.wall_seconds': missing"),
        (("per_source", "re-arc", "valid"), 1.5, "field 'per_source.re-arc.valid': expected int"),
        (("per_source", "re-arc", "great"), 1, "field 'per_source.re-arc.great': expected one of"),
        (("coverage",), _DROP, "field 'coverage': missing"),
    ]
    path = tmp_path / "manifest.json"
    for where, value, named in bad:
        path.write_text(json.dumps(_with(good, where, value)), encoding="utf-8")
        with pytest.raises(InputError) as caught:
            read_manifest(tmp_path)
        message = str(caught.value)
        assert message.startswith(f"{path}: not a validate manifest ("), message
        assert named in message, message
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{path}: not a validate manifest")):
        read_manifest(tmp_path)
    path.unlink()
    with pytest.raises(InputError, match=re.escape("no manifest.json")):
        read_manifest(tmp_path)


# Round trips -------------------------------------------------------------------------

NAMES = st.sampled_from(["re-arc", "golf", "module"])
COUNT = st.integers(0, 99)


@st.composite
def task_entries(draw: st.DrawFn, quarantine: bool, several: bool) -> ManifestTask:
    valid = tuple(draw(st.lists(NAMES, unique=True, max_size=3)))
    return ManifestTask(
        chosen=valid[0] if valid else None,
        valid=valid,
        splits=draw(st.dictionaries(st.sampled_from(["train", "test", "generator"]), COUNT)),
        valid_quarantined=tuple(draw(st.lists(NAMES, max_size=2))) if quarantine else None,
        chosen_quarantined=draw(st.none() | NAMES) if quarantine else None,
        suspects=draw(COUNT) if several else None,
        disputes=draw(COUNT) if several else None,
        ambiguous=draw(st.booleans()) if several else None,
        generator=draw(st.none() | st.dictionaries(st.sampled_from(["ok", "error"]), COUNT)),
    )


@st.composite
def manifests(draw: st.DrawFn) -> Manifest:
    quarantine, several = draw(st.booleans()), draw(st.booleans())
    sources = tuple(ManifestSource(n, "module", f"/s/{n}") for n in ["re-arc", "golf", "module"])
    return Manifest(
        sources=sources,
        generator=draw(st.none() | st.builds(ManifestGenerator, st.just("arc-gen"), st.text())),
        seed=draw(st.integers(0, 2**32)),
        samples=draw(COUNT),
        probe_samples=draw(COUNT),
        quarantine_suspects=quarantine,
        wall_seconds=draw(st.integers(1, 9) | st.floats(0.5, 9)),
        coverage=draw(st.builds(ManifestCoverage, COUNT, COUNT, st.floats(0, 1))),
        differential=ManifestDifferential(
            *draw(st.tuples(COUNT, COUNT, COUNT, COUNT)),
            covered_quarantined=draw(COUNT) if quarantine else None,
        ),
        per_source={s.name: {v: draw(COUNT) for v in Verdict} for s in sources},
        tasks=draw(st.dictionaries(st.text(min_size=1), task_entries(quarantine, several))),
        task_set=draw(st.none() | st.dictionaries(st.text(), st.text())),
    )


@settings(max_examples=100, deadline=None)
@given(manifests())
def test_manifests_round_trip(manifest):
    text = _written(manifest)
    back = Manifest.from_json(json.loads(text))
    assert _written(back) == text
    assert back.tasks == manifest.tasks and back.sources == manifest.sources


def test_a_chosen_source_must_be_described():
    entry = ManifestTask(chosen="ghost", valid=("ghost",), splits={})
    with pytest.raises(RecordError, match=r"field 'tasks\.t\.chosen': source 'ghost'"):
        Manifest(
            sources=(),
            generator=None,
            seed=0,
            samples=0,
            probe_samples=0,
            quarantine_suspects=False,
            wall_seconds=1,
            coverage=ManifestCoverage(1, 1, 1.0),
            differential=ManifestDifferential(0, 0, 0, 0),
            per_source={},
            tasks={"t": entry},
        )
