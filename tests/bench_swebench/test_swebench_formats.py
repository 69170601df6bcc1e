"""swebench's own formats next to ours: per-instance ``report.json`` and the ``<model>.<run_id>.json`` run report.

Checked against swebench itself: ``get_eval_report`` on the same log gives the same
``report.json`` for honest runs, and ``make_run_report`` reading our folder writes
the same run report as ours. No Docker (``fake_grading``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.bench_swebench.fake_grading import BROKEN_PATCH, FOREIGN_PATCH, CalcBench, Mode, build_bench

from debatecode.bench.swebench import Prediction, SWEBenchHarness, SWEBenchInstance
from debatecode.bench.swebench.swebench_logs import run_report_path, swebench_model_dir
from debatecode.errors import ConfigError

RUN_ID = "eval-1"
MODEL = "org/model-x"


@pytest.fixture
def bench(tmp_path: Path) -> CalcBench:
    return build_bench(tmp_path)


def _prediction(instance: SWEBenchInstance, patch: str | None, model: str = MODEL) -> Prediction:
    return Prediction(instance_id=instance.instance_id, model_name_or_path=model, model_patch=patch)


async def _grade(bench: CalcBench, out: Path, predictions: list[Prediction], *, mode: Mode = "honest") -> None:
    harness = bench.harness(out, mode=mode, run_id=RUN_ID)
    try:
        await harness.grade(predictions, jobs=2)
    finally:
        await harness.aclose()


def _instance_dir(out: Path, model: str, instance_id: str) -> Path:
    return out / "logs" / "run_evaluation" / RUN_ID / swebench_model_dir(model) / instance_id


def _text(path: Path) -> tuple[str, str]:
    return path.name, path.read_text()


def _swebench_eval_report(instance: SWEBenchInstance, prediction: Prediction, log: Path) -> dict[str, Any]:
    """What swebench's own ``get_eval_report`` makes of the log our run wrote."""
    from swebench.harness.grading import get_eval_report
    from swebench.types import TestSpec

    spec = TestSpec(
        instance_id=instance.instance_id,
        image="",
        eval_script_list=[],
        repo=instance.repo,
        version=instance.version,
        FAIL_TO_PASS=instance.FAIL_TO_PASS,
        PASS_TO_PASS=instance.PASS_TO_PASS,
        log_parser="parse_log_pytest",
        eval_type="pass_and_fail",
    )
    report: dict[str, Any] = get_eval_report(spec, prediction.model_dump(), str(log), include_tests_status=True)
    return report


