"""One result vocabulary: ``run_checks``, ``solve``'s test reports and stored turns share one per-test result."""

from __future__ import annotations

from typing import get_args

from tests.support.dummy_sandbox import DummySandbox

from debatecode.execution import results as execution_results
from debatecode.execution.results import TestReport
from debatecode.sandbox import results
from debatecode.sandbox.checks import CheckJob, run_checks
from debatecode.sandbox.verdict import ResultRecord

# A ``TurnRecord.test_results`` as sessions stored it before the two result types became one.
STORED_REPORT = {
    "cases": [
        {"name": "test_example_1", "outcome": "passed", "message": "", "duration_s": 0.01, "suite": "visible"},
        {"name": "test_x_1", "outcome": "failed", "message": "assert 1 == 2", "duration_s": 0.0, "suite": "exchanged"},
        {"name": "test_red_1_1", "outcome": "timeout", "message": "", "duration_s": 2.0, "suite": "red"},
        {"name": "test_task", "outcome": "error", "message": "NameError", "duration_s": 0.0, "suite": "visible"},
    ],
    "backend": "docker",
    "duration_s": 1.5,
    "exit_code": 1,
    "status": "error",
    "output": "tail",
    "truncated": False,
}


def test_execution_reexports_the_sandbox_vocabulary() -> None:
    assert execution_results.TestCaseResult is results.TestCaseResult
    assert execution_results.TestOutcome is results.TestOutcome
    assert get_args(results.TestOutcome) == ("passed", "failed", "error", "timeout")
    assert ResultRecord.model_fields["outcome"].annotation is results.TestOutcome


def test_a_stored_report_still_validates_and_dumps_the_same() -> None:
    report = TestReport.model_validate(STORED_REPORT)
    assert (report.passed, report.total, report.passed_in("visible"), report.total_in("red")) == (1, 4, 1, 1)
    assert report.model_dump(mode="json") == STORED_REPORT


async def test_run_checks_reports_the_same_per_test_result() -> None:
    job = CheckJob(
        code="def f():\n    return 1\n", tests="def test_f():\n    from solution import f\n    assert f() == 1\n"
    )
    (result,) = await run_checks(DummySandbox(), [job])
    [case] = result.tests
    assert isinstance(case, results.TestCaseResult)
    assert (case.name, case.outcome, case.suite) == ("test_f", "passed", "visible")


def test_a_verdict_record_becomes_a_case_in_its_suite() -> None:
    record = ResultRecord(name="test_a", outcome="failed", duration_s=0.5, message="boom", file="test_red.py")
    assert record.case("red") == results.TestCaseResult(
        name="test_a", outcome="failed", message="boom", duration_s=0.5, suite="red"
    )


def test_object_addresses_in_failure_messages_are_masked_so_reruns_read_the_same() -> None:
    from debatecode.sandbox.verdict import ProbeRecord, ResultRecord

    first = "E  where False = all(<generator object f.<locals>.<genexpr> at 0x7f5dbd53ab60>)"
    second = first.replace("7f5dbd53ab60", "7f7146fdab60")
    masked = [
        ResultRecord.model_validate({"name": "t", "outcome": "failed", "message": m}).message for m in (first, second)
    ]
    assert masked[0] == masked[1] == "E  where False = all(<generator object f.<locals>.<genexpr> at 0x…>)"
    probe = ProbeRecord.model_validate({"call": "f()", "outcome": "value", "expected": "<object object at 0xdeadbeef>"})
    assert probe.expected == "<object object at 0x…>"
    plain = ResultRecord.model_validate({"name": "t", "outcome": "failed", "message": "assert 0x10 == 17"})
    assert plain.message == "assert 0x10 == 17", "hex literals that are not addresses stay"
