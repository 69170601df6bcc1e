"""Grading a test run: three independent records must agree, then swebench's resolution rules decide.

Per test, three sources:

- the **log**: pytest's terminal output (with ``-rA``), wrapped in SWE-bench's
  markers with the exit status the sandbox runner saw, read by swebench's own
  ``get_logs_eval`` with the repository's registered parser. Before wrapping,
  every ``>>>>>`` in the captured output is defused, so printed markers cannot
  end the parsed region early or fake an exit status;
- pytest's **junit XML**, written outside the repository tree to a path the tests
  are not told (see ``_grader_plugin.py``);
- the grader plugin's **ledger**: whether each test's setup, call and teardown
  raised, seen around the test function itself rather than from pytest's reports,
  plus any tampering with pytest's machinery found at the end of the session.

A test's status is the one the log and the junit XML both give, and a pass must be
confirmed by the ledger (``PASSED``: nothing raised; ``XFAIL``: the call raised);
otherwise the test counts as ``FAILED``. swebench's ``get_eval_tests_report`` and
``get_resolution_status`` then grade FAIL_TO_PASS and PASS_TO_PASS.
``resolved`` needs ``RESOLVED_FULL``, a log swebench accepts, a junit XML, a
ledger that found no tampering, and exit status 0 (only the FAIL_TO_PASS and PASS_TO_PASS tests run, so a run that
resolves the instance exits 0).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.execution import TestRun
from debatecode.bench.swebench.repos import RepoSpec

__all__ = [
    "Grade",
    "Ledger",
    "TestVerdict",
    "build_log",
    "combine",
    "grade_run",
    "junit_key",
    "ledger_status",
    "parse_junit",
    "parse_ledger",
]

PASSING = ("PASSED", "XFAIL")
_DEFUSED = ">>>> >"


class TestVerdict(BaseModel):
    """One test: what each source said, and the status graded."""

    __test__ = False

    status: str
    """The graded status: the agreed one, else ``FAILED``."""
    log: str | None = None
    junit: str | None = None
    ledger: str | None = None
    """The status the grader's ledger implies (``PASSED``, ``FAILED``, ``ERROR``, ``SKIPPED``, ``XFAIL``)."""
    agree: bool = False
    duration_s: float | None = None


class Grade(BaseModel):
    """The outcome of grading one run."""

    resolved: bool
    resolution: str
    """swebench's ``RESOLVED_FULL`` / ``RESOLVED_PARTIAL`` / ``RESOLVED_NO``."""
    log_accepted: bool
    """swebench's ``get_logs_eval`` found test results and no failure marker in the log."""
    junit_found: bool
    ledger_found: bool = False
    tampering: list[str] = Field(default_factory=list)
    """What the grader plugin found changed in pytest's machinery, or registered from the repository."""
    exit_code: int | None
    tests: dict[str, TestVerdict] = Field(default_factory=dict)
    report: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    """swebench's per-category ``success`` / ``failure`` lists (FAIL_TO_PASS, PASS_TO_PASS...)."""
    reasons: list[str] = Field(default_factory=list)
    """Why the instance is not resolved, when it is not."""


def junit_key(test_id: str) -> tuple[str, str]:
    """The (classname, name) pair pytest's junit XML gives the node id ``test_id`` (pytest's own mangling)."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def parse_junit(xml_text: str | None) -> dict[tuple[str, str], tuple[str, float]] | None:
    """(classname, name) -> (status, seconds) from a junit XML; None when absent or unreadable.

    Statuses use swebench's names: ``PASSED``, ``FAILED``, ``ERROR``, ``SKIPPED``, ``XFAIL``.
    A test listed twice keeps its worst status.
    """
    if not xml_text:
        return None
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return None
    rank = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}
    results: dict[tuple[str, str], tuple[str, float]] = {}
    for case in root.iter("testcase"):
        kinds = {child.tag: child for child in case}
        if "error" in kinds:
            status = "ERROR"
        elif "failure" in kinds:
            status = "FAILED"
        elif "skipped" in kinds:
            status = "XFAIL" if kinds["skipped"].get("type") == "pytest.xfail" else "SKIPPED"
        else:
            status = "PASSED"
        key = (case.get("classname", ""), case.get("name", ""))
        try:
            seconds = float(case.get("time", "0") or 0)
        except ValueError:
            seconds = 0.0
        if key not in results or rank[status] > rank[results[key][0]]:
            results[key] = (status, seconds)
    return results


class Ledger(BaseModel):
    """The grader plugin's own record of a run (``ledger.json``)."""

    tests: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Node id -> phase (``setup``, ``call``, ``teardown``) -> ``ok``, ``raised``, ``skipped`` or ``xfailed``."""
    tampered: list[str] = Field(default_factory=list)
    exitstatus: int | None = None


def parse_ledger(text: str | None) -> Ledger | None:
    """The ledger of a run; None when absent or unreadable."""
    if not text:
        return None
    try:
        return Ledger.model_validate_json(text)
    except ValueError:
        return None


def ledger_status(phases: dict[str, str] | None) -> str | None:
    """The status a test's phase outcomes imply; None when the ledger does not list the test."""
    if not phases:
        return None
    setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
    if setup == "skipped":
        return "SKIPPED"
    if setup != "ok" or teardown != "ok":
        return "ERROR"
    return {"ok": "PASSED", "skipped": "SKIPPED", "xfailed": "XFAIL"}.get(call or "", "FAILED")


