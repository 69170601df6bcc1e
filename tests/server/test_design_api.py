"""A design debate over REST: started with POST /v1/debates, followed on its stream, read back as an ADR."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.protocol.design.conftest import SQLITE_QUESTION, DebateScript, RecordingModel
from tests.server.conftest import server_config
from tests.server.test_sse import follow
from tests.support.scripted_models import registered_model


@pytest.fixture
def design_model() -> Iterator[str]:
    with registered_model("design", RecordingModel(DebateScript())) as model:
        yield model


async def test_a_design_debate_started_over_rest_ends_in_a_decision_record(
    tmp_path: Path, design_model: str, make_app: Any
) -> None:
    app = make_app(server_config(tmp_path, design_model, max_concurrency=8))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        answer = await client.post("/v1/debates", json={"question": SQLITE_QUESTION})
        assert answer.status_code == 202, answer.text
        started = answer.json()
        assert started["kind"] == "design"
        events = await follow(client, started["id"])
        kinds = [event["event"] for event in events]
        assert kinds[0] == "SessionStarted" and kinds[-2:] == ["SessionFinished", "end"]
        assert events[-2]["data"]["status"] == "completed"
        speakers = {e["data"]["turn"]["agent_id"] for e in events if e["event"] == "TurnCompleted"}
        assert {"contrarian", "moonshot"} <= speakers
        detail = (await client.get(f"/v1/sessions/{started['id']}")).json()
        assert detail["kind"] == "design" and detail["status"] == "completed"
        report = (await client.get(f"/v1/sessions/{started['id']}/report")).json()
        assert report["path"].endswith(".md") and "/docs/decisions/adr-" in report["path"]
        assert "## Recommendation" in report["markdown"] and "## Dissents" in report["markdown"]
        page = await client.get(f"/sessions/{started['id']}")
        assert page.status_code == 200 and 'data-perspective="contrarian"' in page.text


async def test_a_question_that_names_a_server_file_is_debated_as_text_never_read(
    tmp_path: Path, design_model: str, make_app: Any
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET contents", encoding="utf-8")
    app = make_app(server_config(tmp_path, design_model, max_concurrency=8))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        started = (await client.post("/v1/debates", json={"question": str(secret)})).json()
        await follow(client, started["id"])
        turns = (await client.get(f"/v1/sessions/{started['id']}/turns")).json()
        assert turns and not any("TOP SECRET" in turn["prompt"] for turn in turns)


async def test_a_question_naming_context_files_is_refused(tmp_path: Path, design_model: str, make_app: Any) -> None:
    app = make_app(server_config(tmp_path, design_model))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        question = "---\ncontext: [/etc/passwd]\n---\nShould we use SQLite?"
        answer = await client.post("/v1/debates", json={"question": question})
        assert answer.status_code == 422 and "context files" in answer.json()["message"]
        assert (await client.get("/v1/sessions")).json() == []
