"""The ablation report: each variant against the full debate, which may come from the recorded main run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "ablation.py"


def _rows(path: Path, strategy: str, outcomes: dict[int, tuple[bool, int]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"task_id": f"HumanEval/{n}", "strategy": strategy, "passed": ok, "tokens": tokens}) + "\n"
            for n, (ok, tokens) in outcomes.items()
        )
    )


def _table(out: Path, *extra: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--table-only", "--limit", "4", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in (out / "README.md").read_text().splitlines() if line.startswith("| ")]


def test_the_full_debate_is_taken_from_the_main_run_and_only_its_first_problems_count(tmp_path: Path) -> None:
    main = tmp_path / "main" / "results.jsonl"
    # Problems 0-3 count (--limit 4); problem 7 and the single rows must not.
    _rows(main, "debate", {0: (True, 1000), 1: (True, 1000), 2: (False, 2000), 3: (True, 2000), 7: (False, 9)})
    with main.open("a") as handle:
        handle.write(json.dumps({"task_id": "HumanEval/0", "strategy": "single", "passed": False, "tokens": 5}) + "\n")
    _rows(tmp_path / "abl" / "no-critique" / "results.jsonl", "debate", {0: (True, 750), 1: (False, 750)})

    rows = _table(tmp_path / "abl", "--only", "no-critique", "--full-from", str(main))

    full, no_critique = rows[1], rows[2]
    assert full.startswith("| full |") and "| 4 | 3/4 (75.0%) | +0.0 pts | 1,500 | 1.00 |" in full
    assert no_critique.startswith("| no-critique |")
    assert "| 2 | 1/2 (50.0%) | -25.0 pts | 750 | 0.50 |" in no_critique


def test_without_full_from_the_full_variant_is_read_from_its_own_folder(tmp_path: Path) -> None:
    _rows(tmp_path / "abl" / "full" / "results.jsonl", "debate", {0: (True, 100), 1: (True, 100)})
    _rows(tmp_path / "abl" / "no-early-stop" / "results.jsonl", "debate", {0: (True, 300), 1: (False, 300)})

    rows = _table(tmp_path / "abl", "--only", "full,no-early-stop")

    assert "| 2 | 2/2 (100.0%) | +0.0 pts | 100 | 1.00 |" in rows[1]
    assert "| 2 | 1/2 (50.0%) | -50.0 pts | 300 | 3.00 |" in rows[2]
    # Paired on problems 0 and 1: only the full debate passes 1.
    assert rows[1].endswith("| — | — |")
    assert rows[2].endswith("| 1 / 0 | 1 |")


def test_the_v3_set_reads_a_held_out_range_and_reports_time_beside_tokens(tmp_path: Path) -> None:
    main = tmp_path / "main" / "results.jsonl"
    # --start 40 --limit 4: problems 40-43 count; 0 (the design set) and 44 do not.
    _rows(main, "debate", {0: (False, 5), 40: (True, 1000), 41: (False, 3000), 43: (True, 2000), 44: (True, 1)})
    with main.open() as handle:
        rows = [json.loads(line) | {"seconds": 100.0} for line in handle]
    main.write_text("".join(json.dumps(r) + "\n" for r in rows))
    batch_one = tmp_path / "abl" / "draft-batch-1" / "results.jsonl"
    _rows(batch_one, "debate", {40: (True, 1000), 41: (True, 3000)})
    batch_one.write_text(
        "".join(json.dumps(json.loads(line) | {"seconds": 150.0}) + "\n" for line in batch_one.read_text().splitlines())
    )

    lines = _table(
        tmp_path / "abl", "--set", "v3", "--start", "40", "--only", "draft-batch-1", "--full-from", str(main)
    )

    assert lines[1].startswith("| full | the v3 debate")
    assert "| 3 | 2/3 (66.7%) | +0.0 pts | 2,000 | 1.00 | 100 | 1.00 |" in lines[1]
    assert lines[2].startswith("| draft-batch-1 |")
    assert "| 2 | 2/2 (100.0%) | +33.3 pts | 2,000 | 1.00 | 150 | 1.50 |" in lines[2]
