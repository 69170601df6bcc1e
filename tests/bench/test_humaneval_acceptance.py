"""benchmarks/humaneval_acceptance.py: issue 32's acceptance lines from a run's folder, met, not met, or not yet."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "humaneval_acceptance.py"


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _sample(task: str, index: int, passed: bool, visible: int) -> dict[str, Any]:
    return {
        "task_id": task, "index": index, "passed": passed, "visible": [visible, 1], "behaviour": [],
        "code_key": f"{task}-{index}", "completion": "", "tokens": 100, "calls": 1, "seconds": 1.0,
    }  # fmt: skip


def _lines(folder: Path, *extra: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), *extra], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| target")]
    return {line.split(" | ")[0].removeprefix("| "): line for line in table}


def test_a_partial_run_says_what_is_not_yet_measurable_and_reads_its_wall_log(tmp_path: Path) -> None:
    _write(
        tmp_path / "results.jsonl",
        [
            {"task_id": "HumanEval/0", "strategy": "debate", "passed": True, "tokens": 900},
            {"task_id": "HumanEval/1", "strategy": "debate", "passed": False, "tokens": 1100},
        ],
    )
    # Problem 0: the visible test picks sample 1, which passes; problem 1: nothing passes (mean spend: 150).
    _write(
        tmp_path / "vote-samples.jsonl",
        [_sample("HumanEval/0", 0, False, 0), _sample("HumanEval/0", 1, True, 1), _sample("HumanEval/1", 0, False, 1)],
    )
    (tmp_path / "wall.log").write_text("# a note\nstart 100 x\nstop 3700 x\nstart 4000 x\nstop 7600 x\n")

    lines = _lines(tmp_path, "--wall", str(tmp_path / "wall.log"))

    assert lines[">= 155/164 problems with a visible test"].endswith("| **yes** |")
    assert "| 2/2 (100.0%)" not in lines["debate >= 75% on all 164"]
    assert "1/2 (50.0%), 1,000 tokens per problem | not yet measurable |" in lines["debate >= 75% on all 164"]
    assert "1/2 (50.0%), 150 tokens per problem | not yet measurable |" in lines["vote@10 (shared ranking) >= 72%"]
    assert (
        "| 2.00 h computed, still running (no report.md yet) | not yet measurable |"
        in lines["the whole run <= 8 h of wall time"]
    )


def test_vote_is_named_by_the_samples_drawn_until_the_run_has_written_its_report(tmp_path: Path) -> None:
    _write(
        tmp_path / "results.jsonl", [{"task_id": "HumanEval/0", "strategy": "debate", "passed": True, "tokens": 700}]
    )
    # Five samples of 100 tokens drawn so far: the debate's 700 tokens match seven samples.
    _write(tmp_path / "vote-samples.jsonl", [_sample("HumanEval/0", i, i == 4, int(i == 4)) for i in range(5)])
    (tmp_path / "wall.log").write_text("start 0 x\nstop 3600 x\n")

    running = _lines(tmp_path, "--wall", str(tmp_path / "wall.log"))

    assert "vote@10 so far (5-5 samples per problem drawn): 1/1 (100.0%)" in running["vote@10 (shared ranking) >= 72%"]
    assert running["vote@10 (shared ranking) >= 72%"].endswith("| not yet measurable |")
    assert (
        "best other: vote@7 so far (5-5 samples per problem drawn) (matched spend)"
        in running["debate ahead of the best non-debate strategy at matched spend, McNemar p < 0.05"]
    )
    assert "still running" in running["the whole run <= 8 h of wall time"]
    split = _lines(tmp_path)
    assert "vote@5" in split and "vote@10 so far (5-5 samples per problem drawn)" in split

    (tmp_path / "report.md").write_text("# done\n")
    ended = _lines(tmp_path, "--wall", str(tmp_path / "wall.log"))

    assert ended["vote@10 (shared ranking) >= 72%"].startswith("| vote@10 (shared ranking) >= 72% | vote@10: 1/1")
    assert (
        "best other: vote@7 (matched spend)"
        in ended["debate ahead of the best non-debate strategy at matched spend, McNemar p < 0.05"]
    )
    assert ended["the whole run <= 8 h of wall time"].endswith("| 1.00 h computed | **yes** |")


def test_a_finished_run_names_vote_by_the_n_its_report_chose_not_by_an_estimate(tmp_path: Path) -> None:
    _write(
        tmp_path / "results.jsonl", [{"task_id": "HumanEval/0", "strategy": "debate", "passed": True, "tokens": 700}]
    )
    # The debate's 700 tokens would estimate seven samples of 100, but the bench's search stopped at five.
    _write(tmp_path / "vote-samples.jsonl", [_sample("HumanEval/0", i, i == 4, int(i == 4)) for i in range(5)])
    (tmp_path / "report.md").write_text(
        "## Equal spend\n\n| strategy | chosen | mean tokens spent |\n|---|---|---|\n| vote | N = 5 | 500 |\n"
    )

    lines = _lines(tmp_path)

    rival = lines["debate ahead of the best non-debate strategy at matched spend, McNemar p < 0.05"]
    assert "best other: vote@5 (matched spend) 1/1 (100.0%) at 500 tokens" in rival
    assert "vote@7" not in "".join(lines.values())


def test_a_running_run_past_eight_hours_has_already_missed_the_wall_time_line(tmp_path: Path) -> None:
    _write(tmp_path / "results.jsonl", [{"task_id": "HumanEval/0", "strategy": "debate", "passed": True, "tokens": 9}])
    (tmp_path / "wall.log").write_text("start 0 x\nstop 30600 x\n")

    lines = _lines(tmp_path, "--wall", str(tmp_path / "wall.log"))

    assert lines["the whole run <= 8 h of wall time"].endswith(
        "| 8.50 h computed, still running (no report.md yet) | **no** |"
    )


def test_a_folder_without_results_is_refused_with_what_to_give(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "has no results.jsonl" in done.stderr


def test_the_split_table_counts_the_design_set_apart_from_the_held_out_problems(tmp_path: Path) -> None:
    _write(
        tmp_path / "results.jsonl",
        [
            {"task_id": "HumanEval/3", "strategy": "debate", "passed": True, "tokens": 100},
            {"task_id": "HumanEval/50", "strategy": "debate", "passed": True, "tokens": 100},
            {"task_id": "HumanEval/51", "strategy": "debate", "passed": False, "tokens": 100},
            {"task_id": "HumanEval/3", "strategy": "single", "passed": False, "tokens": 10},
            {"task_id": "HumanEval/50", "strategy": "single", "passed": False, "tokens": 10},
            {"task_id": "HumanEval/51", "strategy": "single", "passed": False, "tokens": 10},
        ],
    )

    lines = _lines(tmp_path, "--split", "10")

    assert lines["debate"].startswith("| debate | 1/1 (100.0%) | 1/2 (50.0%) | 2/3 (66.7%) | 100 | - |")
    # On the held-out 50 and 51 only: the debate alone passes 50, neither passes 51.
    assert lines["single"] == "| single | 0/1 (0.0%) | 0/2 (0.0%) | 0/3 (0.0%) | 10 | 1 / 0, p = 1 |"


def test_a_start_with_no_stop_yet_counts_up_to_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("humaneval_acceptance", SCRIPT)
    assert spec is not None and spec.loader is not None
    acceptance = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, acceptance)  # its dataclasses look their module up
    spec.loader.exec_module(acceptance)
    log = tmp_path / "wall.log"
    log.write_text("start 0 x\nstop 3600 x\nstart 10000 x\n")

    assert acceptance.wall_hours(log, now=10000 + 1800) == 1.5
    assert acceptance.wall_hours(log, now=10000 + 7200) == 3.0
    log.write_text("start 0 x\nstop 3600 x\n")
    assert acceptance.wall_hours(log, now=99999) == 1.0
