"""Identifiers that become paths never lead outside their root (issue 31, item 4).

A SWE-bench dataset's ``instance_id`` used to become a folder as given:
``"/tmp/x/ABSESC"`` wrote ``report.json``, ``patch.diff`` and the logs there, and
``"../../../etc/passwd"`` wrote under the working folder. Every identifier that
names a file or folder (instance ids, model names, run ids, session and debate
ids, HumanEval task ids, ADR slugs) is now checked against
``debatecode.safe_paths.NAME_PATTERN`` (or mapped to a plain name), and the
joined path must resolve under its root. A bad value is a user error (exit 2)
that names the identifier and the pattern, raised before anything is written.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from tests.support.dummy_sandbox import DummySandbox
from typer.testing import CliRunner

from debatecode.bench.swebench import load_instances, load_predictions
from debatecode.bench.swebench.errors import SWEBenchInputError
from debatecode.bench.swebench.harness import model_dir_name
from debatecode.bench.swebench.predictions import Prediction
from debatecode.bench.swebench.remote import prediction_folders, write_returned_files
from debatecode.bench.swebench.report import InstanceReport
from debatecode.bench.swebench.swebench_logs import prediction_log_dir, run_dir, write_instance_logs
from debatecode.cli.app import app
from debatecode.errors import ConfigError, ExitCode, UserError, VersionControlError
from debatecode.safe_paths import MODEL_NAME_PATTERN, NAME_PATTERN, PathOutsideRoot, UnsafeName, path_under

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "benchmarks" / "swebench-local" / "instances.jsonl"
ADD_TASK = REPO / "examples" / "tasks" / "add.md"

TRAVERSALS = [
    "/tmp/x/ABSESC",
    "../../../etc/passwd",
    "..",
    ".",
    "a/../../b",
    "",
    "x\n",
    "x\x00y",
    "-rf",
    "a" * 129,
]
"""Values that must never name a file or folder (absolute, ``..``, separators, control characters, too long)."""


def _dataset(tmp_path: Path, bad_id: str) -> Path:
    """The local dataset with its second instance's id replaced by ``bad_id``."""
    lines = DATASET.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["instance_id"] = bad_id
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n", encoding="utf-8")
    return path


def _files_under(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file())


# -- SWE-bench instance ids ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", [value for value in TRAVERSALS if value.strip()])
def test_a_dataset_instance_id_that_is_a_path_refuses_the_whole_dataset(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(SWEBenchInputError) as caught:
        load_instances(_dataset(tmp_path, bad_id))
    message = str(caught.value)
    assert "field 'instance_id'" in message and NAME_PATTERN in message and repr(bad_id) in message
    assert caught.value.exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize("bad_id", ["ABSESC", "../../../etc/passwd"])
def test_bench_swebench_exits_2_and_writes_nothing_for_a_path_instance_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_id: str
) -> None:
    outside = tmp_path / "outside"
    where = outside / bad_id if bad_id == "ABSESC" else Path(bad_id)
    dataset = _dataset(tmp_path, str(where))
    work = tmp_path / "w" / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["bench", "swebench", "--dataset", str(dataset), "--predictions", "gold", "--out", str(out)],
    )
    flat = " ".join(result.output.split())
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "field 'instance_id'" in flat and "is not a plain folder name" in flat and NAME_PATTERN in flat
    assert not out.exists() and not outside.exists()
    assert _files_under(tmp_path / "w") == []


# -- SWE-bench predictions: instance ids and model names ----------------------------------------------


@pytest.mark.parametrize("bad_model", ["..", "../../x", "/abs/model", ".hidden", "a b", "x\n"])
def test_a_predictions_model_name_that_leaves_out_is_refused(tmp_path: Path, bad_model: str) -> None:
    dataset = load_instances(DATASET)
    path = tmp_path / "preds.jsonl"
    record = {"instance_id": dataset[0].instance_id, "model_name_or_path": bad_model, "model_patch": ""}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(SWEBenchInputError) as caught:
        load_predictions(path, dataset)
    message = str(caught.value)
    assert "field 'model_name_or_path'" in message and MODEL_NAME_PATTERN in message


@pytest.mark.parametrize("bad_id", ["../../../etc/passwd", "/tmp/x/ABSESC", "x\x00y"])
def test_a_predictions_instance_id_that_is_a_path_is_refused_by_pattern(tmp_path: Path, bad_id: str) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(json.dumps({"instance_id": bad_id, "model_name_or_path": "m", "model_patch": ""}) + "\n")
    with pytest.raises(SWEBenchInputError) as caught:
        load_predictions(path, load_instances(DATASET))
    assert "field 'instance_id'" in str(caught.value) and NAME_PATTERN in str(caught.value)


@pytest.mark.parametrize("bad_model", ["..", "", ".", "../x"])
def test_the_harness_never_names_a_folder_after_a_dot_model(bad_model: str) -> None:
    with pytest.raises(UnsafeName):
        model_dir_name(bad_model)


