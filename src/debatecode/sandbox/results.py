"""The result vocabulary of every test run: one outcome literal, one per-test result.

The two-process checker (``debatecode.sandbox.verdict``) reports each test's
``TestOutcome``; every caller of the checker turns its verdict into one
``TestCaseResult`` per test: ``run_checks`` (``CheckResult.tests``) and
``solve``'s tester (``debatecode.execution.results.TestReport.cases``,
stored with each turn, read by the hooks). ``debatecode.execution.results`` re-exports
both names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["TestCaseResult", "TestOutcome"]

TestOutcome = Literal["passed", "failed", "error", "timeout"]
"""How one test ended. ``error``: it could not run to a verdict (a crash, a collection error, a killed job)."""


class TestCaseResult(BaseModel):
    """The outcome of one test case (a doctest example, a pytest test, a HumanEval ``check``)."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    name: str
    outcome: TestOutcome
    message: str = ""
    """Why it did not pass (an assertion, a traceback's tail, the job's fate); empty when it passed."""
    duration_s: float = 0.0
    suite: str = "visible"
    """``visible`` (the task's examples and tests, and every test of a ``run_checks`` job), ``exchanged``
    (written by agents in critique) or ``red`` (adversarial)."""
