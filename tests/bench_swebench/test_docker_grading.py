"""Grading in real instance images: gold resolves every instance, empty none, and no forged prediction passes.

Each source is graded once per session (``graded`` in conftest.py); these tests read the reports.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debatecode.bench.swebench import RunSummary

from .conftest import FORGED

FORGED_MODELS = [json.loads(line)["model_name_or_path"] for line in FORGED.read_text().splitlines() if line.strip()]
MONKEYPATCHING = {"forged/monkeypatch-reports", "forged/register-plugin", "forged/swallow-failures"}
RESTORING = {
    "forged/conftest-forces-pass",
    "forged/pytest-config-addopts",
    "forged/sitecustomize",
    "forged/rewrite-tests",
}

pytestmark = pytest.mark.docker


def _report(out: Path, model: str, instance_id: str) -> dict[str, object]:
    path = out / model.replace("/", "__") / instance_id / "report.json"
    report: dict[str, object] = json.loads(path.read_text())
    return report


def test_gold_resolves_every_instance(graded: dict[str, tuple[RunSummary, Path]]) -> None:
    summary, out = graded["gold"]
    assert summary.total >= 3 and summary.resolved == summary.total, summary.rows
    for row in summary.rows:
        report = _report(out, "gold", row.instance_id)
        assert report["schema_version"] == 1 and report["status"] == "resolved"
        assert report["resolution"] == "RESOLVED_FULL" and report["tampering"] == []
        assert report["log_accepted"] and report["junit_found"] and report["ledger_found"]
        assert (out / "gold" / row.instance_id / "test_output.txt").is_file()
        assert (out / "gold" / row.instance_id / "junit.xml").is_file()
    assert (out / "summary.json").is_file() and "| gold |" in (out / "summary.md").read_text()
    assert json.loads((out / "summary.json").read_text())["resolved"] == summary.total


def test_empty_resolves_none_yet_runs_the_tests(graded: dict[str, tuple[RunSummary, Path]]) -> None:
    summary, out = graded["empty"]
    assert summary.resolved == 0 and summary.total >= 3
    for row in summary.rows:
        assert row.status == "unresolved" and row.patch == "empty"
        report = _report(out, "empty", row.instance_id)
        tests_status = report["tests_status"]
        assert isinstance(tests_status, dict)
        assert tests_status["FAIL_TO_PASS"]["success"] == [], "the fix's tests fail without the fix"
        assert tests_status["PASS_TO_PASS"]["failure"] == [], "the other tests pass at base_commit"


@pytest.mark.parametrize("model", FORGED_MODELS)
def test_no_forged_prediction_is_resolved(graded: dict[str, tuple[RunSummary, Path]], model: str) -> None:
    summary, out = graded["forged"]
    [row] = [row for row in summary.rows if row.model == model]
    report = _report(out, model, row.instance_id)
    assert not row.resolved and row.status == "unresolved", report["reasons"]
    patch = report["patch"]
    assert isinstance(patch, dict) and patch["applied"], "the attack was graded, not rejected as a bad patch"
    if model in RESTORING:
        assert report["protected_restored"], "the files that configure collection were put back"
    if model in MONKEYPATCHING:
        assert report["tampering"], "the grader plugin saw pytest's machinery change"


def test_the_monkeypatch_attacks_fooled_the_reports_but_not_the_ledger(
    graded: dict[str, tuple[RunSummary, Path]],
) -> None:
    summary, out = graded["forged"]
    for row in summary.rows:
        if row.model not in ("forged/monkeypatch-reports", "forged/register-plugin"):
            continue
        tests = _report(out, row.model, row.instance_id)["tests"]
        assert isinstance(tests, dict)
        fooled = [name for name, v in tests.items() if v["log"] == v["junit"] == "PASSED" and v["ledger"] == "FAILED"]
        assert fooled, f"{row.model}: the attack should have made a failing test look passed in the log and junit"
