"""The Python API: ``docs/python-api.md``'s session runs as written; the surface is curated."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import arcjudge

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def _python(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh interpreter that imports this arcjudge, from ``cwd``."""
    here = str(Path(arcjudge.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": path},
    )


def _blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_documented_session_runs_as_written(tmp_path):
    blocks = _blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 4, "the page's session lost its code blocks"
    # One process, each block in order, as a notebook would run them.
    script = "\n".join(blocks)
    done = _python(script, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "right True None" in done.stdout
    assert (tmp_path / "out" / "score" / "report.html").is_file()


def test_the_session_check_can_fail(tmp_path):
    """The page's own assertions bite: a wrong expectation fails the run."""
    blocks = _blocks(PAGE.read_text(encoding="utf-8"))
    script = "\n".join(blocks).replace("[True, False, False]", "[True, True, False]")
    done = _python(script, tmp_path)
    assert done.returncode != 0 and "AssertionError" in done.stderr


def test_every_public_name_resolves_and_nothing_else_does():
    for name in arcjudge.__all__:
        assert getattr(arcjudge, name) is not None, name
    try:
        arcjudge.Engine  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("an internal name is reachable from the package")
    assert set(arcjudge.__all__) <= set(dir(arcjudge))


def test_import_arcjudge_stays_cheap():
    """``import arcjudge`` imports none of its commands, nor numpy (the CLI imports it too)."""
    code = textwrap.dedent(
        """
        import sys
        import arcjudge
        heavy = [m for m in sys.modules if m.startswith(("arcjudge.harness", "numpy"))]
        print(heavy)
        """
    )
    done = _python(code, Path.cwd())
    assert done.stdout.strip() == "[]", done.stdout


def test_the_cli_is_a_layer_over_the_same_commands(monkeypatch):
    """Every command, each ``dimensions`` sub-command too, runs through the shared runner."""
    from arcjudge import cli
    from arcjudge.harness.core import commandline
    from arcjudge.harness.dimensions import cli as dimensions

    commands = cli._commands()
    for name, entry in commands.items():
        if name != "dimensions":
            assert getattr(entry.run, "func", None) is commandline.execute, name
    ran = []
    monkeypatch.setattr(cli, "execute", lambda command, args: ran.append(command.name) or 0)
    sub = [*dimensions.COMMANDS, "analyze"]
    for name in sub:
        cli._commands()["dimensions"].run(argparse.Namespace(dimensions_command=name))
    assert ran == sub


def test_the_api_and_the_command_line_write_the_same_files(tmp_path):
    """validate, build and grade from Python give the bytes the commands give."""
    from arcjudge import cli

    sample = arcjudge.sample_dir()
    options = arcjudge.SandboxOptions(backend="process", workers=2)
    sources = (arcjudge.parse_verifier_spec(f"golf=golf:{sample / 'golf'}"),)
    api, made = tmp_path / "api", tmp_path / "cli"
    arcjudge.validate(
        arcjudge.ValidateConfig(sample / "tasks", sources), api / "val", sandbox=options
    )
    summaries = arcjudge.build(
        arcjudge.BuildConfig(sample / "tasks", api / "val"), api / "dims", sandbox=options
    )
    summary = arcjudge.grade(
        arcjudge.DimensionScoreConfig(
            api / "dims" / "instances.jsonl", replies_file=sample / "replies.jsonl"
        ),
        api / "grade",
        sandbox=options,
    )
    shared = ["--backend", "process", "--workers", "2", "--no-progress"]
    assert (
        cli.main(
            [
                "validate",
                "--tasks",
                str(sample / "tasks"),
                "--source",
                f"golf=golf:{sample / 'golf'}",
                "--out",
                str(made / "val"),
                *shared,
            ]
        )
        == 0
    )
    assert (
        cli.main(
            [
                "dimensions",
                "build",
                "--tasks",
                str(sample / "tasks"),
                "--manifest",
                str(made / "val"),
                "--out",
                str(made / "dims"),
                *shared,
            ]
        )
        == 0
    )
    assert cli.main(["dimensions", "score", "--instances", str(made / "dims/instances.jsonl"),
                     "--replies", str(sample / "replies.jsonl"), "--out", str(made / "grade"),
                     *shared]) == 0  # fmt: skip
    for name in ("val/verdicts.jsonl", "dims/instances.jsonl", "grade/items.jsonl"):
        assert (api / name).read_bytes() == (made / name).read_bytes(), name
    # build.json and summary.json name their input files, which differ: compare the rest.
    built = json.loads((made / "dims/build.json").read_text())
    assert summaries[0]["instances"] == built["instances"]
    graded = json.loads((made / "grade/summary.json").read_text())
    assert summary["models"] == graded["models"]
