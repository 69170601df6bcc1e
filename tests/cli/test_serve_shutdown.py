"""SIGTERM to ``debatecode serve`` while a session runs: every open event stream ends with ``end`` and the final status.

The streams used to be cut without an ``end`` event, so a client could not tell a stopped server from
a dropped connection. Now the server cancels its sessions, each stream sends the session's
``SessionFinished`` (``cancelled``) and then ``end``, and the process exits 130.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from tests.cli.helpers import EXE, HASHING_MEMORY, REPO
from tests.cli.test_serve_cli import free_port
from tests.server.test_sse import parse_sse

ADD = REPO / "examples" / "tasks" / "add.md"
REPLIES = REPO / "examples" / "replies" / "add.yaml"
WAIT_S = 90.0


def start_server(folder: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"NO_COLOR": "1", "TERM": "dumb", **HASHING_MEMORY})
    with (folder / "server.log").open("wb") as log:
        server = subprocess.Popen(
            [str(EXE), "serve", "--port", str(port)], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        assert server.poll() is None and time.monotonic() < deadline, (folder / "server.log").read_text()
        time.sleep(0.2)


def follow(url: str, into: list[str]) -> None:
    """Read the stream at ``url`` until the server closes it."""
    try:
        with httpx.stream("GET", url, timeout=httpx.Timeout(WAIT_S, connect=5)) as answer:
            for text in answer.iter_text():
                into.append(text)
    except httpx.HTTPError as exc:
        into.append(f"\n\n<<{type(exc).__name__}>>")


def test_sigterm_ends_every_stream_of_a_live_session_with_end_and_its_final_status(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(tmp_path, port)
    try:
        body: dict[str, Any] = {
            "task": ADD.read_text(encoding="utf-8"),
            "overrides": {"model": f"scripted:{REPLIES}", "sandbox.backend": "local"},
            "gates": ["dehallucination"],  # it then waits at its first gate: live until the server stops
        }
        started = httpx.post(f"{base}/v1/sessions", json=body, timeout=WAIT_S).json()
        session_id = started["id"]
        deadline = time.monotonic() + WAIT_S
        while not httpx.get(f"{base}/v1/sessions/{session_id}", timeout=10).json()["pending_gates"]:
            assert time.monotonic() < deadline, "the session never reached its gate"
            time.sleep(0.2)
        streams: list[list[str]] = [[], []]
        readers = [
            threading.Thread(target=follow, args=(f"{base}/v1/sessions/{session_id}/events", into), daemon=True)
            for into in streams
        ]
        for reader in readers:
            reader.start()
        time.sleep(1.0)  # both streams are open and have sent the feed so far
        server.send_signal(signal.SIGTERM)
        for reader in readers:
            reader.join(WAIT_S)
        assert server.wait(timeout=30) == 130, (tmp_path / "server.log").read_text()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    for received in streams:
        events = parse_sse("".join(received))
        assert [e["event"] for e in events][-2:] == ["SessionFinished", "end"], "".join(received)[-500:]
        assert events[-2]["data"]["status"] == "cancelled"
        assert events[-1]["data"] == {"session_id": session_id, "reason": "finished", "status": "cancelled"}
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and "forced" not in log, log  # a clean stop, not the forced one
    stored = json.loads(
        subprocess.run(
            [str(EXE), "sessions", "show", session_id, "--json"], cwd=tmp_path, capture_output=True, text=True
        ).stdout
    )
    assert stored["session"]["status"] == "cancelled"
