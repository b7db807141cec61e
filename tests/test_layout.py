"""The source tree keeps its shape: one vocabulary, printing and flags only in CLI modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import arcjudge.sandbox
from arcjudge import vocabulary
from arcjudge.vocabulary import ProgramStatus, Status

SRC = Path(__file__).resolve().parents[1] / "src" / "arcjudge"
# The bundled sample is third-party-format data; the in-sandbox runtime is stdlib-only and
# speaks the wire protocol (its status strings are that protocol's, checked in test_grids).
EXCLUDED = (SRC / "data", SRC / "sandbox" / "runtime")
VOCABULARIES = {
    enum.__name__: frozenset(m.value for m in enum)
    for enum in (
        vocabulary.Split,
        vocabulary.Verdict,
        vocabulary.FailureClass,
        vocabulary.CandidateKind,
        vocabulary.Dimension,
        vocabulary.GridFormat,
        vocabulary.MutantStatus,
        vocabulary.ScoreFailure,
        vocabulary.ScoreVerdict,
        Status,
        ProgramStatus,
    )
}
DEFINITIONS = {SRC / "vocabulary.py"}
CLI_MODULES = {"cli.py", "commandline.py", "files_cli.py"}
"""Command-line modules: they may print and offer ``integrations/``."""


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if not any(p.is_relative_to(d) for d in EXCLUDED))


def _string_collections(tree: ast.AST) -> list[tuple[int, frozenset[str]]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                values = frozenset(e.value for e in node.elts)  # type: ignore[attr-defined]
                found.append((node.lineno, values))
    return found


def test_the_scan_finds_a_redefined_vocabulary():
    tree = ast.parse('KINDS = ("valid", "human_error")\nOTHER = ("a", "b")\n')
    hits = [
        name
        for _, values in _string_collections(tree)
        for name, vocab in VOCABULARIES.items()
        if values <= vocab
    ]
    assert hits == ["CandidateKind"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_vocabulary_is_defined_twice(path):
    if path in DEFINITIONS:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for line, values in _string_collections(tree):
        for name, vocab in VOCABULARIES.items():
            assert not values <= vocab, (
                f"{path.relative_to(SRC)}:{line}: {sorted(values)} repeats {name}; "
                "import it from arcjudge.vocabulary"
            )


def _leading_text(node: ast.expr) -> str:
    """The literal text a message starts with (its first part, for an f-string)."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if p.name not in CLI_MODULES],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_library_modules_neither_print_nor_speak_of_flags(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "print", f"{path.name}:{node.lineno}: print in a library"
        if isinstance(node, ast.Name):
            assert node.id != "UsageError", f"{path.name}:{node.lineno}: UsageError in a library"
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            assert not _leading_text(node.exc.args[0]).startswith("--"), (
                f"{path.name}:{node.lineno}: an error message about a flag"
            )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_starts_a_sandbox_when_imported(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.Expr) and node.value is not None:
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Call):
                    func = sub.func
                    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                    assert "Sandbox" not in name and name != "make_sandbox", (
                        f"{path.name}:{node.lineno}: a sandbox made at import time"
                    )


ROOT = SRC.parents[1]


FILE_MAP = ROOT / "docs" / "architecture.md"
"""The page whose "What is here" code block is the file map."""


def _file_map() -> dict[str, str]:
    """The file map: ``relative path -> description``, from its indentation."""
    entries: dict[str, str] = {}
    for path, description in _file_map_rows():
        assert path not in entries, f"the file map lists {path} twice"
        entries[path] = description
    return entries


def _file_map_rows() -> list[tuple[str, str]]:
    """The file map as rows, in order (a path listed twice appears twice)."""
    text = FILE_MAP.read_text(encoding="utf-8")
    block = text.split("## What is here", 1)[1].split("```", 2)[1]
    entries: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        if not line.strip() or len(line) - len(line.lstrip()) >= 16:
            continue  # blank, or the continuation of a description
        indent = len(line) - len(line.lstrip())
        name, _, description = line.strip().partition(" ")
        if not description.strip() and not name.endswith("/"):
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (stack[-1][1] if stack else "") + name
        entries.append((path, description.strip()))
        if name.endswith("/"):
            stack.append((indent, path))
    return entries


def test_the_file_map_parser_reads_nesting():
    entries = _file_map()
    assert "src/arcjudge/cli.py" in entries
    assert "src/arcjudge/harness/core/engine.py" in entries


