"""The prompt A/B's tables: written from the kept rows alone, with every two variants paired on shared tasks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "prompt_ab.py"


def _row(task: str, variant: str, visible_pass: bool, total: int = 2) -> dict[str, object]:
    return {
        "task": task,
        "variant": variant,
        "visible_pass": visible_pass,
        "passed": total if visible_pass else 0,
        "total": total,
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "seconds": 1.0,
        "text": "",
        "code": "",
    }


def test_the_table_only_readme_pairs_variants_on_the_tasks_both_answered(tmp_path: Path) -> None:
    rows = [
        # A passes where B fails on 0 and 1, B alone on 2; 3 has no visible check; 4 only A answered.
        _row("HumanEval/0", "function-only", True),
        _row("HumanEval/0", "plain", False),
        _row("HumanEval/1", "function-only", True),
        _row("HumanEval/1", "plain", False),
        _row("HumanEval/2", "function-only", False),
        _row("HumanEval/2", "plain", True),
        _row("HumanEval/3", "function-only", True, total=0),
        _row("HumanEval/3", "plain", False, total=0),
        _row("HumanEval/4", "function-only", False),
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--table-only", "--variants", "function-only,plain", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    readme = (tmp_path / "README.md").read_text()
    assert "| `function-only` | `plain` | 3 | 2 | 1 | 2 / 1 | 1 |" in readme
    # The per-variant table counts every answered task, and passes only among those with a check.
    assert "| function-only | 5 | 4 | 2/4 (50.0%) |" in readme
    assert "| plain | 4 | 3 | 1/3 (33.3%) |" in readme
    assert (tmp_path / "results.jsonl").read_text().count("\n") == len(rows), "no row was added"
