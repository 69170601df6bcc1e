"""A writer killed with SIGKILL mid-session leaves a consistent, usable store, on either backend."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from debatecode.store import open_store
from debatecode.store.records import TurnRecord

WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from debatecode.store.records import SessionRecord, TurnRecord
    from debatecode.store import open_store
    from debatecode.store.models import TurnRow, row_values

    url = sys.argv[1]
    store = open_store(url)
    store.create_session(
        SessionRecord(id="crashed", task_title="t", task_path="t.md", task_hash="h", status="running")
    )
    for seq in (1, 2):
        store.add_turn(TurnRecord(
            id=f"turn-{seq}", session_id="crashed", seq=seq, key=f"k{seq}", round=1,
            phase="proposal", agent_id=f"agent-{seq}", agent_role="proposer", content="x" * 5000,
        ))
    # A third turn is being written when the process dies: it must leave no trace.
    with store._writers.begin() as db:
        db.add(TurnRow(**row_values(TurnRecord(
            id="turn-3", session_id="crashed", seq=3, key="k3", round=1,
            phase="critique", agent_id="agent-1", agent_role="critic",
        ))))
        db.flush()
        print("dying", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_store_is_usable_after_a_writer_is_killed_mid_session(
    store_url: str, backend: str, db_path: Path, make_turn: Callable[..., TurnRecord]
) -> None:
    url = store_url
    result = subprocess.run([sys.executable, "-c", WRITER, url], capture_output=True, text=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert result.stdout.strip() == "dying"

    with open_store(url) as store:
        session = store.get_session("crashed")
        assert session.status == "running"
        turns = store.turns("crashed")
        assert [turn.id for turn in turns] == ["turn-1", "turn-2"]
        assert all(len(turn.content) == 5000 for turn in turns)
        assert [turn.seq for turn in turns] == [1, 2]
        store.add_turn(make_turn("crashed", 3))
        store.update_session("crashed", status="failed", error="writer killed")
        assert len(store.turns("crashed")) == 3

    if backend != "sqlite":
        return
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
