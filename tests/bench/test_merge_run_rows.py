"""benchmarks/merge_run_rows.py: a helper stream's rows join the main run's folder once each, or not at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "merge_run_rows.py"


def _row(n: int, strategy: str, completion: str = "return 1", passed: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": f"HumanEval/{n}",
        "strategy": strategy,
        "completion": completion,
        "passed": passed,
        "tokens": 100,
        **extra,
    }


def _sample(n: int, index: int, completion: str = "return 1") -> dict[str, Any]:
    return {"task_id": f"HumanEval/{n}", "index": index, "completion": completion, "passed": True, "tokens": 50}


def _write(path: Path, rows: list[dict[str, Any]], tail: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail, encoding="utf-8")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _merge(helper: Path, main: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(helper), str(main), *extra], capture_output=True, text=True, check=False
    )


def test_new_rows_and_samples_are_appended_once_and_a_rerun_adds_nothing(tmp_path: Path) -> None:
    helper, main = tmp_path / "helper", tmp_path / "main"
    _write(main / "results.jsonl", [_row(0, "single"), _row(0, "debate"), _row(1, "debate")])
    _write(main / "vote-samples.jsonl", [_sample(0, 0)])
    # The helper ran /1 too (the same answer), /2 and /3 new, and is still writing /4's row.
    _write(
        helper / "results.jsonl",
        [_row(1, "debate", seconds=9.0), _row(2, "debate"), _row(3, "debate", passed=False)],
        tail='{"task_id": "HumanEval/4", "stra',
    )
    _write(helper / "vote-samples.jsonl", [_sample(0, 0), _sample(2, 0), _sample(2, 1)])

    done = _merge(helper, main)
    assert done.returncode == 0, done.stderr
    assert "results.jsonl: 2 new, 1 held by both, 0 of those differ" in done.stdout
    assert "vote-samples.jsonl: 2 new, 1 held by both, 0 of those differ" in done.stdout
    keys = [(r["task_id"], r["strategy"]) for r in _read(main / "results.jsonl")]
    assert keys == [
        ("HumanEval/0", "single"),
        ("HumanEval/0", "debate"),
        ("HumanEval/1", "debate"),
        ("HumanEval/2", "debate"),
        ("HumanEval/3", "debate"),
    ]
    samples = [(r["task_id"], r["index"]) for r in _read(main / "vote-samples.jsonl")]
    assert samples == [("HumanEval/0", 0), ("HumanEval/2", 0), ("HumanEval/2", 1)]
    assert len(list(main.glob("results.jsonl.before-merge-*"))) == 1

    again = _merge(helper, main)
    assert again.returncode == 0
    assert "nothing new to merge" in again.stdout
    assert len(_read(main / "results.jsonl")) == 5


def test_streams_that_disagree_on_a_shared_problem_merge_nothing(tmp_path: Path) -> None:
    helper, main = tmp_path / "helper", tmp_path / "main"
    _write(main / "results.jsonl", [_row(1, "debate", completion="return 1")])
    _write(helper / "results.jsonl", [_row(1, "debate", completion="return 2"), _row(2, "debate")])
    before = (main / "results.jsonl").read_bytes()

    done = _merge(helper, main)
    assert done.returncode == 1
    assert "do not trust the split" in done.stderr
    assert (main / "results.jsonl").read_bytes() == before
    assert not list(main.glob("*.before-merge-*"))


def test_strategy_option_takes_only_that_strategys_rows(tmp_path: Path) -> None:
    helper, main = tmp_path / "helper", tmp_path / "main"
    _write(main / "results.jsonl", [])
    _write(helper / "results.jsonl", [_row(5, "debate"), _row(5, "single")])

    done = _merge(helper, main, "--strategy", "debate")
    assert done.returncode == 0, done.stderr
    assert [(r["task_id"], r["strategy"]) for r in _read(main / "results.jsonl")] == [("HumanEval/5", "debate")]


def test_a_main_file_with_an_unfinished_line_is_refused_untouched(tmp_path: Path) -> None:
    helper, main = tmp_path / "helper", tmp_path / "main"
    _write(main / "results.jsonl", [_row(0, "debate")], tail='{"task_id": "Hum')
    _write(helper / "results.jsonl", [_row(2, "debate")])
    before = (main / "results.jsonl").read_bytes()

    done = _merge(helper, main)
    assert done.returncode != 0
    assert "unfinished line" in done.stderr
    assert (main / "results.jsonl").read_bytes() == before


def _attempt(n: int, cap: int, completion: str = "return 1") -> dict[str, Any]:
    return {
        "task_id": f"HumanEval/{n}",
        "strategy": "reflexion",
        "completion": completion,
        "passed": False,
        "tokens": 900,
        "reflexion": {"max_attempts": cap, "attempts_used": cap},
    }


def test_reflexion_runs_at_other_caps_merge_by_problem_and_cap(tmp_path: Path) -> None:
    helper, main = tmp_path / "helper", tmp_path / "main"
    _write(main / "results.jsonl", [_row(0, "reflexion")])
    _write(main / "reflexion-attempts.jsonl", [_attempt(0, 10)])
    # /0 at cap 10 again (the same run), /0 at cap 7 and /1 at cap 10 are new.
    _write(helper / "reflexion-attempts.jsonl", [_attempt(0, 10), _attempt(0, 7), _attempt(1, 10)])

    done = _merge(helper, main)
    assert done.returncode == 0, done.stderr
    assert "reflexion-attempts.jsonl: 2 new, 1 held by both, 0 of those differ" in done.stdout
    runs = [(r["task_id"], r["reflexion"]["max_attempts"]) for r in _read(main / "reflexion-attempts.jsonl")]
    assert runs == [("HumanEval/0", 10), ("HumanEval/0", 7), ("HumanEval/1", 10)]


def test_reflexion_runs_that_disagree_at_one_cap_merge_nothing(tmp_path: Path) -> None:
    helper, main = tmp_path / "helper", tmp_path / "main"
    _write(main / "reflexion-attempts.jsonl", [_attempt(0, 10, completion="return 1")])
    _write(helper / "reflexion-attempts.jsonl", [_attempt(0, 10, completion="return 2"), _attempt(1, 10)])
    before = (main / "reflexion-attempts.jsonl").read_bytes()

    done = _merge(helper, main)
    assert done.returncode == 1
    assert (main / "reflexion-attempts.jsonl").read_bytes() == before
