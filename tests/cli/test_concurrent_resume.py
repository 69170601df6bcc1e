"""Two ``--resume`` of one session at once: the second is refused at once, naming the process that resumes it.

It used to run on and die with "UNIQUE constraint failed" when both wrote the same turn. (Once that
process is gone, its lease is stale and the next ``--resume`` takes it over: ``tests/store/test_session_leases.py``,
and ``tests/e2e/test_crash_resume.py`` resumes a SIGKILLed run.)
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest
from tests.cli.blocking_cli import start_blocked
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")
FLAGS = ["--sandbox", "local", "--no-checkpoints"]


def status_of(folder: Path) -> tuple[str, str]:
    with sqlite3.connect(folder / ".debatecode" / "debatecode.db") as conn:
        [(session_id, status)] = list(conn.execute("select id, status from debate_sessions"))
    return str(session_id), str(status)


@pytest.mark.slow
def test_a_second_resume_is_refused_naming_the_process_that_resumes(tmp_path: Path) -> None:
    first = start_blocked(tmp_path, "main", ["solve", ADD, "--model", f"scripted:{REPLIES}", *FLAGS], name="first")
    first.send_signal(signal.SIGTERM)
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=30) == 130
    session_id, status = status_of(tmp_path)
    assert status == "cancelled"

    resuming = start_blocked(tmp_path, "main", ["solve", ADD, "--resume", session_id, *FLAGS], name="resuming")
    try:
        second = run_cli("solve", ADD, "--resume", session_id, *FLAGS, cwd=tmp_path, env=HASHING_MEMORY, timeout=120)
        assert second.returncode == 3, second.stdout + second.stderr  # valid, and it works once the other ends
        said = " ".join(second.stderr.split())
        assert f"this session ({session_id}) is already being resumed (pid {resuming.pid})" in said, said
        assert "UNIQUE" not in said and "Traceback" not in said
        assert status_of(tmp_path)[1] == "running", "the refused resume leaves the running one alone"
    finally:
        resuming.kill()
        resuming.wait()
