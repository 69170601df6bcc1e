"""``debatecode sessions view ID``: prints the transcript URL, starting a loopback server when none answers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
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


def stored_session(folder: Path) -> str:
    """A session in the default store of ``folder``, written directly (no debate needed to view one)."""
    from debatecode.store import open_store
    from debatecode.store.records import SessionRecord

    (folder / ".debatecode").mkdir(exist_ok=True)
    with open_store(f"sqlite:///{folder / '.debatecode' / 'debatecode.db'}") as store:
        store.create_session(
            SessionRecord(id="view00000001", task_title="t", task_path="t.md", task_hash="0", status="completed")
        )
    return "view00000001"


def test_view_on_a_port_taken_by_another_program_says_so_at_once_and_keeps_the_pid_file(tmp_path: Path) -> None:
    session_id = stored_session(tmp_path)
    first_server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pid_file = tmp_path / ".debatecode" / "server.pid"
    pid_file.write_text(f"{first_server.pid}\n")
    try:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            started = time.monotonic()
            viewed = run_cli("sessions", "view", session_id, "--port", str(port), "--no-open", cwd=tmp_path)
            assert time.monotonic() - started < 20, "it waited for a server that could never start"
        said = " ".join(viewed.stderr.split())
        assert viewed.returncode == 3, said
        assert f"port {port} on 127.0.0.1 is in use by a program that is not a debatecode server" in said
        assert "choose a free port with --port" in said
        assert pid_file.read_text() == f"{first_server.pid}\n", "the pid file of a live server is never overwritten"
        assert not list((tmp_path / ".debatecode").glob("server-*.pid"))
    finally:
        first_server.kill()
        first_server.wait()


def test_view_notices_at_once_when_the_server_it_started_dies(tmp_path: Path) -> None:
    session_id = stored_session(tmp_path)
    started = time.monotonic()
    # serve refuses a token this short, so the server exits as soon as it starts
    viewed = run_cli(
        "sessions", "view", session_id, "--port", str(free_port()), "--no-open",
        cwd=tmp_path, env={"DEBATECODE_SERVER_TOKEN": "short"},
    )  # fmt: skip
    assert time.monotonic() - started < 25, "it waited out the start timeout for a server that had died"
    said = " ".join(viewed.stderr.split())
    assert viewed.returncode == 3 and "exited at once (status 2)" in said and "too short" in said, said
    assert not (tmp_path / ".debatecode" / "server.pid").exists()


def test_view_prints_the_url_with_the_token_of_a_token_protected_server(tmp_path: Path) -> None:
    session_id = stored_session(tmp_path)
    port, token = free_port(), "view-token-0123456789"
    viewed = run_cli(
        "sessions", "view", session_id, "--port", str(port), "--no-open",
        cwd=tmp_path, env={"DEBATECODE_SERVER_TOKEN": token}, timeout=120,
    )  # fmt: skip
    pid_file = tmp_path / ".debatecode" / "server.pid"
    try:
        assert viewed.returncode == 0, viewed.stderr
        url = viewed.stdout.strip()
        assert url == f"http://127.0.0.1:{port}/sessions/{session_id}?token={token}"
        assert httpx.get(url, timeout=10).status_code == 200, "the printed URL opens the page"
        assert httpx.get(url.split("?")[0], timeout=10).status_code == 401, "the server does need the token"
        again = run_cli("sessions", "view", session_id, "--port", str(port), "--no-open", cwd=tmp_path)
        said = " ".join(again.stderr.split())
        assert again.returncode == 2 and f"the server on http://127.0.0.1:{port} needs its token" in said, said
        assert "DEBATECODE_SERVER_TOKEN" in said
    finally:
        if pid_file.is_file():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_serve_on_a_busy_port_fails_before_saying_it_serves(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        served = run_cli("serve", "--port", str(port), cwd=tmp_path, timeout=60)
    said = " ".join(served.stderr.split())
    assert served.returncode == 3 and f"port {port} on 127.0.0.1 is in use by another program" in said, said
    assert "serving on" not in served.stdout
