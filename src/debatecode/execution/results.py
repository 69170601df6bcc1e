"""Test results: the report of one sandbox run of a candidate, made of per-test results.

A ``TestReport`` is what ``execution.tester.CandidateTester`` returns; turns store it
as JSON (``TurnRecord.test_results``). Each case is a ``TestCaseResult``, the
per-test result of every test run, defined with ``TestOutcome`` in
``debatecode.sandbox.results`` and re-exported here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from debatecode.sandbox.results import TestCaseResult, TestOutcome

__all__ = ["TestCaseResult", "TestOutcome", "TestReport"]


class TestReport(BaseModel):
    """All test outcomes of one candidate, from one sandbox run."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False

    cases: list[TestCaseResult] = Field(default_factory=list)
    backend: str = ""
    duration_s: float = 0.0
    exit_code: int | None = None
    status: str = ""
    """The sandbox job status: ok, error, timeout or oom."""
    output: str = ""
    """The tail of the run's stdout and stderr, for prompts and reports."""
    truncated: bool = False

    @property
    def passed(self) -> int:
        return sum(1 for case in self.cases if case.outcome == "passed")

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def failures(self, suite: str | None = None) -> list[TestCaseResult]:
        return [case for case in self.cases if case.outcome != "passed" and (suite is None or case.suite == suite)]

    def passed_in(self, suite: str) -> int:
        return sum(1 for case in self.cases if case.suite == suite and case.outcome == "passed")

    def total_in(self, suite: str) -> int:
        return sum(1 for case in self.cases if case.suite == suite)

    def passed_names(self) -> set[str]:
        return {case.name for case in self.cases if case.outcome == "passed"}

    def visible(self) -> TestReport:
        """The same report restricted to the task's own checks."""
        return self.model_copy(update={"cases": [c for c in self.cases if c.suite == "visible"]})
