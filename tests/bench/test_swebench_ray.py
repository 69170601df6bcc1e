"""``bench swebench --executor ray``: predictions graded as Ray tasks give the serial verdicts and files.

The cluster is a real one (``ray.init(num_cpus=2)``): its workers are other
processes, which grade the calc repository's instances with the Docker-free
stand-ins of ``tests.bench_swebench.fake_grading`` (through Ray's worker setup
hook, ``tests.support.swebench_ray_worker``); git, patching, grading and every
file written are the real ones. A worker grades into a temporary folder of its
own and returns the files; the driver alone writes them under ``--out``.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.bench_swebench.fake_grading import BROKEN_PATCH, FOREIGN_PATCH, CalcBench, build_bench
from tests.bench_swebench.graded_output import files_matching, results_by_input, without_timings
from tests.bench_swebench.solve_fixtures import config_for
from tests.cli.helpers import REPO
from tests.support.ray_cli import assert_exits_2_without_ray_and_3_when_the_address_does_not_answer
from tests.support.ray_cluster import local_ray_cluster
from tests.support.swebench_ray_worker import HOOK, SOLVER, solver_model

from debatecode.bench.swebench import Prediction, RunSummary, remote
from debatecode.bench.swebench.errors import TaskResultRefused
from debatecode.bench.swebench.images import node_lock
from debatecode.bench.swebench.remote import accept_grading, prediction_folders, write_returned_files
from debatecode.bench.swebench.report import InstanceReport
from debatecode.bench.swebench.results import RESULTS_FILE
from debatecode.bench.swebench.solve import generate_predictions
from debatecode.cli.bench_swebench import _grade_on_ray, _solve_and_grade_on_ray
from debatecode.errors import ExitCode
from debatecode.llm import ScriptedModel, register_scripted, unregister_scripted

ray = pytest.importorskip("ray")
pytest.importorskip("swebench")

MODEL = "org/model-x"
RUN_ID = "cmp"


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """A local Ray cluster of 2 CPUs whose workers grade with the fake builder and sandbox."""
    with local_ray_cluster(HOOK):
        yield


def _predictions(bench: CalcBench) -> list[Prediction]:
    """Gold (resolved), a wrong fix (unresolved) and a patch that applies nowhere (no swebench report.json)."""
    patches = [bench.instances[0].patch, BROKEN_PATCH, FOREIGN_PATCH]
    return [
        Prediction(instance_id=instance.instance_id, model_name_or_path=MODEL, model_patch=patch)
        for instance, patch in zip(bench.instances, patches, strict=False)
    ]


def _reports(out: Path) -> dict[str, Any]:
    return {
        name: without_timings(json.loads(text))
        for name, text in files_matching(out, "org__model-x/*/report.json").items()
    }


@pytest.mark.slow
async def test_grading_through_ray_gives_the_serial_verdicts_and_files(
    ray_cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = build_bench(tmp_path)
    predictions = _predictions(bench)

    def not_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("the driver built a worker harness: a task ran in the driver")

    monkeypatch.setattr(remote, "make_worker_harness", not_here)
    on_ray: RunSummary = await _grade_on_ray(
        bench.instances, predictions, bench.repos_dir, tmp_path / "ray", "test", 2, None, RUN_ID
    )
    assert bench.log.images == [], "no test ran in the driver's sandbox"

    harness = bench.harness(tmp_path / "serial", run_id=RUN_ID)
    try:
        serial = await harness.grade(predictions, source="test", jobs=1)
    finally:
        await harness.aclose()

    ray_out, serial_out = tmp_path / "ray", tmp_path / "serial"
    assert [row.status for row in on_ray.rows] == ["resolved", "unresolved", "patch_failed"], "real verdicts"
    assert without_timings(on_ray.model_dump()) == without_timings(serial.model_dump())
    assert results_by_input(ray_out) == results_by_input(serial_out)
    assert len(results_by_input(ray_out)) == 3
    assert _reports(ray_out) == _reports(serial_out)
    for pattern in ("org__model-x/*/test_output.txt", "org__model-x/*/junit.xml", "org__model-x/*/patch.diff"):
        assert files_matching(ray_out, pattern) == files_matching(serial_out, pattern), pattern
    swebench_files = "logs/run_evaluation/cmp/org__model-x/*/*"
    assert files_matching(ray_out, swebench_files) == files_matching(serial_out, swebench_files)
    assert {Path(name).parent.name for name in files_matching(ray_out, swebench_files + "report.json")} == {
        "local__calc-1",
        "local__calc-2",
    }, "swebench writes no report.json for a patch that does not apply"
    run_report = json.loads((ray_out / f"org__model-x.{RUN_ID}.json").read_text())
    assert run_report == json.loads((serial_out / f"org__model-x.{RUN_ID}.json").read_text())
    assert run_report["resolved_ids"] == ["local__calc-1"] and run_report["error_ids"] == ["local__calc-3"]
    assert without_timings(json.loads((ray_out / "summary.json").read_text())) == without_timings(
        json.loads((serial_out / "summary.json").read_text())
    )

    again = await _grade_on_ray(bench.instances, predictions, bench.repos_dir, ray_out, "test", 2, None, RUN_ID)
    assert again.resumed == 3, "a second run into the same folder resumes from results.jsonl"
    assert len((ray_out / RESULTS_FILE).read_text().splitlines()) == 3


@pytest.mark.slow
async def test_solving_through_ray_gives_the_serial_predictions_and_verdicts(ray_cluster: None, tmp_path: Path) -> None:
    bench = build_bench(tmp_path)
    chosen = bench.instances[:2]
    config = config_for(f"scripted/{SOLVER}", tmp_path, token_budget=50_000)
    driver_calls: list[str] = []
    register_scripted(SOLVER, ScriptedModel(fn=lambda messages, tags: driver_calls.append("call") or "not here"))
    try:
        on_ray = await _solve_and_grade_on_ray(
            chosen, bench.repos_dir, tmp_path / "ray", config, "single", 2, None, RUN_ID
        )
        assert driver_calls == [] and bench.log.images == [], "every instance was solved and graded in a worker"
        register_scripted(SOLVER, solver_model())
        harness = bench.harness(tmp_path / "serial", run_id=RUN_ID)
        try:
            solved = await generate_predictions(
                harness, chosen, config=config, strategy="single", out=tmp_path / "serial", jobs=1
            )
            serial = await harness.grade(solved, source=f"solve:single:{config.model}", jobs=1)
        finally:
            await harness.aclose()
    finally:
        unregister_scripted(SOLVER)

    ray_out, serial_out = tmp_path / "ray", tmp_path / "serial"
    assert [row.status for row in on_ray.rows] == ["resolved", "resolved"], "the scripted fix resolves both"
    assert without_timings(on_ray.model_dump()) == without_timings(serial.model_dump())
    assert (ray_out / "predictions.jsonl").read_text() == (serial_out / "predictions.jsonl").read_text()
    for instance in chosen:
        name = f"solve/{instance.instance_id}.json"
        ray_record, serial_record = (json.loads((out / name).read_text()) for out in (ray_out, serial_out))
        assert ray_record.pop("seconds") >= 0 and serial_record.pop("seconds") >= 0
        assert ray_record == serial_record, name
    assert results_by_input(ray_out) == results_by_input(serial_out)


def _payload(prediction: Prediction, files: dict[str, Any], **report: Any) -> dict[str, Any]:
    fields = {
        "instance_id": prediction.instance_id,
        "model_name_or_path": prediction.model_name_or_path,
        "repo": "local/calc",
        "status": "unresolved",
        "input_sha256": "abc",
        **report,
    }
    return {"report": InstanceReport(**fields).model_dump(mode="json"), "files": files}


def test_the_driver_writes_the_files_a_task_returns_in_the_predictions_own_folders(tmp_path: Path) -> None:
    prediction = Prediction(instance_id="local__calc-1", model_name_or_path="org/m:1", model_patch="x")
    ours, theirs = prediction_folders(tmp_path, RUN_ID, prediction)
    assert (ours.as_posix(), theirs.as_posix()) == (
        "org__m_1/local__calc-1",
        "logs/run_evaluation/cmp/org__m:1/local__calc-1",
    )
    stale = tmp_path / theirs / "report.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("an earlier verdict")
    files = {f"{ours}/test_output.txt": "log\n", f"{ours}/junit.xml": b"\xff<xml/>", f"{theirs}/patch.diff": "x"}

    report = accept_grading(tmp_path, RUN_ID, prediction, "abc", _payload(prediction, files))

    assert report.status == "unresolved" and report.instance_id == "local__calc-1"
    assert (tmp_path / ours / "test_output.txt").read_text() == "log\n"
    assert (tmp_path / ours / "junit.xml").read_bytes() == b"\xff<xml/>"
    assert (tmp_path / theirs / "patch.diff").read_text() == "x"
    assert not stale.exists(), "an earlier grading's report.json does not outlive the new verdict"


@pytest.mark.parametrize(
    "name",
    [
        "../../x",
        "org__m/local__calc-1/../../../x",
        "/tmp/x",
        "org__m/local__calc-2/report.json",
        "org__m/local__calc-1",
        "summary.json",
        "org__m\\local__calc-1\\x",
        "",
    ],
)
def test_a_returned_path_outside_the_predictions_folders_is_refused_and_nothing_is_written(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    prediction = Prediction(instance_id="local__calc-1", model_name_or_path="org/m", model_patch="x")
    folders = prediction_folders(out, RUN_ID, prediction)
    kept = out / "org__m" / "local__calc-1" / "report.json"
    kept.parent.mkdir(parents=True)
    kept.write_text("kept")
    files = {"org__m/local__calc-1/test_output.txt": "fine", name: "hostile"}

    with pytest.raises(TaskResultRefused) as refused:
        write_returned_files(out, files, folders, label="local__calc-1")

    assert refused.value.exit_code == ExitCode.RUN_FAILED
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "out/org__m/local__calc-1/report.json"
    ], "nothing written, nothing removed"
    assert kept.read_text() == "kept"


def test_a_returned_report_of_another_prediction_or_bad_content_is_refused(tmp_path: Path) -> None:
    prediction = Prediction(instance_id="local__calc-1", model_name_or_path="org/m", model_patch="x")
    other = prediction.model_copy(update={"instance_id": "local__calc-2"})
    ours = prediction_folders(tmp_path, RUN_ID, prediction)[0]
    with pytest.raises(TaskResultRefused, match="of local__calc-2"):
        accept_grading(tmp_path, RUN_ID, prediction, "abc", _payload(other, {}))
    with pytest.raises(TaskResultRefused, match="report"):
        accept_grading(tmp_path, RUN_ID, prediction, "abc", _payload(prediction, {}, input_sha256="forged"))
    with pytest.raises(TaskResultRefused, match="not text"):
        accept_grading(tmp_path, RUN_ID, prediction, "abc", _payload(prediction, {f"{ours}/x": 42}))
    with pytest.raises(TaskResultRefused, match="mapping"):
        accept_grading(tmp_path, RUN_ID, prediction, "abc", ["not", "a", "payload"])
    with pytest.raises(TaskResultRefused, match="malformed"):
        accept_grading(tmp_path, RUN_ID, prediction, "abc", {"report": {"status": "won"}, "files": {}})
    assert list(tmp_path.iterdir()) == [], "nothing of a refused result is written"


def test_one_process_at_a_time_builds_an_image_tag_on_a_machine() -> None:
    tag = f"debatecode/test-lock:{uuid.uuid4().hex}"
    acquired = threading.Event()

    def other_builder() -> None:
        with node_lock(tag):  # its own open file, as another process's would be
            acquired.set()

    with node_lock(tag):
        waiting = threading.Thread(target=other_builder)
        waiting.start()
        assert not acquired.wait(0.3), "a second builder of the same tag waits for the first"
        with node_lock(f"{tag}-other"):
            pass  # another tag is not held up
    assert acquired.wait(5), "it goes on once the first one is done"
    waiting.join()


@pytest.mark.slow
def test_the_cli_exits_2_without_ray_and_3_when_the_address_does_not_answer(tmp_path: Path) -> None:
    dataset = REPO / "benchmarks" / "swebench-local" / "instances.jsonl"
    args = ["bench", "swebench", "--dataset", str(dataset), "--predictions", "gold", "--executor", "ray"]
    args += ["--out", str(tmp_path / "out")]

    # Grading opens no store: the default SQLite store_url must not be refused with a cluster address.
    assert_exits_2_without_ray_and_3_when_the_address_does_not_answer(args, tmp_path)
