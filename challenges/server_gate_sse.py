"""A client drives `debatecode serve`: starts a solve with a gate, follows its events, approves it over REST.

The server runs as its own process on a free loopback port. The client
follows ``/v1/sessions/{id}/events`` (server-sent events) with httpx, approves
the gate when ``GateRequested`` arrives, and reads on to ``SessionFinished``
and ``end``; then the session is completed and the server stops cleanly.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx

from challenges._harness import REPO, ChallengeFailed, Journey, expect, free_port, stop, write_config

NEEDS_DOCKER = True
STREAM_DEADLINE_S = 300
COMMENT = "approved by the challenge client"


def server_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(event, data)`` pairs of a ``text/event-stream``, as they arrive (comments and pings skipped)."""
    kind = "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def _wait_until_up(journey: Journey, base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        expect(server.poll() is None, f"serve exited {server.returncode}", journey.output_of("server"))
        try:
            if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise ChallengeFailed(f"the server did not answer /v1/health within 60 s\n{journey.output_of('server')[-2000:]}")


def _follow(journey: Journey, client: httpx.Client, session_id: str, events_path: str) -> list[str]:
    """Read the session's events to ``end``, approving its gate when asked; the event kinds in order."""
    kinds: list[str] = []
    deadline = time.monotonic() + STREAM_DEADLINE_S
    journey.log.append(f"# GET {events_path} (SSE), approving the gate on GateRequested")
    with client.stream("GET", events_path, timeout=httpx.Timeout(10, read=60)) as stream:
        expect(stream.status_code == 200, f"the event stream answered {stream.status_code}")
        for kind, data in server_events(stream.iter_lines()):
            kinds.append(kind)
            if kind == "GateRequested":
                expect(data.get("phase") == "convergence", f"a gate at {data.get('phase')}, wanted convergence")
                journey.log.append(f"# POST /v1/sessions/{session_id}/gates/approve")
                decided = client.post(f"/v1/sessions/{session_id}/gates/approve", json={"comment": COMMENT})
                expect(decided.status_code == 200, f"approve answered {decided.status_code}", decided.text)
                expect(decided.json()["status"] == "approved", "the gate is not approved", decided.text)
            if kind == "end" or time.monotonic() > deadline:
                break
    return kinds


def run(journey: Journey) -> str:
    write_config(journey, '[sandbox]\nbackend = "docker"\n')
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    body = {
        "task": (REPO / "examples" / "tasks" / "add.md").read_text(),
        # The journey is the gate and the stream: optimization and adversarial are left out to keep it short
        # (tests/e2e/test_serve.py runs every phase through the server).
        "overrides": {
            "model": f"scripted:{REPO / 'examples' / 'replies' / 'add.yaml'}",
            "phases.optimization": False,
            "phases.adversarial": False,
        },
        "gates": ["convergence"],
    }
    with journey.background("serve", "--port", str(port), name="server") as server:
        _wait_until_up(journey, base, server)
        with httpx.Client(base_url=base, timeout=30) as client:
            journey.log.append("# POST /v1/sessions " + json.dumps(body)[:300])
            started = client.post("/v1/sessions", json=body)
            expect(started.status_code == 202, f"starting a solve answered {started.status_code}", started.text)
            session_id, events_path = started.json()["id"], started.json()["events"]
            kinds = _follow(journey, client, session_id, events_path)
            expect(kinds[-1:] == ["end"], f"the stream stopped without end after {kinds[-5:]}")
            expect(kinds[0] == "SessionStarted", f"the stream began with {kinds[0]}")
            for kind in ("GateRequested", "GateDecided", "SessionFinished"):
                expect(kind in kinds, f"no {kind} event in the stream", " ".join(kinds))
            order = [kinds.index(k) for k in ("GateRequested", "GateDecided", "SessionFinished")]
            expect(order == sorted(order), f"gate and finish events out of order: {order}")
            session = client.get(f"/v1/sessions/{session_id}").json()
            expect(session["status"] == "completed", f"the session is {session['status']}, not completed")
            passed, total = session["tests_passed"], session["tests_total"]
            expect(passed == total > 0, f"the final code passes {passed}/{total} tests")
            gates = client.get(f"/v1/sessions/{session_id}/gates").json()
            expect(gates[-1]["reason"] == COMMENT, "the gate decision lost its comment", json.dumps(gates)[:500])
        status = stop(server)
    # 130: interrupted by a signal, as every command ends on a stop request (docs/cli.md).
    expect(status == 130, f"serve exited {status} on SIGTERM, not 130", journey.output_of("server"))
    try:
        httpx.get(f"{base}/v1/health", timeout=2)
    except httpx.ConnectError:
        pass
    else:
        raise ChallengeFailed("the server still answers after it was stopped")
    return f"session {session_id}: {len(kinds)} events streamed, gate approved over REST, {passed}/{total} tests"
