"""Run a candidate against its task's checks in a sandbox and report per test.

The ground truth of a debate is this report: passing tests, not an agent's
say-so, decide which code wins.
"""

from __future__ import annotations

import logging

from debatecode.execution.generated import GeneratedSuite
from debatecode.execution.results import TestCaseResult, TestOutcome, TestReport
from debatecode.execution.testfiles import SOLUTION_FILE, build_test_files
from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox
from debatecode.sandbox.settings import SandboxSettings
from debatecode.sandbox.verdict import ParsedVerdict, checker_job, parse_verdict
from debatecode.task import Task

__all__ = ["CandidateTester", "job_limits"]

logger = logging.getLogger(__name__)

_OUTPUT_TAIL = 4000
_STARTUP_ALLOWANCE_S = 15.0
_MAX_JOB_S = 300.0


def job_limits(task: Task, settings: SandboxSettings) -> tuple[Limits, float]:
    """Limits of a test job and the per-test time limit.

    The job's limit allows every test its full per-test limit. Inside the job,
    the checker cuts the limit of every test after the first timeout to at most
    1 s, shared (``TimeLimits`` in ``sandbox/_guest/session.py``), so a
    candidate that loops forever ends within about twice the per-test limit.
    """
    per_test = task.time_limit_s or settings.timeout_s
    n_tests = max(1, len(task.test_names))
    limits = Limits.from_settings(
        settings,
        timeout_s=min(_MAX_JOB_S, per_test * n_tests + _STARTUP_ALLOWANCE_S),
        memory_mb=task.memory_limit_mb or settings.memory_mb,
    )
    return limits, per_test


class CandidateTester:
    """Runs candidates of one task in one sandbox."""

    __test__ = False

    def __init__(self, task: Task, sandbox: Sandbox, settings: SandboxSettings) -> None:
        self.task = task
        self.sandbox = sandbox
        self.limits, self.per_test_s = job_limits(task, settings)

    def job(self, code: str, extra: tuple[GeneratedSuite, ...] = ()) -> tuple[ExecJob, str]:
        """The checker job for ``code`` (pytest mode) and the nonce its verdict must carry."""
        limits = self.limits
        extra_count = sum(len(suite.names) for suite in extra)
        if extra_count:
            timeout = min(_MAX_JOB_S, limits.timeout_s + self.per_test_s * extra_count)
            limits = limits.model_copy(update={"timeout_s": timeout})
        files = build_test_files(self.task, code, extra)
        code_text = files.pop(SOLUTION_FILE)
        return checker_job(
            mode="pytest", code=code_text, test_files=files, limits=limits, test_timeout_s=self.per_test_s
        )

    async def run(self, code: str, extra: tuple[GeneratedSuite, ...] = ()) -> TestReport:
        """Run every check of the task (and the ``extra`` generated suites) against ``code``.

        Raises:
            SandboxError: the sandbox itself failed (the code's failures are in the report).
        """
        job, nonce = self.job(code, extra)
        result = await self.sandbox.run(job)
        return self.report(result, nonce, extra)

    def report(self, result: ExecResult, nonce: str, extra: tuple[GeneratedSuite, ...] = ()) -> TestReport:
        """Per-test outcomes from the checker's verdict; tests it never reported are ``error`` or ``timeout``.

        Only verdict lines bearing ``nonce`` count: the code's exit code, output and files prove nothing.
        """
        suites = {suite.filename: suite.suite for suite in extra}
        expected = [(name, "visible") for name in self.task.test_names]
        expected += [(name, suite.suite) for suite in extra for name in suite.names]
        verdict = parse_verdict(result.stdout, nonce)
        cases, collection_errors = _cases(verdict, suites)
        reported = {case.name.split("[")[0] for case in cases}
        output = result.stderr.strip()
        if verdict.notes:
            output += "\n[debatecode] " + "; ".join(verdict.notes)
        missing_outcome: TestOutcome = "timeout" if result.status == "timeout" else "error"
        if result.status == "timeout":
            reason = "the test run hit its wall-clock limit before this test finished"
        elif result.status == "oom":
            reason = "the test run was killed for exceeding its memory limit"
        elif collection_errors:
            reason = collection_errors[0]
        elif verdict.load_error:
            reason = verdict.load_error
        else:
            problem = verdict.problem or "the checker did not report it"
            reason = f"the test did not run ({problem}); see the run output: {output[-500:]}"
        for name, suite_name in expected:
            if name not in reported:
                cases.append(TestCaseResult(name=name, outcome=missing_outcome, message=reason, suite=suite_name))
        order = {name: index for index, (name, _) in enumerate(expected)}
        cases.sort(key=lambda case: order.get(case.name.split("[")[0], len(order)))
        status = result.status
        if status == "ok" and not (verdict.done and cases and all(case.outcome == "passed" for case in cases)):
            status = "error"
        return TestReport(
            cases=cases,
            backend=result.backend,
            duration_s=result.duration_s,
            exit_code=0 if status == "ok" else (result.exit_code if result.exit_code else 1),
            status=status,
            output=output[-_OUTPUT_TAIL:],
            truncated=result.truncated,
        )

    def no_code_report(self, reason: str) -> TestReport:
        """A report for a candidate that has no code to run."""
        return TestReport(
            cases=[TestCaseResult(name=name, outcome="error", message=reason) for name in self.task.test_names],
            status="skipped",
            output=reason,
        )


def _cases(verdict: ParsedVerdict, suites: dict[str, str]) -> tuple[list[TestCaseResult], list[str]]:
    cases: list[TestCaseResult] = []
    collection_errors: list[str] = []
    for record in verdict.results:
        if record.name == "<collection>":
            collection_errors.append(record.message)
            continue
        cases.append(record.case(suites.get(record.file, "visible")))
    return cases, collection_errors
