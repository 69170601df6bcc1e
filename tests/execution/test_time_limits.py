"""Once a test of a candidate times out, the rest of its tests run under a short, shared limit.

The rule lives in the checker (``TimeLimits`` in ``sandbox/_guest/session.py``;
docs/sandbox.md, "One timeout shortens the rest"). An endless loop in the entry
point used to cost the per-test limit once per test.
"""

from __future__ import annotations

import textwrap
import time

import pytest
from tests.support.dummy_sandbox import DummySandbox

from debatecode.config import SandboxSettings
from debatecode.execution.tester import CandidateTester
from debatecode.sandbox._guest.session import SHORT_LIMIT_S, TimeLimits
from debatecode.sandbox.base import Limits
from debatecode.sandbox.checks import CheckJob, run_checks
from debatecode.sandbox.docker import DockerSandbox
from debatecode.task import parse_task

PER_TEST_S = 2.0
STARTUP_ALLOWANCE_S = 3.0
"""pytest's start, collection and a fresh candidate interpreter after each timeout."""


def spinning_task(n_tests: int, per_test_s: float) -> str:
    tests = "\n\n".join(f"def test_{i}():\n    assert spin({i}) == {i}\n" for i in range(n_tests))
    return (
        f"---\ntitle: Spin\nentry_point: spin\ntime_limit: {per_test_s}s\n---\nReturn x.\n\n"
        f"## Tests\n```python\n{tests}```\n"
    )


def test_the_limit_is_full_until_a_timeout_then_short_and_shared() -> None:
    limits = TimeLimits(2.0)
    limits.spent("test_fast", "failed", 1.9)
    assert limits.next_limit() == 2.0
    limits.spent("test_loop", "timeout", 2.0)
    assert limits.next_limit() == SHORT_LIMIT_S
    limits.spent("test_quick", "passed", 0.9)  # passing costs nothing from the shared limit
    limits.spent("test_again", "timeout", 1.0)
    assert limits.next_limit() == pytest.approx(1.0)
    limits.spent("test_once_more", "timeout", 0.99)
    assert limits.next_limit() == 0.0
    assert "test_loop timed out" in limits.not_run_message()
    assert "cut from 2s because test_loop timed out" in limits.timeout_message(0.5)


async def test_after_a_timeout_quick_tests_pass_loops_are_cut_and_the_rest_do_not_run() -> None:
    code = "def f(x):\n    while x < 0:\n        pass\n    return x\n"
    tests = """
        def test_a_loops():
            f(-1)
        def test_b_quick():
            assert f(2) == 2
        def test_c_loops():
            f(-2)
        def test_d_loops():
            f(-3)
        def test_e_quick():
            assert f(3) == 3
    """
    job = CheckJob(code=code, tests=textwrap.dedent(tests), test_timeout_s=1.5)
    (result,) = await run_checks(DummySandbox(), [job], limits=Limits(timeout_s=30))
    outcomes = {test.name: (test.outcome, test.message) for test in result.tests}
    assert outcomes["test_a_loops"] == ("timeout", "the test ran longer than its limit of 1.5s")
    assert outcomes["test_b_quick"][0] == "passed"
    assert outcomes["test_c_loops"] == (
        "timeout",
        "the test ran longer than its limit of 1s (cut from 1.5s because test_a_loops timed out earlier)",
    )
    assert outcomes["test_d_loops"][0] == "timeout"  # cut to what is left of the shared 1.5s, or not run
    assert outcomes["test_e_quick"][0] == "timeout" and outcomes["test_e_quick"][1].startswith("not run: ")
    assert result.duration_s < 2 * 1.5 + STARTUP_ALLOWANCE_S


@pytest.mark.docker
async def test_an_endless_entry_point_costs_at_most_twice_the_limit_in_docker(requires_docker: None) -> None:
    n_tests = 6
    async with DockerSandbox(SandboxSettings(pool_size=1, sweep_on_start=False)) as sandbox:
        await sandbox.warm(1)
        runner = CandidateTester(parse_task(spinning_task(n_tests, PER_TEST_S)), sandbox, SandboxSettings())
        started = time.perf_counter()
        report = await runner.run("def spin(x):\n    while True:\n        pass\n")
        wall_s = time.perf_counter() - started

    assert report.backend == "docker"
    assert [case.outcome for case in report.cases] == ["timeout"] * n_tests, report.cases
    assert all("limit of" in case.message or case.message.startswith("not run") for case in report.cases)
    assert wall_s < 2 * PER_TEST_S + STARTUP_ALLOWANCE_S, (wall_s, [case.message for case in report.cases])