def test_the_file_map_is_the_tree():
    entries = _file_map()
    listed_dirs = {p for p in entries if p.endswith("/")}
    # A directory listed without children stands for all of its contents (the sample data).
    leaves = {d for d in listed_dirs if not any(p != d and p.startswith(d) for p in entries)}
    tree = {
        str(p.relative_to(ROOT))
        for p in SRC.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not any(str(p.relative_to(ROOT)).startswith(leaf) for leaf in leaves)
    }
    files_listed = {p for p in entries if not p.endswith("/") and p.startswith("src/")}
    where = FILE_MAP.relative_to(ROOT)
    assert sorted(tree - files_listed) == [], f"files missing from the file map ({where})"
    assert sorted(files_listed - tree) == [], f"the file map ({where}) lists files not there"
    for path in entries:
        assert (ROOT / path).exists(), f"the file map ({where}): {path} does not exist"


WORKFLOWS = ("validate", "score", "mutate", "dimensions", "analyze")
DECLARED_USES = {
    # `dimensions score` scores Definition replies with `score`'s scorer (the same
    # extraction and scoring as `arcjudge score`) and reads a score run's results through
    # its record.
    "dimensions": ("arcjudge.harness.score.records", "arcjudge.harness.score.scorer"),
    # `dimensions analyze` reads the records `dimensions` and `score` write (through their
    # own from_json) and computes the per-model statistics and token usage with the same
    # code as `dimensions score`, never its own copy.
    "analyze": (
        "arcjudge.harness.dimensions.records",
        "arcjudge.harness.dimensions.statistics",
        "arcjudge.harness.dimensions.token_usage",
        "arcjudge.harness.score.records",
    ),
}
"""The edges between workflows, each with its reason; every other import is refused."""


@pytest.mark.parametrize("workflow", WORKFLOWS)
def test_workflows_import_the_core_never_each_other(workflow):
    package = SRC / "harness" / workflow
    assert (package / "cli.py").is_file(), f"{workflow} has no cli.py"
    others = [w for w in WORKFLOWS if w != workflow]
    for path in package.rglob("*.py"):  # subpackages too (dimensions/strategies)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module in DECLARED_USES.get(workflow, ()):
                    continue
                for other in others:
                    assert not node.module.startswith(f"arcjudge.harness.{other}"), (
                        f"{workflow}/{path.name} imports {node.module}"
                    )


def test_core_imports_no_workflow():
    for path in (SRC / "harness" / "core").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not any(
                    node.module.startswith(f"arcjudge.harness.{w}") for w in WORKFLOWS
                ), f"core/{path.name} imports {node.module}"


def test_no_two_classes_share_a_name():
    seen: dict[str, str] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where = str(path.relative_to(SRC))
                assert node.name not in seen, f"{node.name} in {seen.get(node.name)} and {where}"
                seen[node.name] = where


VALUE_MODULES = ("errors", "fastpairs", "grids", "lazy_names", "safetext", "tasks", "vocabulary")
"""The top-level modules that are values (grids, tasks, words, errors, safe text): everything
else stands on them, so they import nothing from the sandbox or the harness."""
NOT_VALUES = ("__init__", "_api", "cli")
"""The other top-level modules: the public API (which reaches every command) and the
command line (which imports it all)."""
RUNTIME_EXCEPTIONS = {
    # The canonicalizer (grids.py: what a grid is) and the rule for opening third-party paths
    # (tasks.py: task files) are the sandbox runtime's: the supervisor runs that directory as
    # it is, in a bare interpreter, so they must live there, stdlib-only (checked below).
    # canonical imports its stdlib-only sibling pinned.
    "arcjudge.sandbox.runtime.canonical",
    "arcjudge.sandbox.runtime.untrusted_files",
    "arcjudge.sandbox.runtime.pinned",
}
"""The only sandbox modules the value modules may import."""


def _is_module(name: str) -> bool:
    path = SRC.parent / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """The module of every import in a tree, anywhere (functions, ``TYPE_CHECKING`` blocks).

    ``from a import b`` imports module ``a.b`` when there is one, else a name of ``a``; a
    relative import is resolved against ``package``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.append((node.lineno, sub if _is_module(sub) else module))
    return found


def _layer_breaches(path: Path) -> list[str]:
    """What a value module imports from the sandbox (but the exceptions) or the harness."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{line}: {module}"
        for line, module in _imports(tree, "arcjudge")
        if module.split(".")[:2] in (["arcjudge", "sandbox"], ["arcjudge", "harness"])
        and module not in RUNTIME_EXCEPTIONS
    ]


