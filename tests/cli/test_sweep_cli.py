"""`debatecode sweep` through the real CLI: a table, a plot and stored sessions; then memory search finds them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import REPO, run_cli

SUM = str(REPO / "examples" / "tasks" / "sum_range.md")
REPLIES = str(REPO / "examples" / "replies" / "sum_range_reflexion.yaml")


def test_sweep_over_max_attempts_writes_table_plot_and_runs(tmp_path: Path) -> None:
    (tmp_path / "debatecode.toml").write_text('[memory]\nembedder = "hashing"\n')
    proc = run_cli(
        "sweep",
        SUM,
        "--set",
        "reflexion.max_attempts=1,2",
        "--set",
        "strategy=reflexion",
        "--set",
        "agents=1",
        "--model",
        f"scripted:{REPLIES}",
        "--sandbox",
        "local",
        "--out",
        "sw",
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = (tmp_path / "sw" / "sweep.md").read_text()
    assert "| max_attempts | strategy | agents | runs | pass rate |" in table.replace(
        "reflexion.max_attempts", "max_attempts"
    )
    rows = [line for line in table.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert len(rows) == 2 and all("| 1.00 |" in row for row in rows), table
    assert "Command: `debatecode sweep" in table
    png = (tmp_path / "sw" / "sweep.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    runs = [json.loads(line) for line in (tmp_path / "sw" / "sweep.jsonl").read_text().splitlines()]
    assert [r["values"]["reflexion.max_attempts"] for r in runs] == [1, 2]
    assert all(r["all_passed"] and r["calls"] >= 3 and r["tokens"] > 0 for r in runs)

    search = run_cli("memory", "search", "off by one", cwd=tmp_path)
    assert search.returncode == 0, search.stderr
    assert "2 episodes for 'off by one'" in search.stdout
    assert "Sum of an inclusive range" in search.stdout and "sum_range(1, 4) returned 6" in search.stdout
    listing = run_cli("memory", "list", cwd=tmp_path)
    assert listing.returncode == 0 and listing.stdout.count("agent-1") >= 2


def test_sweep_rejects_a_bad_key_before_running(tmp_path: Path) -> None:
    proc = run_cli("sweep", SUM, "--set", "reflexion.max_attempt=1,2", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2
    assert "reflexion.max_attempt" in proc.stderr
    assert not (tmp_path / "sweep-out" / "sweep.md").exists()
