"""End to end with the real embedded models (llama.cpp): the default Qwen2.5-Coder-0.5B and the Gemma 3 270M base model.

Qwen must solve the trivial task; the Gemma run asserts the pipeline, not the answer
(every phase runs and persists its turns).
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from tests.cli.helpers import REPO, run_cli


@pytest.mark.local_model
@pytest.mark.slow
def test_local_model_solves_trivial_task_in_docker(tmp_path: Path, requires_docker: None) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    proc = run_cli(
        "solve",
        str(REPO / "examples" / "tasks" / "add.md"),
        "--agents",
        "2",
        "--rounds",
        "1",
        "--sandbox",
        "docker",
        "--out",
        "out",
        "--phases",
        "self_evolvement,proposal,convergence",
        "--no-checkpoints",
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as conn:
        sessions = list(conn.execute("select id, status, model, prompt_tokens, completion_tokens from debate_sessions"))
        assert len(sessions) == 1
        session_id, status, model, prompt_tokens, completion_tokens = sessions[0]
        assert (status, model) == ("completed", "local/qwen2.5-coder-0.5b")
        assert prompt_tokens > 0 and completion_tokens > 0
        turns = list(
            conn.execute(
                "select phase, agent_id, provider, prompt_tokens from debate_turns where session_id = ? and provider != 'tool'",
                (session_id,),
            )
        )
    assert len(turns) >= 2
    assert {agent for _, agent, _, _ in turns} >= {"agent-1", "agent-2"}
    assert all(tokens > 0 for *_, tokens in turns), "real llama.cpp token counts are recorded"
    branches = subprocess.run(
        ["git", "-C", str(tmp_path / "out"), "branch", "--list", f"debate/{session_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"debate/{session_id}" in branches.stdout
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "out"), "log", "--format=%s", f"debate/{session_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert any(line.startswith("report:") for line in log.stdout.splitlines())
    assert (tmp_path / "out" / "report.md").exists()
    _check_counts_against_llama(tmp_path, session_id)


def _messages(prompt: str) -> list[dict[str, str]]:
    """The chat messages of a stored prompt (``Prompt.text``: ``[role]\\ncontent`` blocks)."""
    parts = re.split(r"(?:^|\n\n)\[(system|user|assistant)\]\n", prompt)
    return [{"role": parts[i], "content": parts[i + 1]} for i in range(1, len(parts), 2)]


def _check_counts_against_llama(cwd: Path, session_id: str) -> None:
    """``sessions show``'s token counts are llama.cpp's own: each turn re-tokenised through the GGUF chat template."""
    from debatecode.llm.local import count_local_text_tokens, count_local_tokens

    shown = json.loads(run_cli("sessions", "show", session_id, "--json", cwd=cwd, timeout=120).stdout)
    model_turns = [t for t in shown["turns"] if t["provider"] == "local"]
    assert model_turns
    for turn in model_turns:
        messages = _messages(turn["prompt"])
        assert [m["role"] for m in messages] == ["system", "user"], turn["key"]
        assert turn["prompt_tokens"] == count_local_tokens("qwen2.5-coder-0.5b", messages), turn["key"]
        assert turn["completion_tokens"] == count_local_text_tokens("qwen2.5-coder-0.5b", turn["content"]), turn["key"]
    session = shown["session"]
    assert session["prompt_tokens"] == sum(t["prompt_tokens"] for t in shown["turns"])
    assert session["completion_tokens"] == sum(t["completion_tokens"] for t in shown["turns"])


@pytest.mark.local_model
@pytest.mark.slow
def test_local_model_runs_every_phase_and_persists_turns(tmp_path: Path, requires_docker: None) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    task = tmp_path / "add.md"
    # Marked complex so that dehallucination runs too; the base model's answers are rough but must flow through.
    task.write_text(
        (REPO / "examples" / "tasks" / "add.md").read_text().replace("difficulty: trivial", "difficulty: complex")
    )
    # Every phase must run, so drafts that already pass and agree must not end the debate early.
    # The pipeline is under test, not memory: the hashing embedder spares a torch load (~10 s of CPU).
    (tmp_path / "debatecode.toml").write_text('[convergence]\nearly_stop = false\n\n[memory]\nembedder = "hashing"\n')
    proc = run_cli(
        "solve",
        str(task),
        "--agents",
        "2",
        "--rounds",
        "1",
        "--sandbox",
        "docker",
        "--out",
        "out",
        "--no-checkpoints",
        "--model",
        "local/gemma-3-270m",
        cwd=tmp_path,
        timeout=1500,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    for phase in (
        "dehallucination",
        "self_evolvement",
        "proposal",
        "critique",
        "review",
        "optimization",
        "adversarial",
        "convergence",
    ):
        assert f"▶ {phase}" in proc.stdout, phase
    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as conn:
        [(session_id, status)] = list(conn.execute("select id, status from debate_sessions"))
        phases = {
            row[0]
            for row in conn.execute("select distinct phase from debate_turns where session_id = ?", (session_id,))
        }
        roles = {
            row[0]
            for row in conn.execute("select distinct agent_role from debate_turns where session_id = ?", (session_id,))
        }
    assert status == "completed"
    assert {"dehallucination", "self_evolvement", "proposal", "review", "convergence"} <= phases
    assert {"moonshot", "contrarian", "judge", "security"} <= roles
    report = (tmp_path / "out" / "report.md").read_text()
    for section in (
        "## Chosen approach",
        "## Rejected alternatives",
        "## Dissents",
        "## Risk register",
        "## Confidence",
    ):
        assert section in report
