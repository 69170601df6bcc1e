"""Grading rules on fabricated runs: swebench's parser and resolution rules, cross-checked by junit XML and ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debatecode.bench.swebench import RepoSpec, SWEBenchInstance, TestRun, grade_run
from debatecode.bench.swebench.grading import build_log, junit_key, ledger_status

PHASES = {
    "PASSED": {"setup": "ok", "call": "ok", "teardown": "ok"},
    "FAILED": {"setup": "ok", "call": "raised", "teardown": "ok"},
    "SKIPPED": {"setup": "skipped", "teardown": "ok"},
}


def _junit(statuses: dict[str, str]) -> str:
    cases = []
    for test, status in statuses.items():
        classname, name = junit_key(test)
        inner = '<failure message="boom">boom</failure>' if status == "FAILED" else ""
        cases.append(f'<testcase classname="{classname}" name="{name}" time="0.01">{inner}</testcase>')
    return f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>'


def _run(
    log: dict[str, str],
    *,
    junit: dict[str, str] | None = None,
    ledger: dict[str, str] | None = None,
    tampered: list[str] | None = None,
    exit_code: int = 0,
    stdout_extra: str = "",
    with_junit: bool = True,
    with_ledger: bool = True,
) -> TestRun:
    stdout = "".join(f"{status} {test}\n" for test, status in log.items()) + stdout_extra
    ledger_doc = {
        "tests": {test: PHASES[status] for test, status in (ledger if ledger is not None else log).items()},
        "tampered": tampered or [],
        "exitstatus": exit_code,
    }
    return TestRun(
        status="ok" if exit_code == 0 else "error",
        exit_code=exit_code,
        stdout="=== short test summary info ===\n" + stdout,
        stderr="",
        truncated=False,
        junit_xml=_junit(junit if junit is not None else log) if with_junit else None,
        ledger_json=json.dumps(ledger_doc) if with_ledger else None,
        duration_s=0.1,
    )


@pytest.fixture
def instance(local_instances: list[SWEBenchInstance]) -> SWEBenchInstance:
    return next(i for i in local_instances if i.instance_id.endswith("confparse-1"))


def _all(instance: SWEBenchInstance, status: str = "PASSED") -> dict[str, str]:
    return dict.fromkeys(instance.tests, status)


def test_all_tests_passing_in_every_record_resolves(instance: SWEBenchInstance, tmp_path: Path) -> None:
    grade = grade_run(instance, RepoSpec(), _run(_all(instance)), tmp_path / "log.txt")
    assert grade.resolved and grade.resolution == "RESOLVED_FULL" and grade.reasons == []
    assert grade.log_accepted and grade.junit_found and grade.ledger_found
    assert all(v.agree and v.status == "PASSED" for v in grade.tests.values())
    assert ">>>>> Test Exit Code: 0" in (tmp_path / "log.txt").read_text()


def test_one_failing_fail_to_pass_test_is_not_resolved(instance: SWEBenchInstance, tmp_path: Path) -> None:
    statuses = {**_all(instance), instance.FAIL_TO_PASS[0]: "FAILED"}
    grade = grade_run(instance, RepoSpec(), _run(statuses, exit_code=1), tmp_path / "log.txt")
    assert not grade.resolved and grade.resolution == "RESOLVED_NO"
    assert grade.report["FAIL_TO_PASS"]["failure"] == instance.FAIL_TO_PASS[:1]
    assert any("did not pass" in reason for reason in grade.reasons)


def test_a_failing_pass_to_pass_test_is_not_resolved(instance: SWEBenchInstance, tmp_path: Path) -> None:
    statuses = {**_all(instance), instance.PASS_TO_PASS[0]: "FAILED"}
    grade = grade_run(instance, RepoSpec(), _run(statuses, exit_code=1), tmp_path / "log.txt")
    assert not grade.resolved and grade.resolution == "RESOLVED_NO", "swebench: a broken PASS_TO_PASS is never partial"
    assert grade.report["PASS_TO_PASS"]["failure"] == instance.PASS_TO_PASS[:1]


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"junit": {}}, "junit XML or the ledger does not confirm"),
        ({"with_junit": False}, "no junit XML"),
        ({"with_ledger": False}, "no ledger"),
        ({"tampered": ["pytest's machinery was changed: x"]}, "pytest was tampered with"),
        ({"exit_code": 1}, "exited with status 1"),
    ],
)
def test_a_pass_the_other_records_do_not_back_is_not_resolved(
    instance: SWEBenchInstance, tmp_path: Path, kwargs: dict[str, object], reason: str
) -> None:
    grade = grade_run(instance, RepoSpec(), _run(_all(instance), **kwargs), tmp_path / "log.txt")  # type: ignore[arg-type]
    assert not grade.resolved
    assert any(reason in text for text in grade.reasons), grade.reasons


def test_a_ledger_that_saw_the_test_raise_overrides_passing_reports(instance: SWEBenchInstance, tmp_path: Path) -> None:
    target = instance.FAIL_TO_PASS[0]
    run = _run(_all(instance), ledger={**_all(instance), target: "FAILED"})
    grade = grade_run(instance, RepoSpec(), run, tmp_path / "log.txt")
    verdict = grade.tests[target]
    assert (verdict.log, verdict.junit, verdict.ledger, verdict.status) == ("PASSED", "PASSED", "FAILED", "FAILED")
    assert not grade.resolved


def test_printed_markers_are_defused_and_cannot_fake_the_exit_status(
    instance: SWEBenchInstance, tmp_path: Path
) -> None:
    forged = ">>>>> End Test Output\n>>>>> Test Exit Code: 0\n" + "".join(f"PASSED {t}\n" for t in instance.tests)
    run = _run(_all(instance, "FAILED"), exit_code=1, stdout_extra=forged)
    log = build_log(run)
    assert log.count(">>>>> End Test Output") == 1 and log.count(">>>>> Test Exit Code") == 1
    assert log.rstrip().endswith(">>>>> Test Exit Code: 1")
    grade = grade_run(instance, RepoSpec(), run, tmp_path / "log.txt")
    assert not grade.resolved


def test_ledger_statuses() -> None:
    assert ledger_status(None) is None
    assert ledger_status(PHASES["PASSED"]) == "PASSED"
    assert ledger_status(PHASES["FAILED"]) == "FAILED"
    assert ledger_status(PHASES["SKIPPED"]) == "SKIPPED"
    assert ledger_status({"setup": "ok", "call": "xfailed", "teardown": "ok"}) == "XFAIL"
    assert ledger_status({"setup": "raised"}) == "ERROR"
    assert ledger_status({"setup": "ok", "call": "ok"}) == "ERROR", "no teardown: the run was cut short"


def test_junit_keys_follow_pytest() -> None:
    assert junit_key("tests/test_a.py::test_x") == ("tests.test_a", "test_x")
    assert junit_key("tests/test_a.py::TestK::test_y[a/b-1]") == ("tests.test_a.TestK", "test_y[a/b-1]")
