"""The test suite keeps its shape: it mirrors ``src/arcjudge``; shared code is in support/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import tiers

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "arcjudge"
OWN_FOLDERS = {"support", "fixtures", "end_to_end"}
"""Folders of ``tests/`` that mirror no package: shared code, inputs, whole pipelines."""


def _test_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "fixtures" not in p.parts)


def _folders() -> list[Path]:
    return sorted(
        p.parent
        for p in TESTS.rglob("__init__.py")
        if p.parent != TESTS and "__pycache__" not in p.parts
    )


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_every_test_folder_mirrors_a_package(folder: Path):
    relative = folder.relative_to(TESTS)
    if relative.parts[0] in OWN_FOLDERS:
        return
    assert (SRC / relative / "__init__.py").is_file(), f"tests/{relative}: no arcjudge/{relative}"


def test_the_folders_are_found():
    found = {p.relative_to(TESTS).as_posix() for p in _folders()}
    assert {"harness/score", "sandbox/runtime", "support"} <= found


@pytest.mark.parametrize("path", _test_modules(), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_a_test_module_imports_no_other_test_module(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith("tests.") and not name.startswith("tests.support"):
                pytest.fail(f"{path.relative_to(TESTS)}:{node.lineno} imports {name}: use support/")


def test_support_holds_no_tests():
    assert not list((TESTS / "support").glob("test_*.py"))


def test_the_tier_tables_name_modules_that_exist():
    named = [*tiers.BY_MODULE, *tiers.SANDBOX_TESTS, *tiers.SLOW_TESTS, *tiers.SLOW_PARAMS]
    named += [entry.split("::")[0] for entry in tiers.SLOW_FIXTURES]
    missing = sorted({m for m in named if not (TESTS / m).is_file()})
    assert not missing, f"support/tiers.py names modules that are gone: {missing}"


def test_the_tier_tables_name_tests_that_exist():
    for table in (tiers.SANDBOX_TESTS, tiers.SLOW_TESTS):
        for module, functions in table.items():
            defined = {
                node.name
                for node in ast.walk(ast.parse((TESTS / module).read_text(encoding="utf-8")))
                if isinstance(node, ast.FunctionDef)
            }
            gone = sorted(set(functions) - defined)
            assert not gone, f"support/tiers.py names tests {module} no longer has: {gone}"
    for entry in tiers.SLOW_FIXTURES:
        module, fixture = entry.split("::")
        text = (TESTS / module).read_text(encoding="utf-8")
        assert f"def {fixture}(" in text, f"support/tiers.py: {entry} is gone"
