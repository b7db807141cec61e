"""The manual matches the code: every flag of every command on its page, and back.

Each command's page under ``docs/commands/`` ends its contract with a ``## Flags`` table,
one row per option or positional argument: its name in the first cell (in backticks), its
default in the second (``required`` for a required one), what it does in the third. The
parser is built from the code (``arcjudge.cli``'s own parser, walked through its argparse
actions, never ``--help`` text) and compared with each page both ways: a flag the code has
that its page lacks fails, and so does a row naming a flag the code does not have. Defaults
and choices named by the code must appear in the row.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.sandbox import registry
from arcjudge.sandbox.selfcheck import CASES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COMMANDS = DOCS / "commands"
README = ROOT / "README.md"
README_MAX_LINES = 200
"""The README is the way in; the manual is ``docs/``."""


@dataclass(frozen=True)
class Row:
    """One row of a page's flag table."""

    name: str
    default: str
    text: str


def _parser(monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """``arcjudge``'s parser, with no third-party backend installed (``--backend``'s choices)."""
    monkeypatch.setattr(registry, "_entry_points", lambda: [])
    return cli._parser()


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command with arguments of its own, and every leaf, by its words."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs or _arguments(parser):
        yield path, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _commands(child, (*path, name))


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    skip = (argparse._HelpAction, argparse._SubParsersAction)
    return [a for a in parser._actions if not isinstance(a, skip)]


def _page(path: tuple[str, ...]) -> Path:
    """``docs/commands/index.md`` for ``arcjudge``, else the command's page."""
    if not path:
        return COMMANDS / "index.md"
    nested = COMMANDS.joinpath(*path).with_suffix(".md")
    return nested if nested.is_file() else COMMANDS / f"{path[0]}.md"


def _cells(line: str) -> list[str]:
    """A table row's cells; a ``|`` inside backticks is text, not a border."""
    cells, current, code = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            code = not code
        if char == "|" and not code:
            cells.append(current.strip())
            current = ""
        else:
            current += char
    return [*cells, current.strip()]


def flag_rows(text: str) -> list[Row]:
    """The rows of the ``## Flags`` table of a page's text."""
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    flags = [s for s in sections if s.startswith("Flags\n")]
    assert len(flags) == 1, "a command page has one '## Flags' section"
    rows = []
    for line in flags[0].splitlines():
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if cells[0] == "flag" or set(cells[0]) <= {"-", " ", ":"}:
            continue  # the header, the separator
        names = re.findall(r"`([^`]+)`", cells[0])
        assert names, f"a row without a flag in backticks: {line}"
        rows.append(Row(names[0].split()[0], cells[1] if len(cells) > 1 else "", line))
    return rows


def _name(action: argparse.Action) -> str:
    if action.option_strings:
        return max(action.option_strings, key=len)
    metavar = action.metavar if isinstance(action.metavar, str) else None
    return metavar or action.dest.upper()


def _default_text(value: object) -> str | None:
    """What the page must say for a default (``None``: nothing is checked)."""
    if isinstance(value, bool) or value is None or value == argparse.SUPPRESS:
        return None
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int | str):
        return str(value)
    return None  # a list (repeatable flags start empty)


def differences(parser: argparse.ArgumentParser, text: str) -> list[str]:
    """What differs between a command's parser and its page's flag table (empty: none)."""
    rows = flag_rows(text)
    by_name: dict[str, Row] = {}
    problems = []
    for row in rows:
        if row.name in by_name:
            problems.append(f"{row.name}: listed twice")
        by_name[row.name] = row
    actions = {_name(a): a for a in _arguments(parser)}
    for name in sorted(actions.keys() - by_name.keys()):
        problems.append(f"{name}: in the code, not on the page")
    for name in sorted(by_name.keys() - actions.keys()):
        problems.append(f"{name}: on the page, not in the code")
    for name, action in actions.items():
        row = by_name.get(name)
        if row is None:
            continue
        for alias in action.option_strings:
            if alias != name and f"`{alias}" not in row.text:
                problems.append(f"{name}: its other spelling {alias} is not on the page")
        if action.required:
            if row.default != "required":
                problems.append(f"{name}: required, the page says {row.default!r}")
            continue
        if row.default == "required":
            problems.append(f"{name}: the page says required, the code does not")
        expected = _default_text(action.default)
        if expected is not None and expected.replace(",", "") not in row.default.replace(",", ""):
            problems.append(f"{name}: default {expected}, the page says {row.default!r}")
        for choice in action.choices or ():
            if f"`{choice}`" not in row.text:
                problems.append(f"{name}: choice {choice} is not on the page")
    return problems


