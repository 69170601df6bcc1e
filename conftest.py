"""Shared fixtures and the rules every test runs under.

- Network model requests are refused unless a test opts in with the
  ``allow_model_requests`` fixture (checked in the one place that sends them).
- ``requires_docker`` skips a test when no Docker engine or sandbox image is
  usable, and *fails* it instead when ``DEBATECODE_REQUIRE_DOCKER=1`` (CI).
- Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) a file's
  tests stay together on one worker, and the files that start a Ray instance
  share one group, so two local Ray clusters never run at once.
- Every test gets the markers of what it needs (``docker``, ``local_model``,
  ``browser``, ``slow``), from its fixtures, its parameters and its path
  (``MARKER_RULES``), so that ``make test-fast`` (``-m "not docker and not
  local_model and not browser and not slow"``) runs the unit tests with fakes
  only, and a new test is sorted the same way without anyone marking it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


FIXTURE_MARKERS: dict[str, str] = {
    "requires_docker": "docker",
    "docker_problem": "docker",
    "requires_browser": "browser",
    # sentence-transformers' MiniLM: torch and a model load, seconds per process.
    "minilm": "local_model",
    # The embedded llama.cpp model, loaded afresh for the test.
    "fresh_models": "local_model",
    # A whole `debatecode solve` through the console script, shared by the CLI tests.
    "solved_add": "slow",
}
"""A test that uses one of these fixtures (directly or through another fixture) gets the marker."""

PATH_MARKERS: dict[str, str] = {
    "tests-stress/": "slow",
    "tests/e2e/": "slow",
    # A module-scoped local Ray cluster (seconds to start) and a whole scripted bench run behind every test.
    "tests/bench/test_ray_executor.py": "slow",
    "tests/bench/test_swebench_ray.py": "slow",
    "tests/bench/test_inspect_export.py": "slow",
}
"""A test under one of these paths gets the marker: whole runs, many processes, minutes."""

PARAM_MARKERS: dict[str, str] = {
    "docker": "docker",
    "docker-fresh": "docker",
    "sentence-transformers": "local_model",
}
"""A test parametrized with one of these values (a sandbox backend, an embedder name) gets the marker."""

SLOW_TESTS_FILE = REPO_ROOT / "tests" / "slow-tests.txt"
"""Node ids of tests measured too slow for ``make test-fast`` that nothing above marks; they get ``slow``."""

FAST_TIER_LIMIT_S = 4.0
"""A test the fast tier runs that takes longer is named at the end of the run, to be listed in SLOW_TESTS_FILE."""


def _slow_tests() -> frozenset[str]:
    lines = SLOW_TESTS_FILE.read_text(encoding="utf-8").splitlines() if SLOW_TESTS_FILE.exists() else []
    return frozenset(line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip())


MODULE_NAME_MARKERS: dict[str, str] = {
    # ``tests.cli.helpers.run_cli``: the console script in a subprocess, a few seconds per call (imports, litellm).
    "run_cli": "slow",
}
"""A test in a module that imports one of these names gets the marker."""


def _auto_markers(item: pytest.Item, relpath: str, slow_tests: frozenset[str]) -> set[str]:
    """The markers ``item`` needs: from its fixtures, parameters, path, module's imports, and the slow list."""
    found = {marker for fixture, marker in FIXTURE_MARKERS.items() if fixture in getattr(item, "fixturenames", ())}
    found |= {marker for prefix, marker in PATH_MARKERS.items() if relpath.startswith(prefix)}
    module = getattr(item, "module", None)
    found |= {marker for name, marker in MODULE_NAME_MARKERS.items() if module is not None and hasattr(module, name)}
    callspec = getattr(item, "callspec", None)
    values = {str(value) for value in callspec.params.values()} if callspec is not None else set()
    found |= {marker for value, marker in PARAM_MARKERS.items() if value in values}
    if item.nodeid in slow_tests:
        found.add("slow")
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with what it needs (``_auto_markers``); under xdist, give it its file's group.

    The group is the file's own, or a shared one from ``SERIAL_GROUPS``.
    """
    grouped = config.pluginmanager.hasplugin("xdist")
    slow_tests = _slow_tests()
    for item in items:
        relpath = Path(str(item.path)).resolve().relative_to(REPO_ROOT).as_posix()
        present = {mark.name for mark in item.iter_markers()}
        for marker in sorted(_auto_markers(item, relpath, slow_tests) - present):
            item.add_marker(marker)
        if grouped:
            item.add_marker(pytest.mark.xdist_group(_xdist_group(item.nodeid, relpath)))


_FAST_TIER_OVERRUNS: list[tuple[str, float]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """In a run that leaves ``slow`` out, note each test slower than ``FAST_TIER_LIMIT_S`` (setup and call)."""
    if report.when in ("setup", "call") and report.duration > FAST_TIER_LIMIT_S:
        _FAST_TIER_OVERRUNS.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``make test-fast`` names its tests over ``FAST_TIER_LIMIT_S``: list them in ``tests/slow-tests.txt``."""
    if "not slow" not in (config.option.markexpr or "") or not _FAST_TIER_OVERRUNS:
        return
    terminalreporter.section("slower than the fast tier allows")
    terminalreporter.write_line(
        f"{len(_FAST_TIER_OVERRUNS)} test(s) over {FAST_TIER_LIMIT_S:g} s; mark them slow or list them in "
        f"{SLOW_TESTS_FILE.relative_to(REPO_ROOT)} (with the machine quiet, a test over the limit is a slow one):"
    )
    for nodeid, seconds in sorted(_FAST_TIER_OVERRUNS, key=lambda entry: -entry[1]):
        terminalreporter.write_line(f"  {seconds:6.1f} s  {nodeid}")