def _confirmed(status: str, by_ledger: str | None) -> bool:
    """Whether the ledger backs a status (only passes need backing: they are what a forgery wants)."""
    if status == "PASSED":
        return by_ledger == "PASSED"
    if status == "XFAIL":
        return by_ledger in ("FAILED", "XFAIL")
    return True


def build_log(run: TestRun) -> str:
    """The test log in SWE-bench's layout, markers and exit status added by the host, never by the run."""
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT, TEST_EXIT_CODE, TESTS_TIMEOUT

    output = run.stdout.replace(">>>>>", _DEFUSED)
    errors = run.stderr.replace(">>>>>", _DEFUSED)
    lines = [START_TEST_OUTPUT, output.rstrip("\n"), END_TEST_OUTPUT]
    if run.status == "timeout":
        lines.append(TESTS_TIMEOUT)
    lines.append(f"{TEST_EXIT_CODE}: {run.exit_code if run.exit_code is not None else -1}")
    if errors.strip():
        lines += ["--- stderr ---", errors.rstrip("\n")]
    return "\n".join(lines) + "\n"


def combine(
    tests: Iterable[str],
    log_map: dict[str, str],
    junit: dict[tuple[str, str], tuple[str, float]] | None,
    ledger: Ledger | None,
) -> dict[str, TestVerdict]:
    """Each test's verdict: the status when the log and the junit XML agree and the ledger backs it, else ``FAILED``."""
    verdicts: dict[str, TestVerdict] = {}
    for test in tests:
        from_log = log_map.get(test)
        from_junit, seconds = (junit or {}).get(junit_key(test), (None, None))
        from_ledger = ledger_status(ledger.tests.get(test)) if ledger is not None else None
        agree = from_log is not None and from_log == from_junit and _confirmed(from_log, from_ledger)
        verdicts[test] = TestVerdict(
            status=from_log if agree and from_log else "FAILED",
            log=from_log,
            junit=from_junit,
            ledger=from_ledger,
            agree=agree,
            duration_s=seconds,
        )
    return verdicts


def grade_run(instance: SWEBenchInstance, spec: RepoSpec, run: TestRun, log_path: Path) -> Grade:
    """Write the log to ``log_path`` and grade the run against the instance's FAIL_TO_PASS and PASS_TO_PASS."""
    from swebench.harness.constants import FAIL_TO_PASS, PASS_TO_PASS, EvalType, ResolvedStatus
    from swebench.harness.grading import get_eval_tests_report, get_logs_eval, get_resolution_status
    from swebench.types import TestSpec

    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(build_log(run), encoding="utf-8")
    test_spec = TestSpec(
        instance_id=instance.instance_id,
        image="",
        eval_script_list=[],
        repo=instance.repo,
        version=instance.version,
        FAIL_TO_PASS=instance.FAIL_TO_PASS,
        PASS_TO_PASS=instance.PASS_TO_PASS,
        log_parser=spec.log_parser,
        eval_type=spec.eval_type,
    )
    log_map, log_accepted = get_logs_eval(test_spec, str(log_path))
    junit = parse_junit(run.junit_xml)
    ledger = parse_ledger(run.ledger_json)
    verdicts = combine(instance.tests, log_map, junit, ledger)
    status_map = {test: verdict.status for test, verdict in verdicts.items()}
    gold = {
        "instance_id": instance.instance_id,
        FAIL_TO_PASS: instance.FAIL_TO_PASS,
        PASS_TO_PASS: instance.PASS_TO_PASS,
    }
    report = get_eval_tests_report(status_map, gold, eval_type=EvalType(spec.eval_type))
    resolution = str(get_resolution_status(report))
    reasons: list[str] = []
    if resolution != ResolvedStatus.FULL.value:
        failing = report[FAIL_TO_PASS]["failure"] + report[PASS_TO_PASS]["failure"]
        reasons.append(f"{len(failing)} of {len(instance.tests)} tests did not pass: {', '.join(failing[:5])}")
    if not log_accepted:
        reasons.append("swebench did not accept the test log (no results, a failure marker, or a timeout)")
    if junit is None:
        reasons.append("pytest wrote no junit XML (the run ended before pytest finished)")
    if ledger is None:
        reasons.append("the grader plugin wrote no ledger (pytest did not finish under the grader)")
    elif ledger.tampered:
        reasons.append("pytest was tampered with: " + "; ".join(ledger.tampered[:5]))
    if run.exit_code != 0:
        reasons.append(f"the test command exited with status {run.exit_code} ({run.status})")
    disagreeing = [test for test, verdict in verdicts.items() if not verdict.agree and verdict.log in PASSING]
    if disagreeing:
        reasons.append(
            f"the log reports passes the junit XML or the ledger does not confirm: {', '.join(disagreeing[:5])}"
        )
    return Grade(
        resolved=not reasons,
        resolution=resolution,
        log_accepted=log_accepted,
        junit_found=junit is not None,
        ledger_found=ledger is not None,
        tampering=list(ledger.tampered) if ledger is not None else [],
        exit_code=run.exit_code,
        tests=verdicts,
        report={key: dict(value) for key, value in report.items()},
        reasons=reasons,
    )