def test_the_import_scan_finds_imports_anywhere(tmp_path):
    source = tmp_path / "value.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from arcjudge.grids import Grid\n"
        "from arcjudge.sandbox.runtime.canonical import MAX_SIDE\n"
        "if TYPE_CHECKING:\n"
        "    from arcjudge.sandbox.types import Program\n"
        "def f():\n"
        "    import arcjudge.harness.core.store\n"
        "    from arcjudge import sandbox\n"
        "    from .harness.core import engine, tally\n"
        "    from .sandbox.runtime import untrusted_files\n"
        "    from .sandbox.runtime.framing import write_frame\n"
    )
    assert _layer_breaches(source) == [
        "value.py:5: arcjudge.sandbox.types",
        "value.py:7: arcjudge.harness.core.store",
        "value.py:8: arcjudge.sandbox",
        "value.py:9: arcjudge.harness.core.engine",
        "value.py:9: arcjudge.harness.core.tally",
        "value.py:11: arcjudge.sandbox.runtime.framing",
    ]


def test_every_top_level_module_is_a_value_or_declared_not():
    names = {p.stem for p in SRC.glob("*.py")}
    assert sorted(names) == sorted({*VALUE_MODULES, *NOT_VALUES})


@pytest.mark.parametrize("name", VALUE_MODULES)
def test_value_modules_import_nothing_from_the_sandbox_or_the_harness(name):
    assert _layer_breaches(SRC / f"{name}.py") == []


@pytest.mark.parametrize("module", sorted(RUNTIME_EXCEPTIONS))
def test_the_runtime_modules_values_import_are_stdlib_only(module):
    path = SRC.parent / (module.replace(".", "/") + ".py")
    package = module.rsplit(".", 1)[0]
    for line, name in _imports(ast.parse(path.read_text(encoding="utf-8")), package):
        # ``import pinned``: the supervisor imports its siblings by bare name
        sibling = name if name.startswith("arcjudge.") else f"{package}.{name}"
        assert name.split(".")[0] in sys.stdlib_module_names or sibling in RUNTIME_EXCEPTIONS, (
            f"{path.name}:{line}: imports {name}"
        )


@pytest.mark.parametrize("name", VALUE_MODULES)
def test_a_value_module_imports_first(name):
    # The sandbox's modules import the value layer, and grids imports the runtime's
    # canonicalizer (which makes Python import the sandbox package first): no import cycle.
    code = f"import arcjudge.{name}; from arcjudge.sandbox import RunResult, Sandbox, Status"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_the_sandbox_exports_every_public_name():
    for name in arcjudge.sandbox.__all__:
        assert getattr(arcjudge.sandbox, name) is not None, name
    assert arcjudge.sandbox.Status is Status and arcjudge.sandbox.ProgramStatus is ProgramStatus
    with pytest.raises(AttributeError):
        _ = arcjudge.sandbox.NoSuchName


def _import_graph() -> dict[str, set[str]]:
    """Each module's arcjudge imports, those inside functions too (a late import is a cycle
    put off, not removed)."""
    graph: dict[str, set[str]] = {}
    for path in _modules():
        name = ".".join(("arcjudge", *path.relative_to(SRC).with_suffix("").parts))
        name = name.removesuffix(".__init__")
        found = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from package import module`` imports that module, not the package's
                # own names (a package's __init__ listing its modules is no cycle)
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if _is_module(sub) else node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return graph


def _cycles(graph: dict[str, set[str]], package: str) -> list[list[str]]:
    """Import cycles among ``package``'s modules (its ``__init__``, a lazy façade, aside)."""
    inside = {m for m in graph if m.startswith(package + ".")}
    found: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for other in sorted(graph[module] & inside):
            if state.get(other) == 1:
                found.append([*path[path.index(other) :], other])
            elif other not in state:
                visit(other)
        path.pop()
        state[module] = 2

    for module in sorted(inside):
        if module not in state:
            visit(module)
    return found


@pytest.mark.parametrize("package", ["arcjudge.sandbox", "arcjudge.harness"])
def test_no_import_cycle(package):
    assert _cycles(_import_graph(), package) == []


def test_the_cycle_check_sees_a_late_import():
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert _cycles(graph, "p") == [["p.a", "p.b", "p.c", "p.a"]]


def _package(path: Path) -> str:
    """The dotted package a module of ``src/arcjudge`` is in."""
    return ".".join(path.parent.relative_to(SRC.parent).parts)


def test_integrations_sit_above_the_library():
    """Framework glue (``integrations/``) is imported by command lines only, never below.

    A library module that imported it would pull a framework's reader into the workflows;
    a command line (``replies-from-inspect``) may offer it.
    """
    below = [p for p in _modules() if p.name not in CLI_MODULES]
    below = [p for p in below if not p.is_relative_to(SRC / "integrations")]
    offenders = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for path in below
        for line, module in _imports(ast.parse(path.read_text(encoding="utf-8")), _package(path))
        if module.startswith("arcjudge.integrations")
    ]
    assert offenders == []
    assert (SRC / "integrations" / "inspect_log.py").is_file()
