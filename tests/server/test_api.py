"""The REST API over httpx's ASGI transport: start a scripted solve, read it back, decide gates, refuse bad input."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import ADD_TASK_TEXT, ROUNDS, server_config

WAIT_S = 60.0
"""The longest a test waits for a session to reach a state."""


async def wait_status(client: httpx.AsyncClient, session_id: str, *wanted: str) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while True:
        body: dict[str, Any] = (await client.get(f"/v1/sessions/{session_id}")).json()
        if body["status"] in wanted and not body["live"]:
            return body
        assert asyncio.get_running_loop().time() < deadline, f"session still {body['status']}"
        await asyncio.sleep(0.1)


async def wait_for(client: httpx.AsyncClient, session_id: str, field: str) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while True:
        body: dict[str, Any] = (await client.get(f"/v1/sessions/{session_id}")).json()
        if body[field]:
            return body
        assert asyncio.get_running_loop().time() < deadline, f"no {field} in {body}"
        await asyncio.sleep(0.1)


async def test_health_names_the_store_and_running_sessions(client: httpx.AsyncClient) -> None:
    answer = await client.get("/v1/health")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok" and body["running"] == 0 and body["store"].startswith("sqlite:///")


async def test_a_solve_started_over_rest_runs_to_the_end_and_reads_back(client: httpx.AsyncClient) -> None:
    answer = await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT})
    assert answer.status_code == 202, answer.text
    started = answer.json()
    assert started["events"] == f"/v1/sessions/{started['id']}/events"
    done = await wait_status(client, started["id"], "completed")
    assert done["tests_passed"] == done["tests_total"] and done["tests_total"] > 0
    assert done["kind"] == "code" and done["title"]
    listed = (await client.get("/v1/sessions")).json()
    assert [row["id"] for row in listed] == [started["id"]]
    turns = (await client.get(f"/v1/sessions/{started['id']}/turns")).json()
    assert turns and all(turn["session_id"] == started["id"] for turn in turns)
    assert any("def add" in (turn["code"] or "") for turn in turns)
    versions = (await client.get(f"/v1/sessions/{started['id']}/versions")).json()
    assert versions and versions[0]["version_number"] == 1
    diff = (await client.get(f"/v1/sessions/{started['id']}/versions/1/diff")).json()
    assert diff["from"] is None and "+def add" in diff["diff"]
    audit = (await client.get(f"/v1/sessions/{started['id']}/audit")).json()
    assert audit["session"]["id"] == started["id"] and len(audit["turns"]) == len(turns)
    report = (await client.get(f"/v1/sessions/{started['id']}/report")).json()
    assert report["markdown"] and "add" in report["markdown"]


async def test_a_session_id_prefix_reads_the_session(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT})).json()
    await wait_status(client, started["id"], "completed")
    assert (await client.get(f"/v1/sessions/{started['id'][:6]}")).json()["id"] == started["id"]


async def test_a_gate_waits_until_approved_over_rest(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "gates": ["convergence"]})).json()
    waiting = await wait_for(client, started["id"], "pending_gates")
    assert waiting["status"] == "running"
    gates = (await client.get(f"/v1/sessions/{started['id']}/gates")).json()
    assert [gate["status"] for gate in gates] == ["pending"] and gates[0]["phase"] == "convergence"
    approved = await client.post(f"/v1/sessions/{started['id']}/gates/approve", json={"comment": "looks right"})
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    assert approved.json()["reason"] == "looks right" and approved.json()["reviewer"] == "web"
    await wait_status(client, started["id"], "completed")
    again = await client.post(f"/v1/sessions/{started['id']}/gates/approve", json={})
    assert again.status_code == 409 and "not waiting" in again.json()["message"]


async def test_a_rejected_gate_stops_the_session_as_cancelled(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "gates": ["convergence"]})).json()
    await wait_for(client, started["id"], "pending_gates")
    rejected = await client.post(f"/v1/sessions/{started['id']}/gates/reject", json={"comment": "not this one"})
    assert rejected.json()["status"] == "rejected"
    assert (await wait_status(client, started["id"], "cancelled"))["status"] == "cancelled"


async def test_a_checkpoint_waits_for_guidance_that_later_prompts_show(
    tmp_path: Path, unsatisfied_model: str, make_app: Any
) -> None:
    app = make_app(server_config(tmp_path, unsatisfied_model, **ROUNDS))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "checkpoints": True})).json()
        waiting = await wait_for(client, started["id"], "waiting_checkpoint")
        assert waiting["waiting_checkpoint"] == 1
        guided = await client.post(
            f"/v1/sessions/{started['id']}/checkpoint", json={"action": "guide", "guidance": "prefer one line"}
        )
        assert guided.status_code == 200 and guided.json() == {"round": 1, "action": "guide"}
        await wait_status(client, started["id"], "completed")
        turns = (await client.get(f"/v1/sessions/{started['id']}/turns")).json()
        decisions = [turn for turn in turns if turn["phase"] == "checkpoint"]
        assert [turn["content"] for turn in decisions] == ["guide: prefer one line"]
        assert any("prefer one line" in turn["prompt"] for turn in turns if turn["seq"] > decisions[0]["seq"])


async def test_cancel_stops_a_running_session_and_keeps_its_turns(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "gates": ["convergence"]})).json()
    await wait_for(client, started["id"], "pending_gates")
    cancelled = await client.post(f"/v1/sessions/{started['id']}/cancel")
    assert cancelled.status_code == 202
    done = await wait_status(client, started["id"], "cancelled")
    assert done["status"] == "cancelled"
    assert (await client.get(f"/v1/sessions/{started['id']}/turns")).json()
    again = await client.post(f"/v1/sessions/{started['id']}/cancel")
    assert again.status_code == 409 and "not running" in again.json()["message"]


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"task": "no front matter, no tests"}, 422, "task"),
        ({}, 422, "exactly one of task"),
        ({"task": ADD_TASK_TEXT, "overrides": {"agnets": 2}}, 422, "agnets"),
        ({"task": ADD_TASK_TEXT, "overrides": {"store_url": "sqlite:///x.db"}}, 422, "chosen by the server"),
        ({"task": ADD_TASK_TEXT, "overrides": {"sandbox.backend": "unsafe-host"}}, 422, "unsafe-host"),
        ({"task": ADD_TASK_TEXT, "overrides": {"model": "nosuchprovider/x"}}, 422, "nosuchprovider"),
        ({"task": ADD_TASK_TEXT, "gates": ["lunch"]}, 422, "gates"),
    ],
)
async def test_bad_requests_get_4xx_json_with_the_cli_message(
    client: httpx.AsyncClient, body: dict[str, Any], status: int, says: str
) -> None:
    answer = await client.post("/v1/sessions", json=body)
    assert answer.status_code == status, answer.text
    error = answer.json()
    assert says in error["message"] and error["error"] and error["exit_code"] == 2
    assert (await client.get("/v1/sessions")).json() == [] or all(
        row["status"] != "running" for row in (await client.get("/v1/sessions")).json()
    )


async def test_an_unknown_session_is_404_with_the_cli_message(client: httpx.AsyncClient) -> None:
    for path in ("/v1/sessions/nope", "/v1/sessions/nope/turns", "/v1/sessions/nope/events"):
        answer = await client.get(path)
        assert answer.status_code == 404 and "nope" in answer.json()["message"]
    answer = await client.post("/v1/sessions/nope/checkpoint", json={"action": "continue"})
    assert answer.status_code == 404


async def test_a_checkpoint_answer_with_no_checkpoint_waiting_is_a_conflict(client: httpx.AsyncClient) -> None:
    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT})).json()
    await wait_status(client, started["id"], "completed")
    answer = await client.post(f"/v1/sessions/{started['id']}/checkpoint", json={"action": "end"})
    assert answer.status_code == 409 and "not waiting at a checkpoint" in answer.json()["message"]
    guide = await client.post(f"/v1/sessions/{started['id']}/checkpoint", json={"action": "guide"})
    assert guide.status_code == 422 and "guidance" in guide.json()["message"]


async def test_memory_search_refuses_an_empty_query_and_answers_a_list(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/memory/search", params={"q": "   "})).status_code == 422
    answer = await client.get("/v1/memory/search", params={"q": "off by one"})
    assert answer.status_code == 200 and answer.json() == []


async def test_a_task_path_outside_the_servers_folder_is_refused(client: httpx.AsyncClient) -> None:
    for path in ("/etc/passwd", "../../../../etc/passwd"):
        answer = await client.post("/v1/sessions", json={"task_path": path})
        assert answer.status_code == 422 and "working folder" in answer.json()["message"]


async def test_listing_sessions_by_an_unknown_status_is_refused(client: httpx.AsyncClient) -> None:
    """Issue 31, item 14: `?status=bogus` answered `[]`, as if no session had that status."""
    answer = await client.get("/v1/sessions", params={"status": "bogus"})
    assert answer.status_code == 422, answer.text
    assert "status" in answer.text and "completed" in answer.text
    known = await client.get("/v1/sessions", params={"status": "completed"})
    assert known.status_code == 200 and known.json() == []
