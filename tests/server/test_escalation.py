"""An escalated design debate under ``debatecode serve``: announced, answered over REST, and recorded.

The stalemate of ``tests/protocol/design``: flat satisfaction for three rounds
escalates. Among the options are Operational Simplicity's outbox and
Performance's Kafka; the moderator's draft recommends the outbox, and the human
picks Kafka, held by one perspective only (the minority option).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
from tests.protocol.design.conftest import BILLING_QUESTION, DEFAULT_SYNTHESIS, DebateScript
from tests.server.conftest import server_config
from tests.server.test_sse import follow

OUTBOX = "keep the outbox table and add a relay"
KAFKA = "publish invoice events through Kafka"
DRAFT = DEFAULT_SYNTHESIS.replace(
    "- Use SQLite now, with a migration path to PostgreSQL.", "- Keep the outbox table and add a relay."
)
STALEMATE = {"design.min_rounds": 3, "design.max_rounds": 5, "max_concurrency": 8, "token_budget": 5_000_000}
"""Medium complexity: 4 rounds planned, so the stalemate (3 flat rounds) comes first."""


def stalemate_script() -> DebateScript:
    return DebateScript(
        satisfaction=50,
        stance=lambda agent: {"operational-simplicity": OUTBOX, "performance": KAFKA}.get(
            agent, f"{agent} wants a staged hybrid"
        ),
        synthesis=DRAFT,
    )


async def wait_for(client: httpx.AsyncClient, session_id: str, field: str, *, timeout_s: float = 120) -> dict[str, Any]:
    """The session's detail once ``field`` is truthy (a waiting checkpoint or escalation), or its end."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        detail = (await client.get(f"/v1/sessions/{session_id}")).json()
        if detail[field] or detail["status"] not in ("pending", "running"):
            return detail
        assert asyncio.get_running_loop().time() < deadline, f"{field} never came: {detail}"
        await asyncio.sleep(0.05)


async def run_to_escalation(client: httpx.AsyncClient) -> str:
    """Start the stalemate with checkpoints on, continue at every checkpoint, stop when the escalation waits."""
    answer = await client.post("/v1/debates", json={"question": BILLING_QUESTION, "checkpoints": True})
    assert answer.status_code == 202, answer.text
    session_id: str = answer.json()["id"]
    while True:
        detail = (await client.get(f"/v1/sessions/{session_id}")).json()
        if detail["waiting_escalation"]:
            return session_id
        assert detail["status"] == "running", f"the debate ended before its escalation: {detail}"
        if detail["waiting_checkpoint"] is not None:
            done = await client.post(f"/v1/sessions/{session_id}/checkpoint", json={"action": "continue"})
            assert done.status_code == 200, done.text
        await asyncio.sleep(0.05)


def minority_option(asked: dict[str, Any]) -> dict[str, str]:
    """The option for Kafka, which only the Performance perspective holds."""
    [kafka] = [o for o in asked["options"] if KAFKA in o["text"]]
    assert "Performance" in kafka["text"] and OUTBOX not in kafka["text"]
    return kafka


