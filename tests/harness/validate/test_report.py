"""Tests for the HTML report renderer (arcjudge.harness.validate.report).

The unit tests decode the SVG grids back into cells and check the escaping of hostile text.
The DOM tests render a small report, load it in headless Chromium and inspect the DOM the
browser actually built (and a screenshot). They skip when Chromium is absent, unless
ARCJUDGE_REQUIRE_CHROMIUM=1, in which case they fail.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import psutil
import pytest

from arcjudge.harness.core.html import ARC_PALETTE, ERROR_LIMIT, grid_svg
from arcjudge.harness.core.manifest import (
    Manifest,
    ManifestCoverage,
    ManifestDifferential,
    ManifestSource,
    ManifestTask,
)
from arcjudge.harness.validate.report import render_validate_report
from arcjudge.vocabulary import Verdict

SVG_NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script>"
HOSTILE_ERROR = 'boom </pre><img src=x onerror="alert(2)"><script>alert(3)</script>'
CHROMIUM_TIMEOUT = 30.0
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# --------------------------------------------------------------------------- SVG decoding


def decode_svg(svg: str) -> tuple[int, int, dict[tuple[int, int], str], set[tuple[int, int]]]:
    """Parse a grid SVG back into (rows, cols, {(row, col): color}, {diff-marked cells})."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    rows, cols = int(root.get("data-rows")), int(root.get("data-cols"))
    cells: dict[tuple[int, int], str] = {}
    marks: set[tuple[int, int]] = set()
    for element in root.iter():
        if element.tag == f"{SVG_NS}rect" and element.get("fill", "none") != "none":
            assert element.get("width") == str(cols) and element.get("height") == str(rows)
            for y in range(rows):
                for x in range(cols):
                    cells[(y, x)] = element.get("fill")
        elif element.tag == f"{SVG_NS}path" and element.get("class") == "diff":
            match = re.fullmatch(r"M(\d+)\.2 (\d+)\.2h\.6v\.6h-\.6z", element.get("d"))
            assert match, element.get("d")
            marks.add((int(match[2]), int(match[1])))
        elif element.tag == f"{SVG_NS}path" and element.get("stroke") in ARC_PALETTE:
            for y, x, width in path_runs(element.get("d")):
                for dx in range(width):
                    cells[(y, x + dx)] = element.get("stroke")
    return rows, cols, cells, marks


def path_runs(d: str) -> list[tuple[int, int, int]]:
    """Interpret a run path (``M x y.5 h w`` / ``m dx dy h w``) as (row, col, length) runs."""
    tokens = re.findall(r"([Mm])(-?\d+(?:\.5)?) (-?\d+(?:\.5)?)h(\d+)", d)
    assert "".join(f"{c}{x} {y}h{w}" for c, x, y, w in tokens) == d, d
    runs, pen_x, pen_y = [], 0.0, 0.0
    for command, x, y, width in tokens:
        if command == "M":
            pen_x, pen_y = float(x), float(y)
        else:
            assert runs, "a path must start with an absolute move"
            pen_x, pen_y = pen_x + float(x), pen_y + float(y)
        assert pen_x.is_integer() and pen_y - int(pen_y) == 0.5, d
        runs.append((int(pen_y), int(pen_x), int(width)))
        pen_x += int(width)
    return runs


def expected_marks(grid: list[list[int]], other: list[list[int]]) -> set[tuple[int, int]]:
    """Cells of ``grid`` that differ from ``other`` or lie outside its shape."""
    return {
        (y, x)
        for y, row in enumerate(grid)
        for x, value in enumerate(row)
        if y >= len(other) or x >= len(other[y]) or other[y][x] != value
    }


# --------------------------------------------------------------------------- grid_svg units


@pytest.mark.parametrize(
    "grid",
    [
        [[0]],
        [[7]],
        [[1, 2], [3, 4]],
        [[0, 0, 0], [0, 5, 0], [0, 0, 0]],
        [[v % 10 for v in range(r, r + 30)] for r in range(30)],
        [[(x * y) % 3 for x in range(13)] for y in range(4)],
        [[9, 9, 9, 8, 8, 1, 1, 1, 1]],
    ],
)
def test_grid_svg_draws_every_cell_in_its_color(grid):
    svg = grid_svg(grid)
    rows, cols, cells, marks = decode_svg(svg)
    assert (rows, cols) == (len(grid), len(grid[0]))
    assert len(cells) == rows * cols
    assert cells == {
        (y, x): ARC_PALETTE[v] for y, row in enumerate(grid) for x, v in enumerate(row)
    }
    assert not marks
    root = ET.fromstring(svg)
    assert root.get("class") == "grid"
    assert root.get("role") == "img"
    assert root.get("aria-label") == f"grid {rows}x{cols}"
    assert root.get("viewBox") == f"0 0 {cols} {rows}"


