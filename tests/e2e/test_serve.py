"""The acceptance path of ``debatecode serve``, for real: the server process, curl, the Docker sandbox, SQLite.

A solve with a gate is started with curl, its events stream through curl,
the gate is approved with curl, and the session completes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.server.test_sse import parse_sse

REPO = Path(__file__).resolve().parents[2]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"
REPLIES = REPO / "examples" / "replies" / "add.yaml"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path, requires_docker: None) -> Iterator[str]:
    """``debatecode serve`` in its own process on a free loopback port, in ``tmp_path``; its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"DEBATECODE_ALLOW_MODEL_REQUESTS": "0", "NO_COLOR": "1", "DEBATECODE_SANDBOX__BACKEND": "docker"})
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", "from debatecode.cli.app import main; main()", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
        yield base
    finally:
        process.terminate()
        process.wait(30)
        log.close()


def curl(*args: str) -> str:
    done = subprocess.run(["curl", "-sS", "--fail-with-body", *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_solve_started_with_curl_streams_waits_at_its_gate_and_completes_once_approved(server: str) -> None:
    body = json.dumps(
        {"task": ADD_TASK.read_text(), "overrides": {"model": f"scripted:{REPLIES}"}, "gates": ["convergence"]}
    )
    started = json.loads(
        curl("-X", "POST", f"{server}/v1/sessions", "-H", "content-type: application/json", "-d", body)
    )
    session_id = started["id"]
    stream = subprocess.Popen(["curl", "-sSN", f"{server}{started['events']}"], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(1200):
            gates = json.loads(curl(f"{server}/v1/sessions/{session_id}/gates"))
            if gates and gates[-1]["status"] == "pending":
                break
            time.sleep(0.1)
        assert gates[-1]["status"] == "pending" and gates[-1]["phase"] == "convergence"
        decided = json.loads(
            curl(
                "-X",
                "POST",
                f"{server}/v1/sessions/{session_id}/gates/approve",
                "-H",
                "content-type: application/json",
                "-d",
                '{"comment": "approved from curl"}',
            )
        )
        assert decided["status"] == "approved"
        output, _ = stream.communicate(timeout=300)
    finally:
        stream.kill()
    events = parse_sse(output)
    kinds = [event["event"] for event in events]
    assert kinds[0] == "SessionStarted" and kinds[-1] == "end"
    assert kinds.index("GateRequested") < kinds.index("GateDecided") < kinds.index("SessionFinished")
    assert events[0]["data"]["sandbox"] == "docker"
    finished = json.loads(curl(f"{server}/v1/sessions/{session_id}"))
    assert finished["status"] == "completed" and finished["tests_passed"] == finished["tests_total"] > 0
