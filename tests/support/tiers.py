"""Which tiers each test belongs to: the markers ``tests/conftest.py`` adds at collection.

The markers (registered in ``pyproject.toml``; ``tests/README.md`` says how to run them):

* ``sandbox``: the test starts a real sandbox (process workers or containers), or its module
  does in some of its tests (a module is marked whole: never a sandbox test left unmarked);
* ``docker``, ``gvisor``, ``ray``, ``nonroot``: it needs the Docker daemon and the runtime
  image, gVisor registered with that daemon, a Ray cluster, an unprivileged user (the test
  run being root's);
* ``slow``: left out of the fast tier (``-m "not slow"``): every test of the four tiers
  above, the whole-pipeline modules, the tests using a module fixture that builds the whole
  sample (15-40 s each), single tests measured over 1.5 s and the attack suite's cases that
  only wait out a time limit: the fast tier runs in under 3 minutes on 2 cores, keeps a
  test of every dimension's pass rule and runs the rest of the attack suite on the process
  backend (``bench/fast_tier_check.py`` breaks each rule and protection to show it).

Tests are marked by the fixtures they use (directly or through other fixtures), by the
backend a parametrized fixture gives them (``"docker"``), by module, function or parameter
(paths relative to ``tests/``): no test file carries a tier marker of its own.

``ARCJUDGE_AUDIT_TIERS=1`` checks the ``sandbox`` marker: a test that starts a sandbox's
workers (or, in a child process, the ``arcjudge`` command or a script importing arcjudge)
without the marker is listed at the end and fails the run. Run it on the tests that should
start none: ``ARCJUDGE_AUDIT_TIERS=1 python3 -m pytest -m "not sandbox"``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arcjudge.sandbox.process import RUNNER
from arcjudge.sandbox.transport import LocalWorkers

TESTS = Path(__file__).resolve().parents[1]

TIERS = ("sandbox", "docker", "gvisor", "ray", "nonroot", "slow")
"""Every marker added here (``pyproject.toml`` registers each, with its meaning)."""

BY_FIXTURE: dict[str, tuple[str, ...]] = {
    "sandbox": ("sandbox",),  # conftest's warm process sandbox
    "docker_image": ("docker",),  # conftest's runtime image (skips without a daemon)
    "runsc": ("gvisor", "docker", "sandbox"),  # sandbox/test_gvisor.py: the image, with runsc
}
"""Markers of a test that uses the fixture (directly or through another fixture)."""

BY_BACKEND: dict[str, tuple[str, ...]] = {"docker": ("docker", "sandbox")}
"""Markers of a test given this backend by a parametrized fixture or argument."""

SLOW_TIERS = frozenset({"docker", "gvisor", "ray", "nonroot"})
"""A test of any of these tiers is ``slow`` too: containers, clusters, user namespaces."""

_SANDBOX = ("sandbox",)
_SLOW = ("sandbox", "slow")
BY_MODULE: dict[str, tuple[str, ...]] = {
    # whole pipelines, several commands each on real data
    "end_to_end/test_analyze_synthetic.py": _SLOW,
    "end_to_end/test_arc_agi_2.py": _SLOW,
    "end_to_end/test_oracle_replies.py": _SLOW,
    "end_to_end/test_sample_loop.py": _SLOW,
    "integrations/test_inspect_task.py": _SLOW,
    # the tiers of their own
    "sandbox/test_docker.py": ("sandbox", "docker"),
    "sandbox/test_gvisor.py": ("sandbox", "docker"),  # gvisor: the tests using ``runsc``
    "sandbox/test_ray_pool.py": ("sandbox", "ray"),
    "sandbox/test_unprivileged.py": ("sandbox", "nonroot"),
    # modules that start sandboxes other than through the ``sandbox`` fixture
    "harness/analyze/test_analyze.py": _SANDBOX,
    "harness/analyze/test_sampling.py": _SANDBOX,
    "harness/core/test_store_keys.py": _SANDBOX,
    "harness/dimensions/test_dimensions.py": _SANDBOX,
    "harness/dimensions/test_faithful.py": _SANDBOX,
    "harness/dimensions/test_prompts.py": _SANDBOX,
    "harness/dimensions/test_records.py": _SANDBOX,
    "harness/dimensions/test_reply_grader.py": _SANDBOX,
    "harness/dimensions/test_resume.py": _SANDBOX,
    "harness/dimensions/test_score_replies.py": _SANDBOX,
    "harness/dimensions/test_token_usage.py": _SANDBOX,
    "harness/mutate/test_batches.py": _SANDBOX,
    "harness/mutate/test_mutate.py": _SANDBOX,
    "harness/mutate/test_records.py": _SANDBOX,
    "harness/score/test_records.py": _SANDBOX,
    "harness/score/test_score.py": _SANDBOX,
    "harness/validate/test_differential.py": _SANDBOX,
    "harness/validate/test_flow.py": _SANDBOX,
    "harness/validate/test_records.py": _SANDBOX,
    "harness/validate/test_validate.py": _SANDBOX,
    "sandbox/runtime/test_result_channel.py": _SANDBOX,
    "sandbox/test_process.py": _SANDBOX,
    "sandbox/test_registry.py": _SANDBOX,
    "sandbox/test_selfcheck.py": _SANDBOX,
    "sandbox/test_variants.py": _SANDBOX,
    "tasksets/test_commands.py": _SANDBOX,
    "test_python_api.py": _SANDBOX,  # the documented session runs in a child interpreter
}
"""Markers of every test in the module (path relative to ``tests/``)."""

SLOW_FIXTURES = frozenset(
    {
        # module fixtures that build (and score) the sample or a world of several tasks
        "harness/analyze/test_analyze.py::sample_analysis",
        "harness/analyze/test_sampling.py::sample",
        "harness/dimensions/test_dimensions.py::inputs",
        "harness/dimensions/test_records.py::run",
        "harness/dimensions/test_reply_grader.py::instances",
        "harness/dimensions/test_score_replies.py::built",
        "harness/dimensions/test_token_usage.py::built",
        "harness/dimensions/test_faithful.py::world",
        "harness/dimensions/test_prompts.py::built",
        "harness/dimensions/test_resume.py::world",
        "harness/mutate/test_batches.py::runs",
        "harness/mutate/test_mutate.py::mutated",
        "harness/mutate/test_records.py::mutated",
        "harness/score/test_records.py::world",
        "tasksets/test_commands.py::parc",
    }
)
"""``slow`` for every test using the fixture (``module::fixture``, defined in that module)."""

SANDBOX_TESTS: dict[str, tuple[str, ...]] = {
    "test_cli.py": (
        "test_bad_input_gives_one_line_error",
        "test_installed_command_has_no_traceback_on_bad_input",  # the command, as a child
        "test_run_prints_per_pair_verdicts",
        "test_run_reports_wrong_answers",
    ),
    "test_safetext.py": ("test_run_table_shows_control_characters_escaped",),
    "test_tasks.py": ("test_json_nested_too_deeply_is_a_one_line_error",),
}
"""``sandbox`` tests by module and function, in modules not marked whole."""

SLOW_TESTS: dict[str, tuple[str, ...]] = {
    "harness/core/test_extract.py": (
        "test_hundred_thousand_bare_fences_pair_up",
        "test_megabyte_replies_complete",
    ),
    "harness/core/test_lean_store.py": (
        "test_samples_drawn_per_task_in_chunks_are_those_drawn_at_once",
    ),
    "harness/core/test_store_keys.py": (
        "test_changed_module_file_does_not_replay",
        "test_changed_wall_limit_does_not_replay",
        "test_fully_cached_rerun_writes_the_same_bytes",
        "test_policy_mode_change_does_not_replay",
    ),
    "harness/dimensions/test_corruptions.py": (
        "test_color_flip_property_one_connected_region",
        "test_instance_mismatch_property",
        "test_parse_harc_grid_round_trip",
    ),
    "harness/dimensions/test_replies.py": (
        "test_a_grid_as_json_parses_back",
        "test_a_grid_as_rows_of_digits_parses_back",
        "test_a_megabyte_of_garbage_is_unparsable",
        "test_a_pair_as_json_parses_back",
    ),
    "harness/mutate/test_mutate.py": (
        "test_a_verifier_too_deep_to_parse_is_its_tasks_problem",
        "test_parse_error_is_reported_and_the_run_continues",
        "test_the_command_line_starts_without_numpy",
    ),
    "harness/score/test_score.py": (
        "test_compact_and_spaced_arcgen_files_score_the_same",
        "test_consistency_helpers",
        "test_every_verdict_and_failure_class",
        "test_interrupt_and_resume_is_byte_identical",
        "test_lone_surrogates_in_program_texts_end_to_end",
        "test_outputs_are_owner_only_and_runtime_recorded",
        "test_results_from_another_runtime_are_not_reused",
        "test_stop_at_first_failure_keeps_verdicts",
        "test_verified_samples_come_from_the_engine_and_the_store",
    ),
    "harness/validate/test_report.py": (
        "test_chromium_dom",
        "test_chromium_screenshot",
        "test_report_size_is_reasonable_for_400_tasks_by_3_sources",
    ),
    "harness/validate/test_validate.py": (
        "test_bundled_sample_matches_its_expected_verdicts",
        "test_cli_writes_its_files_and_summary",
        "test_interrupt_and_resume_gives_identical_verdicts",
        "test_killed_run_resumes_too",
        "test_rerun_uses_the_cache",
        "test_sample_on_the_full_arcgen_stable_set",
        "test_samples_are_reproducible_and_seeded",
        "test_task_file_that_is_not_arc_json",
    ),
    "mutation/test_mutation.py": ("test_drop_assign_rewire_never_reads_an_unbound_name",),
    "mutation/test_parse_guard.py": (
        "test_a_deep_and_chain_is_a_parse_failure_not_a_crash",
        "test_a_source_that_may_need_more_than_the_largest_stack_is_tried_in_a_child",
        "test_dotted_import_names_get_a_stack_large_enough",
        "test_the_stack_bound_follows_the_largest_top_level_statement",
    ),
    "sandbox/test_image.py": (
        "test_dockerfile_builds_the_shipped_context_under_the_script_tag",
        "test_print_tag_follows_the_documented_tag_scheme",
        "test_print_tag_notes_an_overriding_arcjudge_image",
        "test_the_inputs_are_package_data",
    ),
    "sandbox/test_process.py": (
        "test_a_program_cannot_take_cpu_from_another_workers_program",
        "test_no_zombies_accumulate_and_forking_keeps_working",
        "test_supervisors_are_pinned_apart_and_their_programs_share_their_cpu",
    ),
    "sandbox/test_selfcheck.py": ("test_without_isolation_the_suite_reports_uncontained_cases",),
    "tasksets/test_commands.py": ("test_the_example_task_folders_go_through_every_command",),
    "test_cli.py": (
        "test_installed_command_has_no_traceback_on_bad_input",
        "test_run_prints_per_pair_verdicts",
        "test_run_reports_wrong_answers",
    ),
    "test_fastpairs.py": (
        "test_compact_files_read_as_the_strict_reader_reads_them",
        "test_the_compact_forms_read_with_the_grids_are_the_grids_compact_forms",
    ),
    "test_grids.py": (
        "test_prop_canonical_grids_are_fixed_points",
        "test_prop_canonical_wire_agrees_on_junk",
        "test_prop_canonical_wire_is_canonicalize_then_to_wire",
        "test_prop_canonicalize_never_raises_and_is_idempotent",
        "test_prop_cells_accepted_exactly_when_integral_in_range",
        "test_prop_hamming_matches_reference",
        "test_prop_hamming_single_change",
        "test_prop_renderings_canonicalize_to_the_grid",
        "test_prop_to_lists_round_trip",
        "test_prop_validate_plain_is_stricter_than_canonicalize",
        "test_prop_wire_distance_of_same_shapes_matches_the_grids",
    ),
    "test_layout.py": ("test_no_two_classes_share_a_name",),
    "test_python_api.py": (
        "test_the_api_and_the_command_line_write_the_same_files",
        "test_the_documented_session_runs_as_written",
        "test_the_session_check_can_fail",
    ),
    "test_record_files.py": (
        "test_mutants_corruptions_and_timings_round_trip",
        "test_score_results_round_trip",
        "test_verdicts_round_trip",
    ),
    "test_tasks.py": ("test_every_arcgen_file_loads_including_grids_over_30",),
}
"""``slow`` tests by module and function (every parametrization): each over 1.5 s."""


SLOW_PARAMS: dict[str, tuple[str, ...]] = {
    # attacks contained by the wall or CPU limit alone, each waiting it out (~2 s): the fast
    # tier keeps infinite_loop_python and regex_backtracking_in_c (a Python loop, a C call
    # no signal interrupts) and the process backend's own timeout tests
    "sandbox/test_selfcheck.py": (
        "base_exception_swallowed",
        "bigint_power_in_c",
        "sigalrm_disarmed",
        "sleep_past_wall_limit",
        "top_level_never_returns",
    ),
}
"""``slow`` for the tests of the module given one of these parameter values."""


def markers_of(item: pytest.Item) -> set[str]:
    """The tier markers of one collected test."""
    module = item.path.relative_to(TESTS).as_posix()
    found = set(BY_MODULE.get(module, ()))
    for fixture in getattr(item, "fixturenames", ()):
        found.update(BY_FIXTURE.get(fixture, ()))
        if f"{module}::{fixture}" in SLOW_FIXTURES:
            found.add("slow")
    callspec = getattr(item, "callspec", None)
    for value in callspec.params.values() if callspec is not None else ():
        if isinstance(value, str):
            found.update(BY_BACKEND.get(value, ()))
            if value in SLOW_PARAMS.get(module, ()):
                found.add("slow")
    function = getattr(item, "originalname", item.name)
    if function in SANDBOX_TESTS.get(module, ()):
        found.add("sandbox")
    if function in SLOW_TESTS.get(module, ()):
        found.add("slow")
    if found & SLOW_TIERS:
        found.add("slow")
    return found


def mark(items: Iterable[pytest.Item]) -> None:
    """Add each test's tier markers (before ``-m`` selects by them)."""
    for item in items:
        for name in sorted(markers_of(item)):
            item.add_marker(name)