def test_grid_svg_cell_size_sets_pixels():
    root = ET.fromstring(grid_svg([[1, 2, 3], [4, 5, 6]], cell=7))
    assert (root.get("width"), root.get("height")) == ("21", "14")


def test_grid_svg_palette_is_standard():
    assert ARC_PALETTE == (
        "#000000",
        "#0074D9",
        "#FF4136",
        "#2ECC40",
        "#FFDC00",
        "#AAAAAA",
        "#F012BE",
        "#FF851B",
        "#7FDBFF",
        "#870C25",
    )


def test_grid_svg_diff_marks_hand_made_pair():
    produced = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    expected = [[1, 0, 3], [4, 5, 0], [7, 8, 9]]
    _, _, _, marks = decode_svg(grid_svg(produced, diff=expected))
    assert marks == {(0, 1), (1, 2)}


def test_grid_svg_diff_marks_cells_outside_the_other_shape():
    produced = [[1, 1, 1], [1, 1, 1], [1, 1, 1]]
    expected = [[1, 2], [1, 1]]
    svg = grid_svg(produced, diff=expected)
    _, _, _, marks = decode_svg(svg)
    # (0,1) differs; column 2 and row 2 fall outside the 2x2 expected grid.
    assert marks == {(0, 1), (0, 2), (1, 2), (2, 0), (2, 1), (2, 2)}
    assert svg.count('class="diff"') == 6


def test_grid_svg_diff_smaller_grid_marks_only_its_own_cells():
    produced = [[3]]
    expected = [[3, 3], [3, 3]]
    assert decode_svg(grid_svg(produced, diff=expected))[3] == set()
    assert decode_svg(grid_svg([[4]], diff=expected))[3] == {(0, 0)}


def test_grid_svg_identical_diff_has_no_marks():
    grid = [[1, 2], [3, 4]]
    assert 'class="diff"' not in grid_svg(grid, diff=[row[:] for row in grid])
    assert 'class="diff"' not in grid_svg(grid)


def test_grid_svg_tolerates_odd_values_and_empty_grids():
    rows, cols, cells, _ = decode_svg(grid_svg([[1, 42], [-1, 0]]))
    assert (rows, cols, len(cells)) == (2, 2, 4)
    assert cells[(0, 0)] == ARC_PALETTE[1] and cells[(1, 1)] == ARC_PALETTE[0]
    empty = ET.fromstring(grid_svg([]))
    assert (empty.get("data-rows"), empty.get("data-cols")) == ("0", "0")


# --------------------------------------------------------------------------- report fixtures


def _failure(split_index, status, grid_in, expected, produced, error=None):
    return {
        "index": split_index,
        "status": status,
        "input": grid_in,
        "expected": expected,
        "produced": produced,
        "error": error,
    }


def hand_manifest(
    sources: list[str],
    tasks: dict[str, ManifestTask],
    covered: int = 0,
    per_source: dict[str, dict[str, int]] | None = None,
) -> Manifest:
    """A manifest record of ``sources`` (golf, made up paths) and ``tasks``, seed 0, 10 samples."""
    return Manifest(
        sources=tuple(ManifestSource(name, "golf", f"/src/{name}") for name in sources),
        generator=None,
        seed=0,
        samples=10,
        probe_samples=0,
        quarantine_suspects=False,
        wall_seconds=1.0,
        coverage=ManifestCoverage(
            len(tasks), covered, round(covered / len(tasks), 6) if tasks else 0.0
        ),
        differential=ManifestDifferential(0, 0, 0, 0),
        per_source={
            s: {Verdict(k): n for k, n in c.items()} for s, c in (per_source or {}).items()
        },
        tasks=tasks,
    )


