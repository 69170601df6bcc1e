"""Run many (code, tests) pairs in a sandbox and get per-job and per-test results.

    results = await run_checks(sandbox, [CheckJob(code=..., tests=..., entry_point="add"), ...])
    results[0].passed, results[0].tests[0].outcome, results[0].tests[0].duration_s

Each test's result is a ``TestCaseResult`` (``debatecode.sandbox.results``), the
same per-test result ``solve``'s test reports hold.

Each ``CheckJob`` becomes one sandbox job running the two-process checker
(``_guest/checker.py``) in its light mode: tests are pytest-style ``test_*``
functions, or HumanEval's ``check(candidate)`` with ``entry_point`` set. The
tests and the comparisons run in the checker's process; the code under test
runs in another and answers calls with plain data, so it cannot forge its own
verdict (``debatecode.sandbox.verdict``). Jobs run through
``Sandbox.run_batch``, so Docker uses its warm pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from debatecode.sandbox.base import ExecJob, ExecResult, ExecStatus, Limits, Sandbox
from debatecode.sandbox.results import TestCaseResult, TestOutcome
from debatecode.sandbox.verdict import ParsedVerdict, ResultRecord, checker_job, parse_verdict

__all__ = [
    "CheckJob",
    "CheckResult",
    "TestCaseResult",
    "TestOutcome",
    "check_exec_job",
    "check_result",
    "run_checks",
]

TESTS_FILE = "test_solution.py"
OUTPUT_TAIL = 4000


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
    task_code: str = ""
    """Definitions the tests take from the task, not from ``code`` (a HumanEval prompt's helpers and imports).

    They run in the checker's process and win over the solution's names of the same name, so
    code that redefines a helper the tests call (``poly``, ``math``) cannot change what the tests
    compute with it. See ``debatecode.bench.humaneval.task_definitions``."""


class CheckResult(BaseModel):
    """One job's result: its status, every test's outcome, and its output tails."""

    model_config = ConfigDict(extra="forbid")

    name: str
    status: ExecStatus
    """The sandbox job's status (``ok`` only when every test passed)."""
    passed: bool
    """At least one test, and every test passed."""
    tests: list[TestCaseResult]
    """One per test, in collection order (every one in the ``visible`` suite)."""
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

    def count(self, outcome: TestOutcome) -> int:
        """How many tests ended with ``outcome``."""
        return sum(1 for test in self.tests if test.outcome == outcome)


def check_exec_job(job: CheckJob, limits: Limits) -> tuple[ExecJob, str]:
    """The sandbox job that checks ``job`` (its own ``limits`` win over ``limits``), and its verdict nonce."""
    job_limits = job.limits or limits
    return checker_job(
        mode="light",
        code=job.code,
        test_files={TESTS_FILE: job.tests},
        limits=job_limits,
        test_timeout_s=job.test_timeout_s or job_limits.timeout_s,
        entry_point=job.entry_point,
        task_code=job.task_code,
    )


def check_result(job: CheckJob, result: ExecResult, nonce: str) -> CheckResult:
    """Per-test outcomes from a finished check job; only the checker's verdict lines count.

    Tests the checker never reported get the job's fate. Nothing the job wrote can raise here.
    """
    verdict = parse_verdict(result.stdout, nonce)
    finished = {record.name: record for record in verdict.results}
    collected = verdict.collected or []
    running = _first_unfinished(collected, finished)
    tests = [
        finished[name].case() if name in finished else _unfinished(name, result, verdict, running == name)
        for name in collected
    ]
    if not collected:
        reason = verdict.load_error or verdict.problem or _fate(result, verdict)
        tests = [
            TestCaseResult(name="<load>", outcome="timeout" if result.status == "timeout" else "error", message=reason)
        ]
    passed = bool(collected) and verdict.done and all(test.outcome == "passed" for test in tests)
    status: ExecStatus = result.status
    if status == "ok" and not passed:
        status = "error"
    stderr = result.stderr[-OUTPUT_TAIL:]
    if verdict.notes:
        stderr = (stderr + "\n[debatecode] " + "; ".join(verdict.notes)).strip()
    return CheckResult(
        name=job.name,
        status=status,
        passed=passed and result.status == "ok",
        tests=tests,
        duration_s=result.duration_s,
        stdout="",
        stderr=stderr,
        stdout_truncated=result.stdout_truncated,
        stderr_truncated=result.stderr_truncated,
        backend=result.backend,
    )


def _first_unfinished(collected: list[str], finished: dict[str, ResultRecord]) -> str | None:
    return next((name for name in collected if name not in finished), None)


def _fate(result: ExecResult, verdict: ParsedVerdict) -> str:
    if result.status == "timeout":
        return "the job hit its wall-clock limit"
    if result.status == "oom":
        return "the job was killed for exceeding its memory limit"
    tail = result.stderr.strip()[-500:]
    problem = verdict.problem or "the checker reported nothing"
    return f"{problem} (exit code {result.exit_code}): {tail}"


def _unfinished(name: str, result: ExecResult, verdict: ParsedVerdict, was_running: bool) -> TestCaseResult:
    outcome: TestOutcome = "timeout" if result.status == "timeout" else "error"
    prefix = "while this test ran: " if was_running else "before this test ran: "
    return TestCaseResult(name=name, outcome=outcome, message=prefix + _fate(result, verdict))


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
    built = [check_exec_job(job, default) for job in jobs]
    results = await sandbox.run_batch([exec_job for exec_job, _ in built], concurrency=concurrency)
    return [check_result(job, result, nonce) for job, (_, nonce), result in zip(jobs, built, results, strict=True)]
