"""Shared fixtures (a warm process sandbox, a check that nothing is left behind) and tiers.

Every test under ``tests/`` gets these fixtures. The tier markers (``sandbox``, ``docker``,
``gvisor``, ``ray``, ``nonroot``, ``slow``) are added at collection by
``tests/support/tiers.py``; ``tests/README.md`` says how to run each tier.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcjudge.sandbox.process import ProcessSandbox
from arcjudge.sandbox.selfcheck import leftover_processes
from tests.support import tiers

DATA = Path(
    os.environ.get("ARCJUDGE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


@pytest.fixture(scope="session")
def sandbox():
    sb = ProcessSandbox(workers=2)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def docker_image() -> str:
    """The runtime image; skips (or fails, with ARCJUDGE_REQUIRE_DOCKER=1) without docker."""
    from arcjudge.sandbox.docker_daemon import (
        DockerUnavailable,
        check_image,
        docker_client,
        expected_image,
    )

    try:
        image = expected_image()
        check_image(docker_client(), image)
    except DockerUnavailable as exc:
        if os.environ.get("ARCJUDGE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"docker is required here (ARCJUDGE_REQUIRE_DOCKER=1): {exc}")
        pytest.skip(f"docker unavailable: {exc}")
    return image


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (DATA / "arc-agi-1").is_dir():
        pytest.skip(f"shared data not found at {DATA} (set ARCJUDGE_DATA)")
    return DATA


@pytest.fixture(scope="session", autouse=True)
def no_leftover_processes():
    yield
    strays = leftover_processes(set())
    assert not strays, f"sandbox processes left after the tests: {[p.pid for p in strays]}"


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("ARCJUDGE_AUDIT_TIERS") == "1":
        tiers.start_audit(config)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by the markers added here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tiers.mark(items)
