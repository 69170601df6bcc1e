"""Bad input: a clear message, a non-zero exit, and a store left consistent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")


def _session_rows(cwd: Path) -> list[tuple[str, str]]:
    db = cwd / ".debatecode" / "debatecode.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return list(conn.execute("select id, status from debate_sessions"))


def test_missing_task_file(tmp_path: Path) -> None:
    proc = run_cli("solve", "nope.md", "--model", f"scripted:{REPLIES}", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2
    assert "nope.md: task file not found" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _session_rows(tmp_path) == []


def test_malformed_front_matter(tmp_path: Path) -> None:
    task = tmp_path / "bad.md"
    task.write_text("---\ntitle: [oops\nentry_point: f\n---\nDo it.\n## Examples\n>>> f()\n1\n")
    proc = run_cli("solve", str(task), "--model", f"scripted:{REPLIES}", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{task}:3: front matter is not valid YAML" in proc.stderr.replace("\n", " ") or f"{task}:3:" in proc.stderr
    assert "fix:" in proc.stderr
    assert _session_rows(tmp_path) == []


def test_unknown_config_key(tmp_path: Path) -> None:
    (tmp_path / "debatecode.toml").write_text('modle = "x"\n')
    proc = run_cli("solve", ADD, "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown config key 'modle'" in proc.stderr and "debatecode.toml" in proc.stderr
    assert _session_rows(tmp_path) == []


def test_unknown_model_lists_known_prefixes(tmp_path: Path) -> None:
    proc = run_cli("solve", ADD, "--model", "no-such-model-xyz", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2
    text = " ".join(proc.stderr.split())
    assert "unknown model 'no-such-model-xyz'" in text
    for prefix in ("local/", "scripted/", "scripted:", "openai/"):
        assert prefix in text
    assert _session_rows(tmp_path) == []


@pytest.mark.parametrize(
    "models", [("--agent-models", "scripted/nosuch"), ("--models", "red=scripted/nosuch")], ids=["agent", "role"]
)
def test_every_model_is_checked_before_a_session_is_stored(tmp_path: Path, models: tuple[str, str]) -> None:
    """Issue 31, item 11: a per-role or per-agent model was only looked up in its phase, after the session began."""
    proc = run_cli("solve", ADD, "--model", f"scripted:{REPLIES}", "--sandbox", "local", *models, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "unknown model 'scripted/nosuch'" in proc.stderr
    assert _session_rows(tmp_path) == []


def test_docker_forced_but_engine_down(tmp_path: Path) -> None:
    proc = run_cli(
        "solve",
        ADD,
        "--model",
        f"scripted:{REPLIES}",
        "--sandbox",
        "docker",
        cwd=tmp_path,
        env={"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"},
    )
    assert proc.returncode != 0
    text = " ".join(proc.stderr.split())
    assert "docker" in text.lower() and "--sandbox local" in text
    assert _session_rows(tmp_path) == []


@pytest.mark.slow
def test_unreachable_model_marks_session_failed_and_keeps_turns(tmp_path: Path) -> None:
    """A real litellm call to a closed loopback port, retried, then the session is failed."""
    proc = run_cli(
        "solve",
        ADD,
        "--model",
        "openai/gpt-4o-mini",
        "--sandbox",
        "local",
        "--agents",
        "1",
        cwd=tmp_path,
        env={
            **HASHING_MEMORY,
            "DEBATECODE_ALLOW_MODEL_REQUESTS": "1",
            "DEBATECODE_LLM__API_BASE": "http://127.0.0.1:9/v1",
            "DEBATECODE_LLM__MAX_RETRIES": "1",
            "DEBATECODE_LLM__RETRY_BASE_DELAY_S": "0.05",
            "DEBATECODE_LLM__REQUEST_TIMEOUT_S": "5",
            "OPENAI_API_KEY": "sk-test-not-a-real-key",
        },
    )
    assert proc.returncode == 3, proc.stderr
    rows = _session_rows(tmp_path)
    assert len(rows) == 1 and rows[0][1] == "failed"
    assert "--resume" in proc.stderr
    show = run_cli("sessions", "show", rows[0][0], cwd=tmp_path)
    assert show.returncode == 0 and "failed" in show.stdout


def test_reply_with_no_code_is_reported_not_crashed(tmp_path: Path) -> None:
    script = tmp_path / "silent.yaml"
    script.write_text("default: |\n  Let us first agree on the requirements.\n")
    proc = run_cli(
        "solve",
        ADD,
        "--model",
        f"scripted:{script}",
        "--sandbox",
        "local",
        "--agents",
        "2",
        cwd=tmp_path,
        env=HASHING_MEMORY,
    )
    assert proc.returncode == 1, proc.stderr
    assert "no code" in (proc.stdout + proc.stderr).lower()
    rows = _session_rows(tmp_path)
    assert rows and rows[0][1] == "completed"
    report = (tmp_path / "debatecode-out" / "report.md").read_text()
    assert "No candidate produced code" in report
