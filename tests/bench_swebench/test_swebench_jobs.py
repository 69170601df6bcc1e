"""``grade(jobs=N)``: predictions graded at once, with the same results as one at a time, and resumable.

No Docker: the calc repository's four instances are graded with a stand-in test
sandbox (``fake_grading``); git, patching, protection, grading and every file
written are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.bench_swebench.fake_grading import BROKEN_PATCH, FOREIGN_PATCH, CalcBench, build_bench
from tests.bench_swebench.graded_output import files_matching, results_by_input, without_timings

from debatecode.bench.swebench import HarnessEvent, Prediction, RunSummary
from debatecode.bench.swebench.harness import default_grading_jobs
from debatecode.bench.swebench.results import RESULTS_FILE
from debatecode.errors import ConfigError, SandboxUnavailable

MODEL = "org/model-x"


@pytest.fixture
def bench(tmp_path: Path) -> CalcBench:
    return build_bench(tmp_path)


def _predictions(bench: CalcBench) -> list[Prediction]:
    """Gold, a wrong fix, a patch that applies nowhere and an empty patch, one per instance."""
    patches = [bench.instances[0].patch, BROKEN_PATCH, FOREIGN_PATCH, ""]
    return [
        Prediction(instance_id=instance.instance_id, model_name_or_path=MODEL, model_patch=patch)
        for instance, patch in zip(bench.instances, patches, strict=True)
    ]


async def _grade(bench: CalcBench, out: Path, predictions: list[Prediction], jobs: int) -> RunSummary:
    harness = bench.harness(out)
    try:
        return await harness.grade(predictions, source="test", jobs=jobs)
    finally:
        await harness.aclose()


async def test_two_at_once_gives_the_same_results_as_one_at_a_time(bench: CalcBench, tmp_path: Path) -> None:
    predictions = _predictions(bench)
    serial = await _grade(bench, tmp_path / "serial", predictions, jobs=1)
    assert bench.log.most_at_once == 1
    bench.log.most_at_once = 0
    parallel = await _grade(bench, tmp_path / "parallel", predictions, jobs=2)
    assert bench.log.most_at_once == 2, "two test runs overlapped"
    assert [row.status for row in serial.rows] == ["resolved", "unresolved", "patch_failed", "unresolved"]
    assert without_timings(parallel.model_dump()) == without_timings(serial.model_dump())
    for name in ("serial", "parallel"):
        assert json.loads((tmp_path / name / "summary.json").read_text())["resolved"] == 1
    assert results_by_input(tmp_path / "parallel") == results_by_input(tmp_path / "serial")
    assert len(results_by_input(tmp_path / "serial")) == 4
    swebench_files = "logs/run_evaluation/debatecode/*/*/*"
    assert files_matching(tmp_path / "parallel", swebench_files) == files_matching(tmp_path / "serial", swebench_files)
    assert files_matching(tmp_path / "parallel", "*.debatecode.json") == files_matching(
        tmp_path / "serial", "*.debatecode.json"
    )
    for name in ("serial", "parallel"):
        report = json.loads((tmp_path / name / "org__model-x" / "local__calc-1" / "report.json").read_text())
        assert report["status"] == "resolved" and report["input_sha256"]


async def test_lines_are_whole_and_the_summary_keeps_the_order_given(bench: CalcBench, tmp_path: Path) -> None:
    predictions = _predictions(bench)[:3]
    finished: list[str] = []
    harness = bench.harness(tmp_path / "out")
    harness.listener = lambda event: finished.append(event.instance_id) if event.kind == "done" else None
    try:
        summary = await harness.grade(predictions, jobs=3)
    finally:
        await harness.aclose()
    assert finished != [p.instance_id for p in predictions], "the stand-in makes early instances finish last"
    assert [row.instance_id for row in summary.rows] == [p.instance_id for p in predictions]
    lines = (tmp_path / "out" / RESULTS_FILE).read_text().splitlines()
    assert [json.loads(line)["instance_id"] for line in lines] == finished


async def test_a_second_run_into_the_same_folder_grades_nothing_again(bench: CalcBench, tmp_path: Path) -> None:
    predictions = _predictions(bench)
    first = await _grade(bench, tmp_path / "out", predictions, jobs=2)
    runs = len(bench.log.images)
    events: list[HarnessEvent] = []
    harness = bench.harness(tmp_path / "out")
    harness.listener = events.append
    try:
        second = await harness.grade(predictions, jobs=2)
    finally:
        await harness.aclose()
    assert len(bench.log.images) == runs, "no test ran again"
    assert second.resumed == 4 and first.resumed == 0
    assert [(e.kind, e.message) for e in events] == [("done", "resumed")] * 4
    assert [row.status for row in second.rows] == [row.status for row in first.rows]
    assert len((tmp_path / "out" / RESULTS_FILE).read_text().splitlines()) == 4


async def test_a_killed_run_resumes_with_only_what_is_missing(bench: CalcBench, tmp_path: Path) -> None:
    predictions = _predictions(bench)
    out = tmp_path / "out"
    await _grade(bench, out, predictions, jobs=2)
    lines = (out / RESULTS_FILE).read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["instance_id"] in ("local__calc-1", "local__calc-3")]
    (out / RESULTS_FILE).write_text("\n".join(kept) + "\n" + lines[0][:40])  # and a torn last line
    bench.log.images.clear()
    summary = await _grade(bench, out, predictions, jobs=2)
    assert sorted(bench.log.images) == ["fake/instance:local__calc-2", "fake/instance:local__calc-4"]
    assert summary.resumed == 2
    assert [row.status for row in summary.rows] == ["resolved", "unresolved", "patch_failed", "unresolved"]


async def test_a_changed_patch_or_an_error_is_graded_again(bench: CalcBench, tmp_path: Path) -> None:
    predictions = _predictions(bench)[:2]
    out = tmp_path / "out"
    await _grade(bench, out, predictions, jobs=1)
    record = json.loads((out / RESULTS_FILE).read_text().splitlines()[1])
    record["status"] = "error"
    with (out / RESULTS_FILE).open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    changed = [predictions[0].model_copy(update={"model_patch": BROKEN_PATCH}), predictions[1]]
    bench.log.images.clear()
    summary = await _grade(bench, out, changed, jobs=1)
    assert sorted(bench.log.images) == ["fake/instance:local__calc-1", "fake/instance:local__calc-2"]
    assert summary.resumed == 0 and [row.status for row in summary.rows] == ["unresolved", "unresolved"]


async def test_an_engine_that_stops_answering_keeps_what_finished(bench: CalcBench, tmp_path: Path) -> None:
    predictions = _predictions(bench)[:2]
    harness = bench.harness(tmp_path / "out")
    original = harness.run_overlay

    async def failing(context: Any, overlay: Any, tests: Any) -> Any:
        if context.instance.instance_id == "local__calc-2":
            raise SandboxUnavailable("the engine went away", backend="docker")
        return await original(context, overlay, tests)

    harness.run_overlay = failing  # type: ignore[method-assign]
    try:
        with pytest.raises(SandboxUnavailable):
            await harness.grade(predictions, jobs=1)
    finally:
        await harness.aclose()
    [line] = (tmp_path / "out" / RESULTS_FILE).read_text().splitlines()
    assert json.loads(line)["instance_id"] == "local__calc-1"


def test_the_grading_default_is_min_cpus_4_and_jobs_below_1_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert default_grading_jobs() == 4
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert default_grading_jobs() == 2 and default_grading_jobs(7) == 7
    with pytest.raises(ConfigError, match="at least 1"):
        default_grading_jobs(0)


async def test_solving_two_at_once_writes_the_same_predictions_and_records(bench: CalcBench, tmp_path: Path) -> None:
    from tests.bench_swebench.solve_fixtures import GOOD_EDIT, config_for, scripted

    from debatecode.bench.swebench.solve import generate_predictions

    written: dict[int, tuple[list[Prediction], dict[str, Any]]] = {}
    events: list[tuple[str, str]] = []
    with scripted("solve-jobs", lambda messages, tags: GOOD_EDIT) as model:
        config = config_for(model, tmp_path, token_budget=50_000)
        for jobs in (1, 2):
            out = tmp_path / f"solve-{jobs}"
            harness = bench.harness(out)
            try:
                predictions = await generate_predictions(
                    harness,
                    bench.instances,
                    config=config,
                    strategy="single",
                    out=out,
                    jobs=jobs,
                    listener=lambda event: events.append((event.kind, event.instance_id)),
                )
            finally:
                await harness.aclose()
            records = {
                path.name: without_timings({k: v for k, v in json.loads(path.read_text()).items() if k != "seconds"})
                for path in sorted((out / "solve").glob("*.json"))
            }
            written[jobs] = (predictions, records)
            assert (out / "solve" / "predictions.jsonl").read_text().count("\n") == 4
    assert written[2] == written[1]
    two_at_once = [kind for kind, _ in events if kind != "step"][8:]
    assert two_at_once[:2] == ["start", "start"], "with jobs=2 the second instance starts before the first is done"
    assert [p.instance_id for p in written[2][0]] == [i.instance_id for i in bench.instances]
    assert all("return high" in (p.model_patch or "") for p in written[2][0])
