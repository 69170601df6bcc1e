"""Several processes writing to one PostgreSQL store at once (the Ray case) lose and duplicate nothing.

The processes start together on an empty database, so their first opens also
race to migrate it (an advisory lock lets one in at a time).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from debatecode.store import open_store

REPO_ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 4
TURNS_EACH = 25

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from debatecode.errors import StoreError
    from debatecode.store.records import SessionRecord, TurnRecord
    from debatecode.store import open_store

    url, worker, turns, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    while not go.exists():
        time.sleep(0.01)
    with open_store(url) as store:
        own = f"own-{worker}"
        store.create_session(SessionRecord(id=own, task_title="t", task_path="t.md", task_hash="h"))
        try:
            store.create_session(SessionRecord(id="shared", task_title="t", task_path="t.md", task_hash="h"))
        except StoreError:
            pass  # another worker made it first
        for n in range(1, turns + 1):
            for session, seq in ((own, n), ("shared", worker * turns + n)):
                store.add_turn(TurnRecord(
                    id=f"{session}-w{worker}-{n}", session_id=session, seq=seq, key=f"w{worker}/{n}",
                    round=1, phase="proposal", agent_id=f"agent-{worker}", agent_role="proposer",
                    content=f"turn {n} of worker {worker}",
                ))
            store.update_session(own, total_rounds=n)
    print("done", flush=True)
    """
)


def start_together(commands: list[list[str]], go: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start every command, let them all go at once, and wait for each."""
    children = [
        subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for command in commands
    ]
    try:
        time.sleep(0.5)
        go.touch()
        results = []
        for command, child in zip(commands, children, strict=True):
            stdout, stderr = child.communicate(timeout=300)
            results.append(subprocess.CompletedProcess(command, child.returncode, stdout, stderr))
        return results
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


@pytest.mark.slow
def test_processes_writing_turns_to_one_postgresql_store_lose_none(postgres_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    commands = [
        [sys.executable, "-c", WRITER, postgres_url, str(worker), str(TURNS_EACH), str(go)]
        for worker in range(PROCESSES)
    ]
    for result in start_together(commands, go):
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "done"

    with open_store(postgres_url) as store:
        for worker in range(PROCESSES):
            own = store.turns(f"own-{worker}")
            assert [turn.seq for turn in own] == list(range(1, TURNS_EACH + 1))
            assert {turn.agent_id for turn in own} == {f"agent-{worker}"}
            assert store.get_session(f"own-{worker}").total_rounds == TURNS_EACH
        shared = store.turns("shared")
        assert [turn.seq for turn in shared] == list(range(1, PROCESSES * TURNS_EACH + 1))
        assert Counter(turn.agent_id for turn in shared) == {f"agent-{w}": TURNS_EACH for w in range(PROCESSES)}
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT id, count(*) FROM debate_turns GROUP BY id")).all()
            revisions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    finally:
        engine.dispose()
    assert len(rows) == 2 * PROCESSES * TURNS_EACH, "every turn is stored"
    assert {count for _id, count in rows} == {1}, "and stored once"
    assert len(revisions) == 1, "the racing first opens migrated the database once"


@pytest.mark.slow
def test_scripted_solves_in_separate_processes_share_one_postgresql_store(postgres_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    wait_then_solve = (
        "import sys, time, runpy; from pathlib import Path\n"
        "go = Path(sys.argv.pop())\n"
        "while not go.exists(): time.sleep(0.01)\n"
        "runpy.run_module('tests.support.scripted_solve', run_name='__main__')\n"
    )
    commands = [
        [sys.executable, "-c", wait_then_solve, postgres_url, str(tmp_path / f"out-{worker}"), str(go)]
        for worker in range(PROCESSES)
    ]
    results = start_together(commands, go)
    for result in results:
        assert result.returncode == 0, result.stderr
    finished = [result.stdout.split() for result in results]
    assert [status for _id, status in finished] == ["completed"] * PROCESSES
    session_ids = {session_id for session_id, _status in finished}
    assert len(session_ids) == PROCESSES

    with open_store(postgres_url) as store:
        assert {session.id for session in store.list_sessions()} == session_ids
        shapes = set()
        for session_id in session_ids:
            assert store.get_session(session_id).status == "completed"
            turns = store.turns(session_id)
            assert [turn.seq for turn in turns] == list(range(1, len(turns) + 1)), "no turn lost"
            assert len({turn.key for turn in turns}) == len(turns), "none twice"
            shapes.add(tuple(sorted(turn.key for turn in turns)))
            assert store.events(session_id)[-1].type == "SessionFinished"
        assert len(shapes) == 1, "each process stored the same debate"
        assert any("/proposal/" in key for key in next(iter(shapes)))
