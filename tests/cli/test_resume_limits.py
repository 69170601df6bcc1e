"""Issue 33, part 2: a session stopped by a limit finishes when `--resume` raises that limit.

Everything runs the real console script over scripted models: a design debate
stopped by its token budget, one stopped by a round's time limit, and a code
debate (`solve`) stopped by its token budget. The resume records what changed,
and `sessions show` prints it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import yaml
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli

QUESTION = "Should we cache product pages in Redis?"
ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")

SPEECH = (
    "Stance: cache the rendered pages in Redis with a short TTL.\n"
    "Reasons:\n- the product pages are read far more than written\n"
    "Challenge: Contrarian and Moonshot: the invalidation cost needs numbers.\n"
    "Risks:\n- stale prices after an update\n"
    "Satisfaction: 95\n"
    "Ready for synthesis: no\n"
)


def _script(path: Path, *, delay: float = 0.0, replies: int = 0) -> Path:
    data: dict[str, object] = {"default": SPEECH}
    if replies:
        data["replies"] = [{"content": SPEECH, "delay": delay} for _ in range(replies)]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _only_session(cwd: Path) -> tuple[str, str, str | None]:
    with sqlite3.connect(cwd / ".debatecode" / "debatecode.db") as conn:
        [(session_id, status, error)] = list(conn.execute("select id, status, error from debate_sessions"))
    return session_id, status, error


def _shown(session_id: str, cwd: Path) -> tuple[str, dict[str, object]]:
    shown = run_cli("sessions", "show", session_id, cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    data = run_cli("sessions", "show", session_id, "--json", cwd=cwd)
    assert data.returncode == 0, data.stderr
    return " ".join(shown.stdout.split()), json.loads(data.stdout)


def test_a_design_debate_stopped_by_its_budget_completes_after_resume_raises_it(tmp_path: Path) -> None:
    script = _script(tmp_path / "s.yaml")
    first = run_cli(
        "debate", QUESTION, "--model", f"scripted:{script}", "--no-checkpoints", "--token-budget", "3000", cwd=tmp_path
    )
    assert first.returncode == 3, first.stdout + first.stderr
    session_id, status, error = _only_session(tmp_path)
    assert status == "budget_exceeded" and "3000 tokens" in str(error)

    same = run_cli("debate", "--resume", session_id, cwd=tmp_path)
    assert same.returncode == 3, "without a new budget the resume stops again at once"
    assert _only_session(tmp_path)[1] == "budget_exceeded"

    resumed = run_cli("debate", "--resume", session_id, "--token-budget", "5000000", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _only_session(tmp_path)[1] == "completed"
    assert len(list((tmp_path / "docs" / "decisions").glob("adr-0001-*.md"))) == 1

    text, data = _shown(session_id, tmp_path)
    assert "resumed with: token_budget 3000 → 5000000" in text
    notes = [t for t in data["turns"] if t["phase"] == "resume"]  # type: ignore[union-attr]
    assert [n["key"] for n in notes] == ["r0/resume/human/settings-1"], "the unchanged resume records nothing"
    assert notes[0]["metadata"]["changes"] == [{"key": "token_budget", "before": 3000, "after": 5000000}]
    assert data["session"]["config"]["token_budget"] == 5000000  # type: ignore[index]


def test_a_design_debate_stopped_by_a_round_time_limit_completes_after_resume_raises_it(tmp_path: Path) -> None:
    script = _script(tmp_path / "slow.yaml", delay=0.2, replies=200)
    first = run_cli(
        "debate", QUESTION, "--model", f"scripted:{script}", "--no-checkpoints", "--round-timeout", "0.05", cwd=tmp_path
    )
    assert first.returncode == 3, first.stdout + first.stderr
    session_id, status, error = _only_session(tmp_path)
    assert status == "failed" and "round 1's time limit of 0.05s (--round-timeout)" in str(error)
    assert f"debatecode debate --resume {session_id}" in " ".join(first.stderr.split())

    resumed = run_cli("debate", "--resume", session_id, "--round-timeout", "600", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _only_session(tmp_path)[1] == "completed"
    text, _ = _shown(session_id, tmp_path)
    assert "resumed with: design.round_timeout_s 0.05 → 600.0" in text


def test_resume_refuses_flags_that_would_change_what_was_debated(tmp_path: Path) -> None:
    script = _script(tmp_path / "s.yaml")
    first = run_cli(
        "debate", QUESTION, "--model", f"scripted:{script}", "--no-checkpoints", "--token-budget", "3000", cwd=tmp_path
    )
    assert first.returncode == 3, first.stdout + first.stderr
    session_id, _, _ = _only_session(tmp_path)
    refused = run_cli("debate", "--resume", session_id, "--perspectives", "cost", "--council", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "drop --perspectives, --council" in " ".join(refused.stderr.split())
    assert _only_session(tmp_path)[1] == "budget_exceeded", "a refused resume leaves the session as it was"


def test_solve_stopped_by_its_budget_completes_after_resume_raises_it(tmp_path: Path) -> None:
    common = ("--model", f"scripted:{REPLIES}", "--sandbox", "local", "--out", "out")
    first = run_cli("solve", ADD, *common, "--token-budget", "1500", cwd=tmp_path, env=HASHING_MEMORY)
    assert first.returncode == 3, first.stdout + first.stderr
    session_id, status, _ = _only_session(tmp_path)
    assert status == "budget_exceeded"
    assert f"--resume {session_id}" in " ".join(first.stderr.split())

    resumed = run_cli(
        "solve", ADD, "--resume", session_id, "--token-budget", "5000000", cwd=tmp_path, env=HASHING_MEMORY
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _only_session(tmp_path)[1] == "completed"
    text, data = _shown(session_id, tmp_path)
    assert "resumed with: token_budget 1500 → 5000000" in text
    assert data["session"]["config"]["token_budget"] == 5000000  # type: ignore[index]
    assert data["session"]["outcome"]["winner"]  # type: ignore[index]
