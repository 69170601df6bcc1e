"""A stop request ends ``debatecode solve`` within seconds, even while a step blocks in C code for a minute.

``blocking_cli.py`` makes one step hash for a minute with the GIL released, as a tokenizer on a
20 MB task does, either in a worker thread (which ``asyncio.run`` used to wait for on the way out,
for minutes, through any number of SIGTERMs) or in the main thread (where no Python signal handler
runs until the call returns). The stopped session is ``cancelled`` and ``--resume`` completes it.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from tests.cli import blocking_cli
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli

from debatecode.cli.forced_stop import STOP_GRACE_S

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")
SOLVE = ["solve", ADD, "--model", f"scripted:{REPLIES}", "--sandbox", "local", "--no-checkpoints", "--out", "out"]
SLACK_S = 4.0
"""Time allowed beyond the grace period: settling the session, exiting."""


def start_blocked(tmp_path: Path, where: str) -> subprocess.Popen[bytes]:
    """``debatecode solve add.md`` with one step blocked for a minute, once it is blocked there."""
    return blocking_cli.start_blocked(tmp_path, where, SOLVE, name="solve")


def stopped_within(proc: subprocess.Popen[bytes], limit_s: float) -> float:
    started = time.monotonic()
    try:
        proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {limit_s:g}s after the stop request")
    return time.monotonic() - started


def stored_session(tmp_path: Path) -> tuple[str, str]:
    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as conn:
        [(session_id, status)] = list(conn.execute("select id, status from debate_sessions"))
    return str(session_id), str(status)


def assert_resumes(tmp_path: Path, session_id: str) -> None:
    resumed = run_cli(
        "solve", ADD, "--resume", session_id, "--sandbox", "local", "--no-checkpoints", cwd=tmp_path, env=HASHING_MEMORY
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert stored_session(tmp_path) == (session_id, "completed")


@pytest.mark.slow
def test_sigterm_during_a_step_blocked_in_a_worker_thread_stops_within_seconds_and_resumes(tmp_path: Path) -> None:
    proc = start_blocked(tmp_path, "worker")
    proc.send_signal(signal.SIGTERM)
    stopped_within(proc, STOP_GRACE_S + SLACK_S)
    stderr = (tmp_path / "solve.stderr").read_text()
    assert proc.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr, stderr
    session_id, status = stored_session(tmp_path)
    assert status == "cancelled", stderr
    assert_resumes(tmp_path, session_id)


def test_sigterm_during_a_step_blocked_in_the_main_thread_settles_the_session_and_stops(tmp_path: Path) -> None:
    proc = start_blocked(tmp_path, "main")
    proc.send_signal(signal.SIGTERM)
    stopped_within(proc, STOP_GRACE_S + SLACK_S)
    stderr = (tmp_path / "solve.stderr").read_text()
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    session_id, status = stored_session(tmp_path)
    # The graceful path never ran (no Python handler runs in the blocked main thread): the watchdog settled it.
    assert status == "cancelled" and f"session {session_id} stored as cancelled" in stderr, stderr
    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as conn:
        assert list(conn.execute("select session_id from session_leases")) == [], "its lease is dropped for --resume"


def test_a_second_sigterm_ends_a_blocked_solve_at_once(tmp_path: Path) -> None:
    proc = start_blocked(tmp_path, "main")
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert stopped_within(proc, SLACK_S) < STOP_GRACE_S
    stderr = (tmp_path / "solve.stderr").read_text()
    assert proc.returncode == 130 and "second stop request" in stderr, stderr
    assert stored_session(tmp_path)[1] == "cancelled"