def sample_run() -> tuple[Manifest, list[dict]]:
    """A small hand-made manifest and verdicts: three tasks, three sources (one hostile)."""
    verdicts = [
        {
            "task_id": "007bbfb7",
            "source": "re-arc",
            "verdict": "valid",
            "splits": {"train": [5, 5], "test": [1, 1], "arc-gen": [250, 250]},
            "statuses": {"train": {"ok": 5}},
            "first_failure": {},
            "provenance": {"kind": "re-arc", "file": "/v/verifiers.py", "entry_point": "v"},
            "error": None,
        },
        {
            "task_id": "007bbfb7",
            "source": "golf1",
            "verdict": "invalid",
            "splits": {"train": [5, 5], "test": [1, 1], "arc-gen": [248, 250]},
            "statuses": {"train": {"ok": 5}, "arc-gen": {"ok": 249, "timeout": 1}},
            "first_failure": {
                # generator comes after arc-gen in the split order: arc-gen must be shown.
                "generator": _failure(0, "ok", [[1]], [[1]], [[2]]),
                "arc-gen": _failure(
                    17,
                    "ok",
                    [[0, 7, 7], [7, 7, 7], [0, 7, 7]],
                    [[0, 7, 7, 0], [7, 7, 7, 7], [0, 7, 7, 0], [4, 4, 4, 4]],
                    [[0, 7, 7, 0], [7, 0, 7, 7], [0, 7, 7, 1], [4, 4, 4, 4]],
                ),
            },
            "provenance": {"kind": "golf", "file": "/g/task001.py", "sha256": "ab" * 32},
            "error": None,
        },
        {
            "task_id": "007bbfb7",
            "source": HOSTILE,
            "verdict": "invalid",
            "splits": {"train": [4, 5]},
            "statuses": {"train": {"ok": 4, "error": 1}},
            "first_failure": {
                "train": _failure(
                    2, "ok", [[1, 2], [3, 4]], [[4, 3], [2, 1]], [[4, 3, 9], [2, 1, 9]]
                ),
            },
            "provenance": {"kind": "golf", "file": f"/x/{HOSTILE}.py"},
            "error": None,
        },
        {
            "task_id": "0a938d79",
            "source": "re-arc",
            "verdict": "load_error",
            "splits": {},
            "statuses": {},
            "first_failure": {},
            "provenance": {},
            "error": "SyntaxError: <b>bad</b>",
        },
        {
            "task_id": "0a938d79",
            "source": HOSTILE,
            "verdict": "invalid",
            "splits": {"train": [0, 3], "test": [0, 1]},
            "statuses": {"train": {"timeout": 3}, "test": {"timeout": 1}},
            "first_failure": {
                "test": _failure(0, "error", [[5]], [[5, 5]], None, "x" * 2000),
                "train": _failure(
                    1,
                    "timeout",
                    [[3, 3], [3, 3], [3, 0]],
                    [[8, 8, 8]],
                    [[8, 9, 8], [8, 8, 8]],
                    HOSTILE_ERROR,
                ),
            },
            "provenance": {},
            "error": None,
        },
        {
            "task_id": HOSTILE,
            "source": "golf1",
            "verdict": "invalid",
            "splits": {"test": [0, 1]},
            "statuses": {"test": {"timeout": 1}},
            "first_failure": {
                "test": _failure(0, "timeout", [[6, 6]], [[6], [6]], None, "deadline exceeded")
            },
            "provenance": {},
            "error": None,
        },
    ]
    manifest = hand_manifest(
        ["re-arc", "golf1", HOSTILE],
        {
            "007bbfb7": ManifestTask("re-arc", ("re-arc",), {}),
            "0a938d79": ManifestTask(None, (), {}),
            HOSTILE: ManifestTask(None, (), {}),
        },
        covered=1,
        per_source={
            "re-arc": {"valid": 1, "invalid": 0, "missing": 1, "load_error": 1},
            "golf1": {"valid": 0, "invalid": 2, "missing": 1, "load_error": 0},
            HOSTILE: {"valid": 0, "invalid": 2, "missing": 1, "load_error": 0},
        },
    )
    return manifest, verdicts


