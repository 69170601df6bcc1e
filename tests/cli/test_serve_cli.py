"""``debatecode sessions view ID``: prints the transcript URL, starting a loopback server when none answers."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import httpx
from tests.cli.helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = REPO / "examples" / "replies" / "add.yaml"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_view_starts_a_server_and_prints_the_session_page(tmp_path: Path) -> None:
    solved = run_cli("solve", ADD, "--model", f"scripted:{REPLIES}", "--sandbox", "local", cwd=tmp_path)
    assert solved.returncode == 0, solved.stderr
    listed = run_cli("sessions", "list", "--json", cwd=tmp_path)
    import json

    session_id = json.loads(listed.stdout)[0]["id"]
    port = free_port()
    viewed = run_cli("sessions", "view", session_id[:6], "--port", str(port), "--no-open", cwd=tmp_path, timeout=120)
    pid_file = tmp_path / ".debatecode" / "server.pid"
    try:
        assert viewed.returncode == 0, viewed.stderr
        url = f"http://127.0.0.1:{port}/sessions/{session_id}"
        assert viewed.stdout.strip() == url
        assert "started a server" in viewed.stderr and "server.pid" in viewed.stderr
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200 and session_id in page.text
        again = run_cli("sessions", "view", session_id, "--port", str(port), "--no-open", cwd=tmp_path)
        assert again.returncode == 0 and again.stdout.strip() == url and "started" not in again.stderr
    finally:
        if pid_file.is_file():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_view_of_an_unknown_session_says_so_and_starts_nothing(tmp_path: Path) -> None:
    viewed = run_cli("sessions", "view", "nosuch", "--port", str(free_port()), "--no-open", cwd=tmp_path)
    assert viewed.returncode == 2 and "nosuch" in viewed.stderr
    assert not (tmp_path / ".debatecode" / "server.pid").exists()