def section(markdown: str, title: str) -> str:
    """The body of ``## title`` in ``markdown``."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.MULTILINE | re.DOTALL)
    assert match is not None, f"no ## {title} in the record"
    return match.group(1)


async def test_the_escalation_waits_for_a_choice_over_rest_which_the_record_keeps(
    tmp_path: Path, stalemate_model: str, make_app: Any
) -> None:
    app = make_app(server_config(tmp_path, stalemate_model, **STALEMATE))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        session_id = await run_to_escalation(client)

        asked = (await client.get(f"/v1/debates/{session_id}/escalation")).json()
        assert asked["status"] == "waiting" and asked["reason"].startswith("stalemate")
        labels = [o["label"] for o in asked["options"]]
        assert len(labels) >= 3 and labels == sorted(labels) and labels[0] == "A"
        kafka = minority_option(asked)
        assert asked["positions"]["Performance"] == f"{KAFKA}."

        refused = await client.post(f"/v1/sessions/{session_id}/escalation", json={"choice": "Z"})
        assert refused.status_code == 422 and ", ".join(labels) in refused.json()["message"]
        assert (await client.get(f"/v1/sessions/{session_id}")).json()["waiting_escalation"], "still waiting"

        chosen = await client.post(
            f"/v1/sessions/{session_id}/escalation",
            json={"choice": kafka["label"].lower(), "guidance": "Kafka for invoices only"},
        )
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["choice"] == kafka["label"] and chosen.json()["text"] == kafka["text"]
        again = await client.post(f"/v1/sessions/{session_id}/escalation", json={"choice": "A"})
        assert again.status_code == 409

        events = await follow(client, session_id)
        kinds = [event["event"] for event in events]
        assert kinds.index("Escalated") < kinds.index("EscalationDecided") < kinds.index("SessionFinished")
        escalated = events[kinds.index("Escalated")]["data"]
        assert escalated["awaiting"] is True and [o["label"] for o in escalated["options"]] == labels
        decided = events[kinds.index("EscalationDecided")]["data"]
        assert decided["choice"] == kafka["label"] and decided["decided_by"] == "human"
        assert decided["guidance"] == "Kafka for invoices only"
        assert events[-2]["data"]["status"] == "completed"

        turns = (await client.get(f"/v1/sessions/{session_id}/turns")).json()
        [journaled] = [turn for turn in turns if turn["key"] == "r0/escalation/human/choice"]
        assert journaled["metadata"]["choice"] == kafka["label"]
        assert (await client.get(f"/v1/sessions/{session_id}/escalation")).json()["status"] == "decided"

        adr = (await client.get(f"/v1/sessions/{session_id}/report")).json()["markdown"]
        escalation = section(adr, "Escalation")
        assert f"**Choice:** {kafka['label']}: {kafka['text']}" in escalation and "decided by human" in escalation
        assert "**Guidance:** Kafka for invoices only" in escalation


async def test_the_minority_option_chosen_over_rest_is_the_records_recommendation(
    tmp_path: Path, stalemate_model: str, make_app: Any
) -> None:
    """Needs the decision record to follow the human's choice (the ADR rework of issue 33, part 1)."""
    app = make_app(server_config(tmp_path, stalemate_model, **STALEMATE))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        session_id = await run_to_escalation(client)
        kafka = minority_option((await client.get(f"/v1/sessions/{session_id}/escalation")).json())
        chosen = await client.post(f"/v1/sessions/{session_id}/escalation", json={"choice": kafka["label"]})
        assert chosen.status_code == 200, chosen.text
        await follow(client, session_id)
        adr = (await client.get(f"/v1/sessions/{session_id}/report")).json()["markdown"]
        recommendation = section(adr, "Recommendation")
        assert KAFKA.lower() in recommendation.lower(), recommendation
        assert OUTBOX not in recommendation.lower(), "the moderator's draft overrode the human's choice"


async def test_a_design_debate_is_asked_for_gates_it_does_not_have_and_refuses(
    tmp_path: Path, stalemate_model: str, make_app: Any
) -> None:
    app = make_app(server_config(tmp_path, stalemate_model))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        answer = await client.post("/v1/debates", json={"question": BILLING_QUESTION, "gates": ["convergence"]})
        assert answer.status_code == 422
        assert "no approval gates" in answer.json()["message"] and "checkpoints" in answer.json()["message"]
        assert (await client.get("/v1/sessions")).json() == [], "nothing was started"


async def test_no_escalation_is_waiting_on_a_session_that_never_escalated(client: httpx.AsyncClient) -> None:
    from tests.server.conftest import ADD_TASK_TEXT

    started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT})).json()
    await follow(client, started["id"])
    assert (await client.get(f"/v1/sessions/{started['id']}/escalation")).json()["status"] == "none"
    answer = await client.post(f"/v1/sessions/{started['id']}/escalation", json={"choice": "A"})
    assert answer.status_code == 409 and "not waiting for a choice" in answer.json()["message"]