def expected_failures(verdicts: list[dict]) -> dict[tuple[str, str], tuple[list, list, object]]:
    """(task, source) of every invalid verdict -> (input, expected, produced) shown."""
    out = {}
    for record in verdicts:
        if record["verdict"] != "invalid":
            continue
        failures = record["first_failure"]
        split = next(s for s in ("train", "test", "arc-gen", "generator") if s in failures)
        detail = failures[split]
        out[(record["task_id"], record["source"])] = (
            detail["input"],
            detail["expected"],
            detail["produced"],
        )
    return out


# --------------------------------------------------------------------------- report units


def test_report_escapes_hostile_text():
    manifest, verdicts = sample_run()
    page = render_validate_report(manifest, verdicts)
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "<b>bad</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    assert page.startswith("<!DOCTYPE html>")


def test_report_structure_and_failure_selection():
    manifest, verdicts = sample_run()
    page = render_validate_report(manifest, iter(verdicts))  # any iterable
    for section in ("coverage", "sources", "tasks", "failures"):
        assert page.count(f'id="{section}"') == 1
    assert page.count('class="failure"') == sum(v["verdict"] == "invalid" for v in verdicts)
    # golf1 on 007bbfb7 shows arc-gen pair 17, not the generator failure.
    block = page.split('data-task="007bbfb7" data-source="golf1"')[1].split('class="failure"')[0]
    assert "split <b>arc-gen</b>, pair <b>17</b>" in block
    # The hostile source on 0a938d79 shows train (before test), whose error is shown.
    assert "x" * 600 not in page
    assert "split <b>train</b>, pair <b>1</b>, status <b>timeout</b>" in page


def test_report_truncates_errors():
    manifest, verdicts = sample_run()
    verdicts[4]["first_failure"] = {"test": verdicts[4]["first_failure"]["test"]}
    page = render_validate_report(manifest, verdicts)
    pre = re.search(r'<pre class="error">(x+)', page)
    assert pre and len(pre[1]) == ERROR_LIMIT
    assert "1500 more characters" in page


def test_report_produced_none_shows_status():
    manifest, verdicts = sample_run()
    page = render_validate_report(manifest, verdicts)
    block = page.split(f'data-task="{HOSTILE.replace("<", "&lt;").replace(">", "&gt;")}"')[1]
    assert block.count('class="grid"') == 2
    assert '<div class="noout">timeout</div>' in block


def test_report_without_invalid_verdicts():
    page = render_validate_report(
        hand_manifest(["a"], {"t": ManifestTask("a", ("a",), {})}, covered=1),
        [{"task_id": "t", "source": "a", "verdict": "valid"}],
    )
    assert 'class="failure"' not in page
    assert "No invalid verifiers." in page
    assert "<b>1</b> of <b>1</b> tasks" in page


