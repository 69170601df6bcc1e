"""One scripted ``debatecode solve`` of add.md, run once per test session and shared by the CLI tests that inspect it.

The run takes the shipped replies on the local sandbox, as a user would type it, with the
hashing memory embedder (``HASHING_MEMORY``): these tests inspect the session, its audit
trail and replays, not memory. Tests only read ``solved_add.folder``; a test that writes
to the store (``sessions replay`` adds a session) works in its own copy from
``solved_add.copy_to``.
"""

from __future__ import annotations

import sqlite3

import pytest
from tests.cli.helpers import HASHING_MEMORY, REPO, SolvedAdd, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")


@pytest.fixture(scope="session")
def solved_add(tmp_path_factory: pytest.TempPathFactory) -> SolvedAdd:
    folder = tmp_path_factory.mktemp("solved-add")
    proc = run_cli(
        "solve",
        ADD,
        "--model",
        f"scripted:{REPLIES}",
        "--sandbox",
        "local",
        "--out",
        "out",
        cwd=folder,
        env=HASHING_MEMORY,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with sqlite3.connect(folder / ".debatecode" / "debatecode.db") as conn:
        (session_id,) = conn.execute("select id from debate_sessions").fetchone()
    return SolvedAdd(folder, str(session_id), proc)
