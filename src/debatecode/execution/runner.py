"""Run a candidate against its task's checks in a sandbox and report per test.

The ground truth of a debate is this report: passing tests, not an agent's
say-so, decide which code wins.
"""

from __future__ import annotations

import json
import logging

from debatecode.config import SandboxSettings
from debatecode.execution.generated import GeneratedSuite
from debatecode.execution.testfiles import RESULTS_FILE, build_test_files
from debatecode.protocol.state import TestCaseResult, TestReport
from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox
from debatecode.task import Task

__all__ = ["TestRunner", "job_limits"]

logger = logging.getLogger(__name__)

_OUTPUT_TAIL = 4000
_STARTUP_ALLOWANCE_S = 15.0
_MAX_JOB_S = 300.0


def job_limits(task: Task, settings: SandboxSettings) -> tuple[Limits, float]:
    """Limits of a test job and the per-test time limit."""
    per_test = task.time_limit_s or settings.timeout_s
    n_tests = max(1, len(task.test_names))
    limits = Limits(
        timeout_s=min(_MAX_JOB_S, per_test * n_tests + _STARTUP_ALLOWANCE_S),
        memory_mb=task.memory_limit_mb or settings.memory_mb,
        pids=settings.pids,
        cpus=settings.cpus,
        output_bytes=settings.output_bytes,
        disk_mb=settings.disk_mb,
    )
    return limits, per_test


class TestRunner:
    """Runs candidates of one task in one sandbox."""

    __test__ = False

    def __init__(self, task: Task, sandbox: Sandbox, settings: SandboxSettings) -> None:
        self.task = task
        self.sandbox = sandbox
        self.limits, self.per_test_s = job_limits(task, settings)

    def job(self, code: str, extra: tuple[GeneratedSuite, ...] = ()) -> ExecJob:
        limits = self.limits
        extra_count = sum(len(suite.names) for suite in extra)
        if extra_count:
            timeout = min(_MAX_JOB_S, limits.timeout_s + self.per_test_s * extra_count)
            limits = limits.model_copy(update={"timeout_s": timeout})
        return ExecJob(
            files=build_test_files(self.task, code, extra),
            argv=[
                "python3",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--tb=short",
                "-o",
                "console_output_style=classic",
            ],
            limits=limits,
            collect=[RESULTS_FILE],
            env={"DC_TEST_TIMEOUT": f"{self.per_test_s:g}", "PYTHONDONTWRITEBYTECODE": "1"},
        )

    async def run(self, code: str, extra: tuple[GeneratedSuite, ...] = ()) -> TestReport:
        """Run every check of the task (and the ``extra`` generated suites) against ``code``.

        Raises:
            SandboxError: the sandbox itself failed (the code's failures are in the report).
        """
        result = await self.sandbox.run(self.job(code, extra))
        return self.report(result, extra)

    def report(self, result: ExecResult, extra: tuple[GeneratedSuite, ...] = ()) -> TestReport:
        """Per-test outcomes from a finished job; tests that never reported are ``error`` or ``timeout``."""
        suites = {suite.filename: suite.suite for suite in extra}
        expected = [(name, "visible") for name in self.task.test_names]
        expected += [(name, suite.suite) for suite in extra for name in suite.names]
        cases, collection_errors = _parse_results(result.files.get(RESULTS_FILE, ""), suites)
        reported = {case.name.split("[")[0] for case in cases}
        output = (result.stdout + ("\n" + result.stderr if result.stderr else "")).strip()
        if result.status == "timeout":
            missing_outcome, reason = "timeout", "the test run hit its wall-clock limit before this test finished"
        elif result.status == "oom":
            missing_outcome, reason = "error", "the test run was killed for exceeding its memory limit"
        elif collection_errors:
            missing_outcome, reason = "error", collection_errors[0]
        else:
            missing_outcome, reason = "error", "the test did not run; see the run output: " + output[-500:]
        for name, suite_name in expected:
            if name not in reported:
                cases.append(TestCaseResult(name=name, outcome=missing_outcome, message=reason, suite=suite_name))  # type: ignore[arg-type]
        order = {name: index for index, (name, _) in enumerate(expected)}
        cases.sort(key=lambda case: order.get(case.name.split("[")[0], len(order)))
        return TestReport(
            cases=cases,
            backend=result.backend,
            duration_s=result.duration_s,
            exit_code=result.exit_code,
            status=result.status,
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


def _parse_results(text: str, suites: dict[str, str]) -> tuple[list[TestCaseResult], list[str]]:
    cases: list[TestCaseResult] = []
    collection_errors: list[str] = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            logger.debug("ignoring malformed result line %r", line[:200])
            continue
        if not isinstance(record, dict):
            continue
        if record.get("name") == "<collection>":
            collection_errors.append(str(record.get("message", "")))
            continue
        outcome = record.get("outcome")
        if outcome not in ("passed", "failed", "error", "timeout"):
            continue
        cases.append(
            TestCaseResult(
                name=str(record.get("name", "?")),
                outcome=outcome,
                message=str(record.get("message", "")),
                duration_s=float(record.get("duration_s", 0.0) or 0.0),
                suite=suites.get(str(record.get("nodeid", "")).split("::")[0], "visible"),
            )
        )
    return cases, collection_errors