# ------------------------------------------------------------------------------ the audit


class SpawnAudit:
    """Tests unmarked ``sandbox`` that start a sandbox's workers or the command line."""

    def __init__(self) -> None:
        self.current: pytest.Item | None = None
        self.unmarked: dict[str, str] = {}

    def started(self, what: str) -> None:
        """Note what the test running now started, unless it is marked ``sandbox``."""
        item = self.current
        if item is not None and item.get_closest_marker("sandbox") is None:
            self.unmarked.setdefault(item.nodeid, what[:120])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        self.current = item
        try:
            return (yield)
        finally:
            self.current = None

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unmarked:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for nodeid, what in sorted(self.unmarked.items()):
            terminalreporter.write_line(f"unmarked sandbox test: {nodeid}: {what}")


def start_audit(config: pytest.Config) -> None:
    """Watch sandboxes' workers start, and child processes (``ARCJUDGE_AUDIT_TIERS=1``).

    Every built-in backend starts its workers through ``LocalWorkers.open`` (processes or
    containers); a command run as a child process may start a sandbox of its own.
    """
    audit = SpawnAudit()
    config.pluginmanager.register(audit, "arcjudge-tier-audit")
    open_workers = LocalWorkers.open
    popen = subprocess.Popen.__init__

    def open_audited(self: LocalWorkers[Any], *args: Any, **kwargs: Any) -> Any:
        audit.started(f"{self.size} sandbox worker(s)")
        return open_workers(self, *args, **kwargs)

    def popen_audited(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        argv = [str(a) for a in args] if isinstance(args, list | tuple) else [str(args)]
        child_script = any("import arcjudge" in a for a in argv)  # ``python -c`` using it
        if "arcjudge.cli" in argv or str(RUNNER) in argv or child_script:
            audit.started(" ".join(argv))
        popen(self, args, *rest, **kw)

    LocalWorkers.open = open_audited  # type: ignore[method-assign]
    subprocess.Popen.__init__ = popen_audited  # type: ignore[method-assign]