COMMAND_PATHS = [path for path, _ in _commands(cli._parser())]


def test_every_command_is_walked():
    names = {" ".join(p) for p in COMMAND_PATHS}
    assert {"", "validate", "dimensions build", "dimensions analyze", "image build"} <= names
    assert "dimensions" not in names  # a group of sub-commands has no page of its own


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(("arcjudge", *p)))
def test_each_commands_page_lists_exactly_its_flags(path, monkeypatch):
    parser = dict(_commands(_parser(monkeypatch)))[path]
    page = _page(path)
    assert page.is_file(), f"arcjudge {' '.join(path)} has no page ({page.relative_to(ROOT)})"
    problems = differences(parser, page.read_text(encoding="utf-8"))
    assert problems == [], f"{page.relative_to(ROOT)}: " + "; ".join(problems)


def test_the_check_finds_a_flag_missing_from_a_page_and_one_the_code_lacks(monkeypatch):
    parser = dict(_commands(_parser(monkeypatch)))[("validate",)]
    text = (COMMANDS / "validate.md").read_text(encoding="utf-8")
    assert differences(parser, text) == []
    without = "\n".join(line for line in text.splitlines() if not line.startswith("| `--chunk"))
    assert differences(parser, without) == ["--chunk: in the code, not on the page"]
    extra = text.replace("| `--sample` |", "| `--samples-per-task N` | | made up |\n| `--sample` |")
    assert differences(parser, extra) == ["--samples-per-task: on the page, not in the code"]
    wrong = text.replace("| `--chunk N` | 512 |", "| `--chunk N` | 256 |")
    assert differences(parser, wrong) == ["--chunk: default 512, the page says '256'"]
    choice = text.replace("`off`, `warn` or `enforce`", "`off` or `warn`")
    assert differences(parser, choice) == ["--policy: choice enforce is not on the page"]


def test_a_positional_argument_is_checked_too(monkeypatch):
    parser = dict(_commands(_parser(monkeypatch)))[("run",)]
    text = (COMMANDS / "run.md").read_text(encoding="utf-8")
    without = "\n".join(line for line in text.splitlines() if not line.startswith("| `PROGRAM`"))
    assert differences(parser, without) == ["PROGRAM: in the code, not on the page"]


def test_the_selfcheck_page_lists_every_case_in_order():
    text = (COMMANDS / "selfcheck.md").read_text(encoding="utf-8")
    cases = text.split("## Cases", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^- `([a-z0-9_]+)`$", cases, flags=re.MULTILINE) == [c.name for c in CASES]


def test_the_protections_table_names_only_real_cases():
    text = (DOCS / "sandbox.md").read_text(encoding="utf-8")
    table = text.split("## Each protection per environment", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    # the cases are named in parentheses after each protection
    cells = [_cells(row)[0] for row in rows[1:]]
    named = {n for cell in cells for n in re.findall(r"`([a-z0-9_]+)`", cell.partition("(")[2])}
    cases = {c.name for c in CASES}
    assert len(rows) > 10 and named, "the protections table is where it was"
    assert sorted(named - cases) == [], "the protections table names cases selfcheck lacks"


def test_the_readme_keeps_the_set_up_commands_and_stays_short():
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert "pip install -e . && arcjudge validate --sample --out out/" in first_block
    assert "pip install -e '.[test]' && python3 -m pytest -q" in first_block
    assert len(text.splitlines()) <= README_MAX_LINES, "the manual is docs/; link to it"


def test_the_readmes_links_lead_somewhere():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    for target in targets:
        assert (ROOT / target).exists(), f"README links to {target}, which is not there"