async def test_report_json_is_what_swebench_makes_of_the_same_log(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    gold, broken = bench.instances[0], bench.instances[1]
    predictions = [_prediction(gold, gold.patch), _prediction(broken, BROKEN_PATCH)]
    await _grade(bench, out, predictions)
    for prediction, instance, resolved in ((predictions[0], gold, True), (predictions[1], broken, False)):
        where = _instance_dir(out, MODEL, instance.instance_id)
        ours = json.loads((where / "report.json").read_text())
        assert ours == _swebench_eval_report(instance, prediction, where / "test_output.txt")
        entry = ours[instance.instance_id]
        assert list(entry) == [
            "patch_is_None",
            "patch_exists",
            "patch_successfully_applied",
            "resolved",
            "infra_failure",
            "tests_status",
        ]
        assert entry["resolved"] is resolved and entry["patch_successfully_applied"] is True
        assert set(entry["tests_status"]) == {"FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"}
        assert (where / "patch.diff").read_text() == prediction.model_patch
        assert "Applied Patch (git apply --verbose)" in (where / "run_instance.log").read_text()


def _ours_and_swebenchs(
    out: Path, instance: SWEBenchInstance, prediction: Prediction
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Our ``report.json`` entry and ``get_eval_report``'s for the same log, after checking all else is equal."""
    where = _instance_dir(out, MODEL, instance.instance_id)
    ours = json.loads((where / "report.json").read_text())[instance.instance_id]
    theirs = _swebench_eval_report(instance, prediction, where / "test_output.txt")[instance.instance_id]
    assert list(ours) == list(theirs), "the same keys in the same order"
    differing = {key for key in ours if ours[key] != theirs[key]}
    assert differing <= {"resolved", "tests_status"}, "only the two fields docs/benchmarks-swebench.md names"
    return ours, theirs


async def test_a_forged_log_changes_resolved_and_moves_the_denied_tests_to_failure(
    bench: CalcBench, tmp_path: Path
) -> None:
    """docs/benchmarks-swebench.md: a test the log passes but the junit XML or ledger deny moves success -> failure."""
    out = tmp_path / "out"
    instance = bench.instances[1]
    prediction = _prediction(instance, BROKEN_PATCH)
    await _grade(bench, out, [prediction], mode="forge")
    ours, fooled = _ours_and_swebenchs(out, instance, prediction)
    assert fooled["resolved"] is True, "the forged log alone passes swebench's rules"
    assert ours["resolved"] is False, "the junit XML and the ledger saw the hidden test fail"
    assert fooled["tests_status"]["FAIL_TO_PASS"] == {"success": instance.FAIL_TO_PASS, "failure": []}
    assert ours["tests_status"] == {
        **fooled["tests_status"],
        "FAIL_TO_PASS": {"success": [], "failure": instance.FAIL_TO_PASS},
    }, "only the denied tests move, from success to failure; PASS_TO_PASS (really passing) is the same"


async def test_tampering_changes_only_resolved_when_every_record_reports_passes(
    bench: CalcBench, tmp_path: Path
) -> None:
    """docs/benchmarks-swebench.md: log, junit XML and ledger agree, so tests_status is swebench's; resolved is not."""
    out = tmp_path / "out"
    instance = bench.instances[1]
    prediction = _prediction(instance, BROKEN_PATCH)
    await _grade(bench, out, [prediction], mode="swallow")
    ours, fooled = _ours_and_swebenchs(out, instance, prediction)
    assert ours["tests_status"] == fooled["tests_status"]
    assert ours["tests_status"]["FAIL_TO_PASS"] == {"success": instance.FAIL_TO_PASS, "failure": []}
    assert (fooled["resolved"], ours["resolved"]) == (True, False), "the ledger saw pytest tampered with"


async def test_a_run_without_test_results_is_reported_as_swebench_reports_it(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    instance = bench.instances[0]
    prediction = _prediction(instance, instance.patch)
    await _grade(bench, out, [prediction], mode="crash")
    where = _instance_dir(out, MODEL, instance.instance_id)
    ours = json.loads((where / "report.json").read_text())
    assert ours == _swebench_eval_report(instance, prediction, where / "test_output.txt")
    assert ours[instance.instance_id] == {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": False,
        "resolved": False,
        "infra_failure": False,
        "infra_failure_reason": "no_tests_collected",
    }
    run = json.loads(run_report_path(out, MODEL, RUN_ID).read_text())
    assert run["unresolved_ids"] == run["ambiguous_failure_ids"] == [instance.instance_id]
    assert run["failure_reasons"] == {instance.instance_id: "no_tests_collected"}


async def test_the_run_report_is_what_make_run_report_writes_from_our_folder(
    bench: CalcBench, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from swebench.harness.reporting import make_run_report

    out = tmp_path / "out"
    patches = [bench.instances[0].patch, BROKEN_PATCH, FOREIGN_PATCH, ""]
    predictions = [_prediction(i, p) for i, p in zip(bench.instances, patches, strict=True)]
    predictions.append(_prediction(bench.instances[0], None, model="empty"))
    await _grade(bench, out, predictions)
    dataset = [{"instance_id": instance.instance_id} for instance in bench.instances]
    monkeypatch.chdir(out)
    for model in (MODEL, "empty"):
        own = {p.instance_id: p.model_dump() for p in predictions if p.model_name_or_path == model}
        theirs = _text(make_run_report(own, dataset, RUN_ID, client=None, report_dir=str(tmp_path / "swebench")))
        assert theirs == (f"{swebench_model_dir(model)}.{RUN_ID}.json", _text(run_report_path(out, model, RUN_ID))[1])
    capsys.readouterr()
    report = json.loads(run_report_path(out, MODEL, RUN_ID).read_text())
    assert report["resolved_ids"] == ["local__calc-1"] and report["unresolved_ids"] == ["local__calc-2"]
    assert report["error_ids"] == ["local__calc-3"], "a patch that does not apply is an error, as in swebench"
    assert report["empty_patch_ids"] == ["local__calc-4"] and report["completed_instances"] == 2
    empty = json.loads(run_report_path(out, "empty", RUN_ID).read_text())
    assert empty["incomplete_ids"] == ["local__calc-2", "local__calc-3", "local__calc-4"]
    assert empty["empty_patch_ids"] == ["local__calc-1"] and empty["submitted_instances"] == 1
    assert not _instance_dir(out, MODEL, "local__calc-4").exists(), "swebench never runs an empty patch"
    assert not (_instance_dir(out, MODEL, "local__calc-3") / "report.json").exists()
    failed = (_instance_dir(out, MODEL, "local__calc-3") / "run_instance.log").read_text()
    assert ">>>>> Patch Apply Failed" in failed


async def test_a_regraded_prediction_leaves_no_stale_swebench_report(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    instance = bench.instances[0]
    await _grade(bench, out, [_prediction(instance, instance.patch)])
    assert (_instance_dir(out, MODEL, instance.instance_id) / "report.json").is_file()
    await _grade(bench, out, [_prediction(instance, FOREIGN_PATCH)])
    assert not (_instance_dir(out, MODEL, instance.instance_id) / "report.json").exists()
    assert json.loads(run_report_path(out, MODEL, RUN_ID).read_text())["error_ids"] == [instance.instance_id]


@pytest.mark.parametrize("run_id", ["", "a/b", "..", "."])
def test_a_run_id_must_name_one_folder(bench: CalcBench, tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ConfigError, match="--run-id"):
        SWEBenchHarness(bench.instances, repos_dir=bench.repos_dir, out=tmp_path, run_id=run_id)
