"""``sessions replay`` on a design debate, and ``debate --list`` for scripts (``--json``, whole ids when piped)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.cli.helpers import HASHING_MEMORY, run_cli

QUESTION = "Should we cache product pages in Redis?"


def _script(path: Path, satisfaction: int) -> Path:
    speech = (
        "Stance: cache the rendered pages in Redis with a short TTL.\n"
        "Reasons:\n- the product pages are read far more than written\n"
        "Challenge: Contrarian and Moonshot: the invalidation cost needs numbers.\n"
        "Risks:\n- stale prices after an update\n"
        f"Satisfaction: {satisfaction}\nReady for synthesis: no\n"
    )
    path.write_text(yaml.safe_dump({"default": speech}))
    return path


@pytest.fixture(scope="module")
def debated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A folder with one design debate that escalated (nobody to choose) and one that agreed."""
    cwd = tmp_path_factory.mktemp("debated")
    split = run_cli(
        "debate",
        QUESTION,
        "--model",
        f"scripted:{_script(cwd / 'split.yaml', 50)}",
        "--no-checkpoints",
        cwd=cwd,
        env=HASHING_MEMORY,
    )
    assert split.returncode == 5, split.stdout + split.stderr
    agreed = run_cli(
        "debate",
        QUESTION,
        "--model",
        f"scripted:{_script(cwd / 'agree.yaml', 95)}",
        "--no-checkpoints",
        cwd=cwd,
        env=HASHING_MEMORY,
    )
    assert agreed.returncode == 0, agreed.stdout + agreed.stderr
    return cwd, agreed


def _ids(cwd: Path) -> list[str]:
    listed = run_cli("debate", "--list", "--json", cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    return [row["id"] for row in json.loads(listed.stdout)]


def test_list_json_gives_every_debate_with_its_record(debated: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    cwd, _ = debated
    proc = run_cli("debate", "--list", "--json", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == 2
    by_status = {row["record_status"]: row for row in rows}
    assert set(by_status) == {"escalated", "accepted"}
    escalated = by_status["escalated"]
    assert escalated["status"] == "completed" and escalated["confidence"] == "LOW"
    assert escalated["escalation"]["choice"] is None and len(escalated["escalation"]["options"]) >= 2
    assert by_status["accepted"]["adr"].endswith(".md") and by_status["accepted"]["question"] == QUESTION
    assert all(len(row["id"]) == 12 for row in rows)


def test_list_piped_prints_whole_ids(debated: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    cwd, _ = debated
    proc = run_cli("debate", "--list", cwd=cwd, env={"COLUMNS": "40"})
    assert proc.returncode == 0, proc.stderr
    for session_id in _ids(cwd):
        assert session_id in proc.stdout, f"{session_id} cut in:\n{proc.stdout}"


@pytest.mark.parametrize("which", ["escalated", "accepted"])
def test_sessions_replay_reproduces_a_design_debate(
    debated: tuple[Path, subprocess.CompletedProcess[str]], which: str, tmp_path: Path
) -> None:
    cwd, _ = debated
    rows = json.loads(run_cli("debate", "--list", "--json", cwd=cwd).stdout)
    session_id = next(row["id"] for row in rows if row["record_status"] == which)
    trail = tmp_path / "trail.json"
    audited = run_cli("sessions", "audit", session_id, "-o", str(trail), cwd=cwd)
    assert audited.returncode == 0, audited.stderr
    out = tmp_path / "replayed"
    proc = run_cli("sessions", "replay", str(trail), "--out", str(out), cwd=cwd, env=HASHING_MEMORY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())
    assert f"replayed design debate {session_id} as " in text
    assert "the replay reproduces the session" in text
    assert "cache the rendered pages in Redis" in text, "the speeches are shown as they replay"
    assert "Round 1" in text and "Round 2" in text
    [adr] = (out / "docs" / "decisions").glob("adr-0001-*.md")
    assert f"- **Status:** {which}" in adr.read_text()
