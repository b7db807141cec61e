"""The self-check attack suite on the process backend: every case must be contained."""

from __future__ import annotations

import pytest

from arcjudge import cli
from arcjudge.sandbox import selfcheck
from arcjudge.sandbox.process import ProcessSandbox
from arcjudge.sandbox.selfcheck import CASES, Case, cases_for, run_suite


def _selected_cases(request: pytest.FixtureRequest) -> set[str]:
    """The cases this session runs on the backend (a tier or ``-k`` may leave some out)."""
    names = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if (
            getattr(item, "module", None) is request.module
            and callspec is not None
            and callspec.params.get("outcomes") == request.param
        ):
            names.add(callspec.params["name"])
    return names


@pytest.fixture(scope="module", params=["process", "docker"])
def outcomes(request):
    """Every selected case's outcome on the backend, from one run of the suite."""
    if request.param == "docker":
        from arcjudge.sandbox.docker import DockerSandbox

        image = request.getfixturevalue("docker_image")
        factory = lambda dirs: DockerSandbox(workers=1, image=image, module_dirs=dirs)  # noqa: E731
    else:
        factory = lambda dirs: ProcessSandbox(workers=1)  # noqa: E731
    return request.param, {o.name: o for o in run_suite(factory, _selected_cases(request))}


@pytest.mark.parametrize("name", [c.name for c in CASES] + ["after_suite"])
def test_case_is_contained(outcomes, name):
    backend, results = outcomes
    case = next((c for c in CASES if c.name == name), None)
    if case is not None and case not in cases_for(backend):
        pytest.skip(f"{name} applies only to {case.backends}")
    outcome = results[name]
    assert outcome.contained, f"{backend} {name}: expected {outcome.expected}, got {outcome.got}"


def test_isolation_protections_are_active_as_root():
    import os

    with ProcessSandbox(workers=1) as sb:
        prot = sb.protections()
    if os.geteuid() != 0:
        pytest.skip("namespaces and privilege drop need root")
    for name in ("network_namespace", "read_only_root", "pid_namespace", "privilege_drop"):
        assert prot[name], name


def test_without_isolation_the_suite_reports_uncontained_cases():
    outcomes = {
        o.name: o
        for o in run_suite(
            lambda dirs: ProcessSandbox(workers=1, isolation=False),
            {
                "write_outside_workdir",
                "read_task_data_on_host",
                "infinite_loop_python",
                "socket_families_other_than_unix",
            },
        )
    }
    assert outcomes["infinite_loop_python"].contained
    assert not outcomes["write_outside_workdir"].contained
    assert not outcomes["read_task_data_on_host"].contained
    # the syscall filter needs no privileges: it holds without namespaces too
    assert outcomes["socket_families_other_than_unix"].contained


def test_cli_selfcheck_prints_table_and_exit_code(capsys):
    assert cli.main(["selfcheck", "--backend", "process", "--case", "sys_exit"]) == 0
    out = capsys.readouterr().out
    assert "sys_exit" in out and "contained" in out and "yes" in out


def test_cli_selfcheck_fails_when_a_case_is_not_contained(monkeypatch, capsys):
    wrong = Case("expects_ok_but_errors", ("def transform(g):\n    raise ValueError\n",), "ok",
                 selfcheck._only("ok"))  # fmt: skip
    monkeypatch.setattr(selfcheck, "CASES", (wrong,))
    assert cli.main(["selfcheck", "--backend", "process"]) == 1
    captured = capsys.readouterr()
    assert "NO" in captured.out
    assert "expects_ok_but_errors" in captured.err
