"""``debatecode bench swebench``: the real console script end to end (Docker), and clear errors (no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.bench_swebench.graded_output import without_timings
from tests.cli.helpers import run_cli
from typer.testing import CliRunner

from debatecode.bench.swebench import SWEBenchInstance
from debatecode.cli.app import app

from .conftest import DATASET, LOCAL


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["bench", "swebench", *args])
    return result.exit_code, result.output


@pytest.mark.docker
def test_gold_then_empty_through_the_console_script(
    requires_docker: None, tmp_path: Path, local_instances: list[SWEBenchInstance]
) -> None:
    ids = "debatecode-local__strutils-2,debatecode-local__confparse-1"
    gold = run_cli(
        "bench", "swebench", "--dataset", str(DATASET), "--predictions", "gold", "--instances", ids,
        "--out", str(tmp_path / "gold"), cwd=tmp_path,
    )  # fmt: skip
    assert gold.returncode == 0, gold.stderr
    assert "gold: 2/2 resolved (100%)" in gold.stdout and "2/2 resolved in" in gold.stdout
    assert "debatecode-local__confparse-1" in gold.stdout, "the summary table names the instances"
    summary = json.loads((tmp_path / "gold" / "summary.json").read_text())
    assert (summary["total"], summary["resolved"], summary["source"]) == (2, 2, "gold")
    empty = run_cli(
        "bench", "swebench", "--dataset", str(DATASET), "--repos-dir", str(LOCAL / "repos"),
        "--predictions", "empty", "--instances", "debatecode-local__confparse-1", "--out", str(tmp_path / "empty"),
        cwd=tmp_path,
    )  # fmt: skip
    assert empty.returncode == 0, empty.stderr
    assert "empty: 0/1 resolved (0%); 1 unresolved" in empty.stdout
    report = tmp_path / "empty" / "empty" / "debatecode-local__confparse-1" / "report.json"
    assert json.loads(report.read_text())["status"] == "unresolved"


def test_a_malformed_dataset_names_its_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "set.jsonl"
    bad.write_text(DATASET.read_text().splitlines()[0] + "\n{oops\n")
    code, output = _invoke("--dataset", str(bad), "--predictions", "gold")
    assert code == 2 and f"{bad}:2: not valid JSON" in output.replace("\n", "")


def test_an_unknown_instance_and_a_missing_repos_dir_are_user_errors(tmp_path: Path) -> None:
    code, output = _invoke("--dataset", str(DATASET), "--predictions", "gold", "--instances", "nope")
    assert code == 2 and "unknown instance id(s): nope" in output
    code, output = _invoke(
        "--dataset", str(DATASET), "--predictions", "gold", "--repos-dir", str(tmp_path), "--out", str(tmp_path / "o")
    )
    flat = output.replace("\n", "")
    assert code == 2 and "no source for repository 'debatecode-local/strutils'" in flat and "--repos-dir" in flat


def test_solve_flags_with_predictions_are_refused(tmp_path: Path) -> None:
    code, output = _invoke("--dataset", str(DATASET), "--predictions", "gold", "--model", "scripted/x")
    assert code == 2 and "--model only apply to solve mode" in output.replace("\n", "")
    code, output = _invoke("--dataset", str(DATASET), "--strategy", "vote", "--out", str(tmp_path))
    assert code == 2 and "unknown --strategy 'vote'; known: single, debate" in output.replace("\n", "")


def test_a_bad_predictions_file_is_a_user_error(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"instance_id": "debatecode-local__strutils-1", "model_name_or_path": "m"}\n')
    code, output = _invoke("--dataset", str(DATASET), "--predictions", str(path))
    assert code == 2 and "field 'model_patch': missing" in output.replace("\n", "")


@pytest.mark.docker
def test_solve_mode_writes_predictions_then_grades_them(
    requires_docker: None, isolated_cwd: Path, local_instances: list[SWEBenchInstance]
) -> None:
    from debatecode.llm import ScriptedModel, register_scripted, unregister_scripted

    instance = next(i for i in local_instances if i.instance_id.endswith("confparse-1"))
    register_scripted("cli-solve", ScriptedModel(fn=lambda messages, tags: f"```diff\n{instance.patch}```\n"))
    try:
        code, output = _invoke(
            "--dataset", str(DATASET), "--instances", instance.instance_id, "--model", "scripted/cli-solve",
            "--strategy", "single", "--out", str(isolated_cwd / "out"),
        )  # fmt: skip
    finally:
        unregister_scripted("cli-solve")
    assert code == 0, output
    [line] = (isolated_cwd / "out" / "predictions.jsonl").read_text().splitlines()
    prediction = json.loads(line)
    assert prediction["instance_id"] == instance.instance_id and prediction["model_patch"]
    summary = json.loads((isolated_cwd / "out" / "summary.json").read_text())
    assert (summary["total"], summary["resolved"]) == (1, 1), output
    assert summary["source"] == "solve:single:scripted/cli-solve"


_TIMINGS = {"durations", "duration_s", "build_s", "built"}


def _results(out: Path) -> dict[str, object]:
    """``results.jsonl`` by (model, instance), timings (and which run built a shared image) left out."""
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {f"{r['model_name_or_path']}/{r['instance_id']}": without_timings(r, _TIMINGS) for r in records}


def _swebench_files(out: Path) -> dict[str, str]:
    """swebench's reports, run logs and patches (test_output.txt has pytest's timings)."""
    found = sorted(out.glob("logs/run_evaluation/*/*/*/*")) + sorted(out.glob("*.json"))
    return {
        str(path.relative_to(out)): path.read_text()
        for path in found
        if path.name not in ("summary.json", "test_output.txt")
    }


@pytest.mark.docker
def test_max_workers_2_grades_gold_like_jobs_1(requires_docker: None, tmp_path: Path) -> None:
    ids = "debatecode-local__strutils-1,debatecode-local__strutils-2,debatecode-local__confparse-1"
    runs = {}
    for name, flag in (("one", ["--jobs", "1"]), ("two", ["--max-workers", "2"])):
        proc = run_cli(
            "bench", "swebench", "--dataset", str(DATASET), "--predictions", "gold", "--instances", ids,
            "--out", str(tmp_path / name), "--run-id", "gold-check", *flag, cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "gold: 3/3 resolved (100%)" in proc.stdout
        runs[name] = tmp_path / name
    assert "grading (2 at once)" in proc.stdout
    assert _results(runs["two"]) == _results(runs["one"])
    assert _swebench_files(runs["two"]) == _swebench_files(runs["one"])
    report = json.loads((runs["two"] / "gold.gold-check.json").read_text())
    assert report["resolved_ids"] == sorted(ids.split(",")) and report["error_ids"] == []
    resumed = run_cli(
        "bench", "swebench", "--dataset", str(DATASET), "--predictions", "gold", "--instances", ids,
        "--out", str(runs["two"]), "--run-id", "gold-check", "-j", "2", cwd=tmp_path,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "3 of them graded by an earlier run" in resumed.stdout
    assert len((runs["two"] / "results.jsonl").read_text().splitlines()) == 3


def test_jobs_below_1_and_a_run_id_with_a_slash_are_refused(tmp_path: Path) -> None:
    code, output = _invoke("--dataset", str(DATASET), "--predictions", "gold", "--max-workers", "0")
    flat = " ".join(output.replace("│", " ").split())
    assert code == 2 and "'--max-workers': Input should be greater than or equal to 1" in flat
    code, output = _invoke(
        "--dataset", str(DATASET), "--predictions", "gold", "--run-id", "a/b", "--out", str(tmp_path)
    )
    assert code == 2 and "--run-id 'a/b' is not a plain folder name" in output.replace("\n", "")