@pytest.mark.parametrize(
    ("model", "instance_id"),
    [("..", "x"), ("m", "../../victim"), ("m", "/tmp/x/ABSESC"), ("../..", "..")],
)
def test_swebench_log_folders_stay_under_out(tmp_path: Path, model: str, instance_id: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(UserError):
        prediction_log_dir(out, "debatecode", model, instance_id)
    prediction = Prediction(instance_id=instance_id, model_name_or_path=model, model_patch="diff")
    report = InstanceReport(instance_id=instance_id, model_name_or_path=model, repo="o/r", status="unresolved")
    with pytest.raises(UserError):
        write_instance_logs(out, "debatecode", prediction, report, None)
    assert _files_under(tmp_path) == []


def test_a_link_inside_out_cannot_carry_the_logs_outside(tmp_path: Path) -> None:
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "run_evaluation").symlink_to(elsewhere)
    with pytest.raises(PathOutsideRoot, match="resolves outside"):
        prediction_log_dir(out, "debatecode", "m", "inst-1")


def test_a_ray_result_for_a_path_instance_id_empties_no_folder_outside_out(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    prediction = Prediction(instance_id="../../victim", model_name_or_path="m", model_patch="")
    with pytest.raises(UnsafeName):
        folders = prediction_folders(out, "debatecode", prediction)
        write_returned_files(out, {}, folders)  # empties each folder before writing: outside, were it allowed
    assert (victim / "keep.txt").read_text() == "mine"


# -- run ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad_run_id", TRAVERSALS)
def test_a_run_id_that_is_a_path_is_a_config_error(tmp_path: Path, bad_run_id: str) -> None:
    with pytest.raises(ConfigError, match="--run-id"):
        run_dir(tmp_path, bad_run_id)


# -- session ids (code debates: worktree and branch; design debates: their folder) --------------------


@pytest.mark.parametrize("bad_id", ["../../escape", "/tmp/x/ABSESC", "x\n", ".."])
def test_a_code_debate_session_id_that_is_a_path_creates_nothing(tmp_path: Path, bad_id: str) -> None:
    from debatecode.config import load_config
    from debatecode.llm.client import LLMClient
    from debatecode.protocol.engine import DebateEngine
    from debatecode.store import open_store
    from debatecode.task import load_task

    config = load_config(
        overrides={
            "model": "scripted/never-called",
            "out": tmp_path / "out",
            "store_url": f"sqlite:///{tmp_path}/s.db",
        },
        use_file=False,
    )
    store = open_store(config.store_url)
    try:
        engine = DebateEngine(config, llm=LLMClient(config.llm), sandbox=DummySandbox(), store=store)
        with pytest.raises(UnsafeName, match="session id"):
            asyncio.run(engine.solve(load_task(ADD_TASK), session_id=bad_id))
        assert store.list_sessions() == [], "no session is stored for an id that was refused"
    finally:
        store.close()
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize("bad_id", ["../escape", "x\n", "..", ""])
def test_a_design_debate_id_that_is_a_path_is_refused(tmp_path: Path, bad_id: str) -> None:
    from debatecode.protocol.design.files import DebateFiles

    with pytest.raises(UnsafeName, match="debate id"):
        DebateFiles(tmp_path, bad_id)


def test_a_worktrees_link_out_of_the_repository_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from debatecode.vcs import VersionRepository

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repository = VersionRepository(tmp_path / "out")
    try:
        (tmp_path / "out" / ".worktrees").symlink_to(elsewhere)
        with pytest.raises(VersionControlError, match="resolves outside"):
            repository.open_session("abc123")
    finally:
        repository.close()
    assert os.listdir(elsewhere) == []


# -- names that are mapped, not checked: HumanEval task ids and ADR slugs ---------------------------


@pytest.mark.parametrize("task_id", TRAVERSALS)
def test_a_humaneval_task_id_maps_to_one_plain_folder(tmp_path: Path, task_id: str) -> None:
    from debatecode.bench.humaneval.results_folder import slug

    folder = slug(task_id)
    assert "/" not in folder and folder not in (".", "..") and "\x00" not in folder
    if folder:
        path_under(tmp_path, "runs", "vote", folder, what="session")


@pytest.mark.parametrize("title", ["../../../etc/passwd", "/tmp/x/ABSESC", "..", "x\x00y"])
def test_an_adr_slug_cannot_leave_the_decisions_folder(tmp_path: Path, title: str) -> None:
    from debatecode.protocol.design.adr import write_adr
    from debatecode.protocol.design.records import DecisionRecord, Recommendation

    record = DecisionRecord(
        number=0,
        slug=title,
        title=title,
        date="2025-12-05",
        debate_id="d1",
        question="Which?",
        perspectives=[],
        recommendation=Recommendation(text="This one.", confidence="LOW", confidence_reason="a test"),
    )
    written = write_adr(tmp_path, record)
    assert written.parent == tmp_path / "docs" / "decisions"
    assert _files_under(tmp_path) == [written]