def test_report_size_is_reasonable_for_400_tasks_by_3_sources():
    sources = ["re-arc", "golf1", "golf2"]
    verdicts = []
    for t in range(400):
        side = 10 + t % 21
        grid = [
            [(x // 3 + y // 4 + t) % 10 if (x + y) % 5 else 0 for x in range(side)]
            for y in range(side)
        ]
        wrong = [row[:] for row in grid]
        wrong[side // 2][side // 2] = (wrong[side // 2][side // 2] + 1) % 10
        for source in sources:
            verdicts.append(
                {
                    "task_id": f"{t:08x}",
                    "source": source,
                    "verdict": "invalid",
                    "first_failure": {"arc-gen": _failure(3, "ok", grid, grid, wrong)},
                }
            )
    start = time.perf_counter()
    page = render_validate_report(hand_manifest(sources, {}), verdicts)
    elapsed = time.perf_counter() - start
    assert page.count('class="failure"') == 1200
    # A pessimistic case (every verifier invalid, striped 10..30-sided grids in ten colors,
    # about 6 KB per failure); realistic runs are far smaller.
    size = len(page.encode())
    print(f"400x3 all-invalid report: {size / 1e6:.2f} MB in {elapsed:.2f}s")
    assert size < 8_000_000, size
    assert elapsed < 10


# --------------------------------------------------------------------------- headless Chromium


class _Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: _Node | None, text: str = ""):
        self.tag, self.attrs, self.parent, self.text = tag, attrs, parent, text
        self.children: list[_Node] = []

    def iter(self):
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[_Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.attrs.get("class", "").split())
        ]

    def all_text(self) -> str:
        return "".join(n.text for n in self.iter())


class _TreeBuilder(HTMLParser):
    VOID: ClassVar[set[str]] = {
        "meta",
        "br",
        "hr",
        "img",
        "input",
        "link",
        "area",
        "base",
        "col",
        "source",
        "wbr",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in self.VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(_Node(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(_Node("#text", {}, self.current, data))


def parse_dom(text: str) -> _Node:
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


@pytest.fixture(scope="module")
def chromium() -> str:
    """Path of the Chromium binary; skips without it unless ARCJUDGE_REQUIRE_CHROMIUM=1."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and os.access("/usr/bin/chromium", os.X_OK):
        path = "/usr/bin/chromium"
    if path is None:
        if os.environ.get("ARCJUDGE_REQUIRE_CHROMIUM") == "1":
            pytest.fail("chromium is required here (ARCJUDGE_REQUIRE_CHROMIUM=1) but not found")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return path


_PR_SET_CHILD_SUBREAPER = 36


@contextlib.contextmanager
def _subreaper():
    """Adopt orphaned descendants while active, so exited Chromium helpers can be reaped.

    Chromium's helper processes (zygote, crashpad) outlive the browser process by a moment;
    without a subreaper they would be reparented to pid 1, which may never reap them.
    """
    libc = None
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                libc = None
    try:
        yield
    finally:
        if libc is not None:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _chromium_processes(user_data_dir: Path, before: set[int]) -> list[psutil.Process]:
    """Processes of the Chromium run that used ``user_data_dir`` (live or adopted zombies)."""
    found = []
    me = psutil.Process()
    for child in me.children():
        if child.pid in before:
            continue
        with contextlib.suppress(psutil.Error):
            if child.name().startswith("chrom"):
                found.append(child)
    mark = f"--user-data-dir={user_data_dir}"
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if proc.pid not in {p.pid for p in found} and mark in (proc.info.get("cmdline") or []):
            found.append(proc)
    return found


def run_chromium(binary: str, tmp_path: Path, *args: str) -> tuple[str, float]:
    """Run headless Chromium once; return its stdout and wall time.

    Kills the whole process group on timeout, reaps the helpers it leaves behind and fails
    the test if any Chromium process of this run is still alive afterwards.
    """
    user_data_dir = tmp_path / f"chromium-profile-{time.monotonic_ns()}"
    user_data_dir.mkdir()
    command = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={user_data_dir}", *args]
    before = {p.pid for p in psutil.Process().children()}
    start = time.perf_counter()
    with _subreaper():
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            text=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=CHROMIUM_TIMEOUT)
            timed_out = False
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            timed_out = True
        elapsed = time.perf_counter() - start
        # Give helpers a moment to exit, then kill and reap whatever this run left.
        deadline = time.monotonic() + 5
        while True:
            leftovers = _chromium_processes(user_data_dir, before)
            alive = [p for p in leftovers if _is_alive(p)]
            if not alive or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for leftover in alive:
            with contextlib.suppress(psutil.Error):
                leftover.kill()
        for leftover in leftovers:
            with contextlib.suppress(ChildProcessError, OSError):
                if leftover.pid not in before and leftover.ppid() == os.getpid():
                    os.waitpid(leftover.pid, 0)
    still = [p.pid for p in _chromium_processes(user_data_dir, before) if _is_alive(p)]
    assert not timed_out, f"chromium timed out after {CHROMIUM_TIMEOUT}s: {stderr[-2000:]}"
    assert not alive, f"chromium processes were still running after the browser exited: {alive}"
    assert not still, f"chromium processes left behind: {still}"
    assert proc.returncode == 0, f"chromium exited {proc.returncode}: {stderr[-2000:]}"
    return stdout, elapsed


def _is_alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> tuple[Path, Manifest, list[dict]]:
    manifest, verdicts = sample_run()
    path = tmp_path_factory.mktemp("report") / "validate report.html"
    path.write_text(render_validate_report(manifest, verdicts), encoding="utf-8")
    return path, manifest, verdicts


def _svg_shape(node: _Node) -> tuple[int, int]:
    return int(node.attrs["data-rows"]), int(node.attrs["data-cols"])


def _shape(grid: list[list[int]]) -> tuple[int, int]:
    return len(grid), len(grid[0])


def test_chromium_dom(chromium, report_file, tmp_path):
    path, _, verdicts = report_file
    dom_text, elapsed = run_chromium(chromium, tmp_path, "--dump-dom", path.as_uri())
    print(f"chromium --dump-dom took {elapsed:.2f}s")
    dom = parse_dom(dom_text)

    # Sections.
    ids = {n.attrs.get("id") for n in dom.iter()}
    assert {"coverage", "sources", "tasks", "failures"} <= ids
    for section in ("coverage", "sources", "tasks", "failures"):
        assert [n.tag for n in dom.iter() if n.attrs.get("id") == section] == ["section"]
    coverage = next(n for n in dom.iter() if n.attrs.get("id") == "coverage").all_text()
    assert "1 of 3 tasks have at least one valid verifier" in coverage
    assert "seed 0" in coverage and "10 generated samples" in coverage

    # Tables: per source and per task (one verdict cell per source).
    sources_table = next(n for n in dom.iter() if n.attrs.get("id") == "sources")
    assert len(sources_table.find_all("tbody")[0].find_all("tr")) == 3
    tasks_table = next(n for n in dom.iter() if n.attrs.get("id") == "tasks")
    task_rows = tasks_table.find_all("tbody")[0].find_all("tr")
    assert len(task_rows) == 3
    for row in task_rows:
        assert len(row.find_all("td", "v")) == 3
    assert len(tasks_table.find_all("td", "v-invalid")) == 4
    assert len(tasks_table.find_all("td", "v-load_error")) == 1

    # One failure block per invalid verdict, with the right pictures.
    wanted = expected_failures(verdicts)
    blocks = dom.find_all(cls="failure")
    assert len(blocks) == sum(v["verdict"] == "invalid" for v in verdicts) == len(wanted)
    seen = set()
    for block in blocks:
        key = (block.attrs["data-task"], block.attrs["data-source"])
        seen.add(key)
        grid_in, expected, produced = wanted[key]
        svgs = block.find_all("svg", "grid")
        if produced is None:
            assert [_svg_shape(s) for s in svgs] == [_shape(grid_in), _shape(expected)]
            assert [n.all_text() for n in block.find_all("div", "noout")] == ["timeout"]
            assert not block.find_all(cls="diff")
            continue
        assert len(svgs) == 3
        assert [_svg_shape(s) for s in svgs] == [
            _shape(grid_in),
            _shape(expected),
            _shape(produced),
        ]
        for svg in svgs:
            assert svg.attrs["role"] == "img"
            assert svg.attrs["aria-label"] == "grid {}x{}".format(*_svg_shape(svg))
        assert not svgs[0].find_all(cls="diff") and not svgs[1].find_all(cls="diff")
        assert len(svgs[2].find_all(cls="diff")) == len(expected_marks(produced, expected))
    assert seen == set(wanted)
    assert (HOSTILE, "golf1") in seen and ("007bbfb7", HOSTILE) in seen
    # Concrete counts for the hand-made pairs, so expected_marks itself is checked too.
    marks = {
        (b.attrs["data-task"], b.attrs["data-source"]): len(b.find_all(cls="diff")) for b in blocks
    }
    assert marks == {
        ("007bbfb7", "golf1"): 2,
        ("007bbfb7", HOSTILE): 2,
        ("0a938d79", HOSTILE): 4,
        (HOSTILE, "golf1"): 0,
    }

    # Hostile text is text, never markup.
    assert not dom.find_all("script")
    assert not dom.find_all("img")
    assert not [
        (n.tag, name) for n in dom.iter() for name in n.attrs if name.lower().startswith("on")
    ]
    assert HOSTILE in dom.all_text()
    assert HOSTILE_ERROR in dom.all_text()
    assert "SyntaxError: <b>bad</b>" in [
        n.attrs.get("title") for n in tasks_table.find_all("td", "v-load_error")
    ]


def test_chromium_screenshot(chromium, report_file, tmp_path):
    path, _, _ = report_file
    shot = tmp_path / "report.png"
    _, elapsed = run_chromium(
        chromium,
        tmp_path,
        "--hide-scrollbars",
        "--window-size=1200,1700",
        f"--screenshot={shot}",
        path.as_uri(),
    )
    print(f"chromium --screenshot took {elapsed:.2f}s")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1200, 1700)
    assert len(data) > 20_000, len(data)
