"""Run many (code, tests) pairs in a sandbox and get per-job and per-test results.

    results = await run_checks(sandbox, [CheckJob(code=..., tests=..., entry_point="add"), ...])
    results[0].passed, results[0].tests[0].outcome, results[0].tests[0].duration_s

Each ``CheckJob`` becomes one sandbox job running the stdlib check harness
(``check_harness.py``) instead of pytest: tests are pytest-style ``test_*``
functions, or HumanEval's ``check(candidate)`` with ``entry_point`` set. Jobs
run through ``Sandbox.run_batch``, so Docker uses its warm pool.

The harness runs in the same process as the code. The sandbox protects the
host and other jobs from the code; it cannot stop hostile code from faking its
own test results (as with pytest or HumanEval's harness).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from debatecode.sandbox.base import ExecJob, ExecResult, ExecStatus, Limits, Sandbox

__all__ = ["CheckJob", "CheckResult", "TestOutcome", "check_exec_job", "check_result", "run_checks"]

TestOutcomeKind = Literal["passed", "failed", "error", "timeout"]
CODE_FILE = "solution.py"
TESTS_FILE = "test_solution.py"
HARNESS_FILE = "_dc_check.py"
RESULTS_FILE = ".dc_results.jsonl"
OUTPUT_TAIL = 4000


@functools.cache
def harness_source() -> str:
    """The check harness's source text, written into each job."""
    return resources.files("debatecode.sandbox").joinpath("check_harness.py").read_text(encoding="utf-8")


class CheckJob(BaseModel):
    """Code and the tests to check it with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    """Written as ``solution.py``."""
    tests: str
    """Written as ``test_solution.py``: ``test_*`` functions, or HumanEval's ``check``."""
    entry_point: str | None = None
    """With a ``check`` function in the tests, one test ``check`` calls ``check(<entry_point>)``."""
    name: str = ""
    """Your label for the job, copied into its result."""
    limits: Limits | None = None
    """This job's limits; ``run_checks``'s ``limits`` when None."""
    test_timeout_s: float | None = Field(default=None, gt=0)
    """Per-test time limit; the job's whole ``timeout_s`` when None."""


class TestOutcome(BaseModel):
    """One test's result."""

    __test__ = False
    model_config = ConfigDict(extra="forbid")

    name: str
    outcome: TestOutcomeKind
    duration_s: float = 0.0
    message: str = ""


class CheckResult(BaseModel):
    """One job's result: its status, every test's outcome, and its output tails."""

    model_config = ConfigDict(extra="forbid")

    name: str
    status: ExecStatus
    """The sandbox job's status (``ok`` only when every test passed)."""
    passed: bool
    """At least one test, and every test passed."""
    tests: list[TestOutcome]
    duration_s: float
    stdout: str = ""
    """The last few KiB of the job's stdout."""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    backend: str = ""

    @property
    def truncated(self) -> bool:
        return self.stdout_truncated or self.stderr_truncated

    def count(self, outcome: TestOutcomeKind) -> int:
        """How many tests ended with ``outcome``."""
        return sum(1 for test in self.tests if test.outcome == outcome)


def check_exec_job(job: CheckJob, limits: Limits) -> ExecJob:
    """The sandbox job that checks ``job`` (its own ``limits`` win over ``limits``)."""
    job_limits = job.limits or limits
    test_timeout = f"{job.test_timeout_s or job_limits.timeout_s:g}"
    argv = ["python3", HARNESS_FILE, CODE_FILE, TESTS_FILE, RESULTS_FILE, test_timeout]
    return ExecJob(
        files={CODE_FILE: job.code, TESTS_FILE: job.tests, HARNESS_FILE: harness_source()},
        argv=[*argv, job.entry_point] if job.entry_point else argv,
        limits=job_limits,
        collect=[RESULTS_FILE],
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )


def check_result(job: CheckJob, result: ExecResult) -> CheckResult:
    """Per-test outcomes from a finished check job; tests that never finished get the job's fate."""
    collected: list[str] = []
    finished: dict[str, TestOutcome] = {}
    running: str | None = None
    load_error = ""
    for line in result.files.get(RESULTS_FILE, "").splitlines():
        try:
            record = ast.literal_eval(line)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        event = record.get("event")
        if event == "collected":
            collected = [str(name) for name in record.get("tests", [])]
        elif event == "load_error":
            load_error = str(record.get("message", ""))
        elif event == "start":
            running = str(record.get("name", ""))
        elif record.get("outcome") in ("passed", "failed", "error", "timeout"):
            outcome = TestOutcome(
                name=str(record.get("name", "?")),
                outcome=record["outcome"],
                duration_s=float(record.get("duration_s") or 0.0),
                message=str(record.get("message", ""))[:OUTPUT_TAIL],
            )
            finished[outcome.name] = outcome
            running = None
    tests = [finished.get(name) or _unfinished(name, result, running == name) for name in collected]
    if not collected:
        reason = load_error or _fate(result)
        tests = [
            TestOutcome(name="<load>", outcome="timeout" if result.status == "timeout" else "error", message=reason)
        ]
    passed = bool(collected) and all(test.outcome == "passed" for test in tests)
    status: ExecStatus = result.status
    if status == "ok" and not passed:
        status = "error"
    return CheckResult(
        name=job.name,
        status=status,
        passed=passed and result.status == "ok",
        tests=tests,
        duration_s=result.duration_s,
        stdout=result.stdout[-OUTPUT_TAIL:],
        stderr=result.stderr[-OUTPUT_TAIL:],
        stdout_truncated=result.stdout_truncated,
        stderr_truncated=result.stderr_truncated,
        backend=result.backend,
    )


def _fate(result: ExecResult) -> str:
    if result.status == "timeout":
        return "the job hit its wall-clock limit"
    if result.status == "oom":
        return "the job was killed for exceeding its memory limit"
    tail = (result.stderr or result.stdout).strip()[-500:]
    return f"the job ended (exit code {result.exit_code}) before reporting: {tail}"


def _unfinished(name: str, result: ExecResult, was_running: bool) -> TestOutcome:
    outcome: TestOutcomeKind = "timeout" if result.status == "timeout" else "error"
    prefix = "while this test ran: " if was_running else "before this test ran: "
    return TestOutcome(name=name, outcome=outcome, message=prefix + _fate(result))


async def run_checks(
    sandbox: Sandbox,
    jobs: Sequence[CheckJob],
    *,
    limits: Limits | None = None,
    concurrency: int | None = None,
) -> list[CheckResult]:
    """Check every job in ``sandbox`` (concurrently, through ``run_batch``); results in job order.

    Raises:
        SandboxUnavailable, SandboxError: the sandbox itself failed (failing code is a result).
    """
    default = limits or Limits()
    exec_jobs = [check_exec_job(job, default) for job in jobs]
    results = await sandbox.run_batch(exec_jobs, concurrency=concurrency)
    return [check_result(job, result) for job, result in zip(jobs, results, strict=True)]
