"""Kill a real `debatecode solve` with SIGKILL mid-debate, resume it, and compare with an uninterrupted run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml
from tests.cli.crash import kill_when
from tests.cli.helpers import REPO, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")


def _slow_script(tmp_path: Path) -> Path:
    """The shipped replies, each delayed, so the run is long enough to be killed in the middle."""
    script = yaml.safe_load((REPO / "examples" / "replies" / "add.yaml").read_text())
    for item in script["replies"]:
        item["delay"] = 0.25
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(script, sort_keys=False))
    return path


def _turns(db: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(db) as conn:
        try:
            return list(conn.execute("select session_id, seq, key from debate_turns order by session_id, seq"))
        except sqlite3.OperationalError:
            return []  # the store is still being created


def _solve_args(script: Path) -> list[str]:
    return ["solve", ADD, "--model", f"scripted:{script}", "--sandbox", "local", "--no-checkpoints", "--out", "out"]


@pytest.mark.slow
def test_killed_session_resumes_to_the_same_turns(tmp_path: Path) -> None:
    script = _slow_script(tmp_path)
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    clean.mkdir()
    crashed.mkdir()

    done = run_cli(*_solve_args(script), cwd=clean)
    assert done.returncode == 0, done.stdout + done.stderr
    expected = [key for _, _, key in _turns(clean / ".debatecode" / "debatecode.db")]
    assert len(expected) >= 20

    db = crashed / ".debatecode" / "debatecode.db"
    kill_when(_solve_args(script), cwd=crashed, ready=lambda: db.exists() and len(_turns(db)) >= 10)
    before = _turns(db)
    assert 10 <= len(before) < len(expected), "killed mid-debate"
    with sqlite3.connect(db) as conn:
        [(session_id, status)] = list(conn.execute("select id, status from debate_sessions"))
    assert status == "running", "a killed session is left running, not half-written"

    resumed = run_cli("solve", ADD, "--resume", session_id, "--sandbox", "local", "--no-checkpoints", cwd=crashed)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed" in resumed.stdout
    after = _turns(db)
    keys = [key for _, _, key in after]
    assert len(keys) == len(expected), "no turn lost or duplicated"
    assert sorted(keys) == sorted(expected)
    assert [seq for _, seq, _ in after] == list(range(1, len(after) + 1))
    assert [key for _, _, key in after[: len(before)]] == [key for _, _, key in before], (
        "stored turns kept as they were"
    )
    with sqlite3.connect(db) as conn:
        [(status,)] = list(conn.execute("select status from debate_sessions"))
    assert status == "completed"
