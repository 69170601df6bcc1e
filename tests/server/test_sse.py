"""The event stream: a scripted debate followed to its end, resumed with Last-Event-ID, and 10 sessions at once."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from tests.server.conftest import ADD_TASK_TEXT


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The events of an SSE body: ``{"event", "id", "data"}`` each (comments and pings dropped)."""
    events: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            if name in ("event", "id", "data"):
                fields[name] = value[1:] if value.startswith(" ") else value
        if "event" in fields:
            fields["data"] = json.loads(fields.get("data") or "null")
            events.append(fields)
    return events


async def follow(client: httpx.AsyncClient, session_id: str, **headers: str) -> list[dict[str, Any]]:
    """Every event of the session's stream until it ends."""
    answer = await client.get(f"/v1/sessions/{session_id}/events", headers=headers, timeout=120)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
    return parse_sse(answer.text)


async def test_the_stream_follows_a_scripted_debate_to_its_end(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT})).json()
    events = await follow(client, started["id"])
    kinds = [event["event"] for event in events]
    assert kinds[0] == "SessionStarted" and kinds[-2:] == ["SessionFinished", "end"]
    assert {"PhaseStarted", "TurnCompleted", "TestsRun", "CodeVersionCommitted"} <= set(kinds)
    ids = [int(event["id"]) for event in events if "id" in event]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(event["data"]["session_id"] == started["id"] for event in events[:-1])
    finished = events[-2]["data"]
    assert finished["status"] == "completed" and finished["outcome"]["passed"] == finished["outcome"]["total"]
    turns = (await client.get(f"/v1/sessions/{started['id']}/turns")).json()
    streamed = [event["data"]["turn"]["id"] for event in events if event["event"] == "TurnCompleted"]
    assert streamed == [turn["id"] for turn in turns]


async def test_last_event_id_resumes_with_exactly_the_missed_events(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT})).json()
    everything = await follow(client, started["id"])
    cut = len(everything) // 2
    resumed = await follow(client, started["id"], **{"Last-Event-ID": everything[cut - 1]["id"]})
    assert [e.get("id") for e in resumed] == [e.get("id") for e in everything[cut:]]
    assert [e["event"] for e in resumed] == [e["event"] for e in everything[cut:]]


async def test_a_stream_opened_on_a_waiting_session_goes_on_after_the_gate_is_approved(
    client: httpx.AsyncClient,
) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "gates": ["convergence"]})).json()
    following = asyncio.create_task(follow(client, started["id"]))
    for _ in range(600):
        if (await client.get(f"/v1/sessions/{started['id']}")).json()["pending_gates"]:
            break
        await asyncio.sleep(0.1)
    assert not following.done(), "the stream ended while the session waited at its gate"
    await client.post(f"/v1/sessions/{started['id']}/gates/approve", json={"comment": "ok"})
    events = await asyncio.wait_for(following, 120)
    kinds = [event["event"] for event in events]
    assert kinds.index("GateRequested") < kinds.index("GateDecided") < kinds.index("SessionFinished")
    decided = events[kinds.index("GateDecided")]["data"]
    assert decided["decision"] == "approved" and decided["reason"] == "ok"


async def test_ten_sessions_and_two_streams_each_run_at_once_isolated(client: httpx.AsyncClient) -> None:
    starts = await asyncio.gather(*(client.post("/v1/sessions", json={"task": ADD_TASK_TEXT}) for _ in range(10)))
    ids = [answer.json()["id"] for answer in starts]
    assert len(set(ids)) == 10
    streams = await asyncio.gather(*(follow(client, session_id) for session_id in ids for _ in range(2)))
    for index, session_id in enumerate(ids):
        first, second = streams[2 * index], streams[2 * index + 1]
        assert [e.get("id") for e in first] == [e.get("id") for e in second], "two watchers saw different streams"
        assert all(e["data"]["session_id"] == session_id for e in first[:-1]), "an event leaked across sessions"
        assert first[-2]["event"] == "SessionFinished" and first[-2]["data"]["status"] == "completed"
    listed = {row["id"]: row for row in (await client.get("/v1/sessions")).json()}
    assert all(listed[session_id]["status"] == "completed" for session_id in ids)
