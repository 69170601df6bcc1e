"""Provenance and gates through the real CLI: audit, replay, approve.

Audit and replay work on copies of the shared scripted run (``solved_add`` in ``conftest.py``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.cli.helpers import EXE, HASHING_MEMORY, REPO, SolvedAdd, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")


def _session_id(cwd: Path) -> str:
    with sqlite3.connect(cwd / ".debatecode" / "debatecode.db") as conn:
        return str(conn.execute("select id from debate_sessions order by created_at").fetchone()[0])


def test_audit_trail_then_replay_reproduces_the_session(solved_add: SolvedAdd, tmp_path: Path) -> None:
    tmp_path = solved_add.copy_to(tmp_path / "solved")
    session_id = _session_id(tmp_path)
    assert session_id == solved_add.session_id

    audited = run_cli("sessions", "audit", session_id, cwd=tmp_path)
    assert audited.returncode == 0, audited.stderr
    trail = json.loads(audited.stdout)
    assert trail["session"]["id"] == session_id and trail["task"]["text"].startswith("---")
    # 30 model turns, 6 adjudication answers, the Red team's distinguishing inputs and their probe run, the
    # adjudication's and the final ranking's probe runs, and the two early-stop probe runs (agent-2's b == 0 hack
    # makes them disagree). No vote: the final choice is by behaviour.
    assert len(trail["turns"]) == 42
    assert [t["metadata"]["calls"] for t in trail["turns"] if t["metadata"].get("kind") == "distinguish"] == [
        ["add(0, 0)", "add(8, 0)"]
    ]
    assert sum(1 for t in trail["turns"] if t["metadata"].get("kind", "").startswith("adjudicate-")) == 6
    assert [t["metadata"]["agree"] for t in trail["turns"] if t["phase"] == "early_stop"] == [False, False]
    first = trail["turns"][0]
    for field in ("prompt", "model", "content", "tool_calls", "test_results", "metadata", "prompt_tokens"):
        assert field in first
    assert trail["votes"] == [] and trail["session"]["outcome"]["method"] == "behaviour"
    assert any(t["tool_calls"] for t in trail["turns"]), "probe results are part of the trail"
    (tmp_path / "audit.json").write_text(audited.stdout)

    replayed = run_cli("sessions", "replay", "audit.json", "--out", "replayed", "--sandbox", "local", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "the replay reproduces the session" in replayed.stdout
    assert (tmp_path / "replayed" / "solution.py").read_text() == (tmp_path / "out" / "solution.py").read_text()


def test_a_tampered_trail_is_reported_as_diverging(solved_add: SolvedAdd, tmp_path: Path) -> None:
    tmp_path = solved_add.copy_to(tmp_path / "solved")
    trail = json.loads(run_cli("sessions", "audit", _session_id(tmp_path), cwd=tmp_path).stdout)
    for turn in trail["turns"]:
        # agent-3 now sides with agent-1 on add(0, 0): a majority settles a test that agent-2's hack fails.
        if turn["agent_id"] == "agent-3" and turn["metadata"].get("kind") == "adjudicate-1":
            turn["content"] = "Zero plus zero is zero.\nANSWER: 0"
    (tmp_path / "tampered.json").write_text(json.dumps(trail))
    replayed = run_cli("sessions", "replay", "tampered.json", "--out", "replayed", "--sandbox", "local", cwd=tmp_path)
    assert replayed.returncode == 1
    assert "diverged" in replayed.stdout


def test_a_waiting_gate_is_approved_from_another_process(tmp_path: Path) -> None:
    (tmp_path / "debatecode.toml").write_text('[gates]\nenabled = true\nphases = ["proposal"]\npoll_s = 0.1\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")} | {"NO_COLOR": "1", "TERM": "dumb"}
    env |= HASHING_MEMORY
    proc = subprocess.Popen(
        [
            str(EXE),
            "solve",
            ADD,
            "--model",
            f"scripted:{REPLIES}",
            "--sandbox",
            "local",
            "--phases",
            "self_evolvement,proposal,convergence",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        db = tmp_path / ".debatecode" / "debatecode.db"
        deadline = time.monotonic() + 120
        pending = False
        while time.monotonic() < deadline and not pending:
            time.sleep(0.1)
            if db.exists():
                try:
                    with sqlite3.connect(db) as conn:
                        pending = bool(list(conn.execute("select 1 from gate_decisions where status = 'pending'")))
                except sqlite3.OperationalError:
                    pending = False
        assert pending, "the debate never waited at the gate"
        listed = run_cli("sessions", "gates", _session_id(tmp_path), cwd=tmp_path)
        assert "pending" in listed.stdout
        approved = run_cli(
            "sessions", "approve", _session_id(tmp_path), "--reason", "looks right", "--reviewer", "ana", cwd=tmp_path
        )
        assert approved.returncode == 0 and "approved" in approved.stdout
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output
    assert "gate proposal: approved" in output
    listed = run_cli("sessions", "gates", _session_id(tmp_path), cwd=tmp_path)
    assert "approved" in listed.stdout and "ana" in listed.stdout
