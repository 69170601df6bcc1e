"""Shared fixtures and the rules every test runs under.

- Network model requests are refused unless a test opts in with the
  ``allow_model_requests`` fixture (checked in the one place that sends them).
- ``requires_docker`` skips a test when no Docker engine or sandbox image is
  usable, and *fails* it instead when ``DEBATECODE_REQUIRE_DOCKER=1`` (CI).
- Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) a file's
  tests stay together on one worker, and the files that start a Ray instance
  share one group, so two local Ray clusters never run at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Before anything imports debatecode.llm: subprocesses inherit this too.
os.environ["DEBATECODE_ALLOW_MODEL_REQUESTS"] = "0"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# No start-up sweep of orphaned containers in the suite: under xdist another
# worker's sweep would remove the dead-owner containers the sweep tests make
# for themselves. The sweep tests call the sweep explicitly (SERIAL_GROUPS).
os.environ["DEBATECODE_SANDBOX__SWEEP_ON_START"] = "false"

REPO_ROOT = Path(__file__).resolve().parent


def docker_required() -> bool:
    return os.environ.get("DEBATECODE_REQUIRE_DOCKER") == "1"


def _docker_problem() -> str | None:
    """None when the Docker sandbox can run jobs here, else why not."""
    from debatecode.errors import SandboxUnavailable
    from debatecode.sandbox.docker import DockerSandbox

    try:
        DockerSandbox().check()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


@pytest.fixture(scope="session")
def docker_problem() -> str | None:
    return _docker_problem()


@pytest.fixture
def requires_docker(docker_problem: str | None) -> None:
    """Skip without a usable Docker sandbox; fail instead when Docker is required."""
    if docker_problem is None:
        return
    if docker_required():
        pytest.fail(f"Docker is required (DEBATECODE_REQUIRE_DOCKER=1) but unusable: {docker_problem}")
    pytest.skip(f"Docker sandbox unusable: {docker_problem}")


@pytest.fixture
def allow_model_requests() -> Iterator[None]:
    """Opt in to network model requests for one test."""
    from debatecode.llm import client

    previous = client.ALLOW_MODEL_REQUESTS
    client.ALLOW_MODEL_REQUESTS = True
    try:
        yield
    finally:
        client.ALLOW_MODEL_REQUESTS = previous


@pytest.fixture
def isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty directory so the default store and outputs land in tmp."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C (SIGINT) raises KeyboardInterrupt during the test, as in an interactive shell.

    A test suite started in the background by a shell without job control
    inherits SIGINT as *ignored*, and then neither ``_thread.interrupt_main``
    nor asyncio's Ctrl-C handling would do anything.
    """
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


SERIAL_GROUPS = {
    "ray": (
        "tests/bench/test_ray_executor.py",
        "tests/bench/test_swebench_ray.py",
        "tests/e2e/test_challenges.py",  # the ray_benchmark journey
    ),
    # Each removes every dead-owner container it finds, the other's included.
    "docker-sweep": (
        "tests/sandbox/test_sandbox_cli.py::test_cleanup_removes_a_dead_owners_container_and_keeps_a_live_ones",
        "tests/sandbox/test_sandbox_docker_pool.py::test_start_up_sweep_removes_a_dead_owners_container_and_keeps_a_live_ones",
    ),
}
"""Files (or single tests, by node id) that must never run at the same time as each other, by group name."""


def _xdist_group(nodeid: str, relpath: str) -> str:
    for group, members in SERIAL_GROUPS.items():
        if relpath in members or nodeid in members:
            return group
    return relpath


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every test its file's xdist group (or a shared one from ``SERIAL_GROUPS``), when xdist is loaded."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        relpath = Path(str(item.path)).resolve().relative_to(REPO_ROOT).as_posix()
        item.add_marker(pytest.mark.xdist_group(_xdist_group(item.nodeid, relpath)))
