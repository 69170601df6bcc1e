"""The WebSocket stream and the SSE stream send the same events, in the same order, and resume the same way.

Both are followed over a real uvicorn server (the WebSocket with the
``websockets`` client, the SSE with httpx) while a session runs and waits at a
gate, then both are resumed from the same event id.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import ADD_TASK_TEXT, server_config
from tests.server.serving import serving
from tests.server.test_sse import parse_sse

websockets = pytest.importorskip("websockets", reason="the WebSocket stream needs the server extra's websockets")
from websockets.asyncio.client import connect  # noqa: E402 - after the importorskip
from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

Item = tuple[str, int | None, dict[str, Any]]


async def sse_items(base: str, session_id: str, **headers: str) -> list[Item]:
    """Every item of the SSE stream, as ``(event, id, data)``."""
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        answer = await client.get(f"/v1/sessions/{session_id}/events", headers=headers)
    assert answer.status_code == 200, answer.text
    return [(e["event"], int(e["id"]) if e.get("id") else None, e["data"]) for e in parse_sse(answer.text)]


async def ws_items(base: str, session_id: str, query: str = "", **headers: str) -> list[Item]:
    """Every message of the WebSocket stream until the server closes it, as ``(event, id, data)``."""
    items: list[Item] = []
    url = base.replace("http://", "ws://") + f"/v1/sessions/{session_id}/ws{query}"
    async with connect(url, additional_headers=headers, open_timeout=30) as socket:
        async for message in socket:
            item = json.loads(message)
            items.append((item["event"], item["id"], item["data"]))
        assert socket.close_code == 1000
    return items


async def test_sse_and_websocket_carry_the_same_events_live_and_on_resume(
    tmp_path: Path, scripted_model: str, make_app: Callable[..., Any]
) -> None:
    app = make_app(server_config(tmp_path, scripted_model, **{"gates.poll_s": 0.05}))
    with serving(app) as base:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            started = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "gates": ["convergence"]})).json()
            session_id = started["id"]
            # Both follow the session live from its start; it waits at its gate until both are following.
            by_sse = asyncio.create_task(sse_items(base, session_id))
            by_ws = asyncio.create_task(ws_items(base, session_id, "?after=0"))
            for _ in range(600):
                if (await client.get(f"/v1/sessions/{session_id}")).json()["pending_gates"]:
                    break
                await asyncio.sleep(0.1)
            assert not by_sse.done() and not by_ws.done(), "a stream ended while the session waited at its gate"
            approved = await client.post(f"/v1/debates/{session_id}/approve", json={"comment": "ok"})
            assert approved.status_code == 200, approved.text
            sse, ws = await asyncio.wait_for(asyncio.gather(by_sse, by_ws), 120)

        assert ws == sse, "the two streams differ"
        kinds = [event for event, _, _ in ws]
        assert kinds[0] == "SessionStarted" and kinds[-2:] == ["SessionFinished", "end"]
        assert kinds.index("GateRequested") < kinds.index("GateDecided") < kinds.index("SessionFinished")
        ids = [item_id for _, item_id, _ in ws if item_id is not None]
        assert ids == sorted(ids) and len(set(ids)) == len(ids) == len(ws) - 1, "every item but end has an id"

        cut = len(sse) // 2
        resume_at = sse[cut - 1][1]
        assert resume_at is not None
        rest = sse[cut:]
        assert await sse_items(base, session_id, **{"Last-Event-ID": str(resume_at)}) == rest
        assert await sse_items(base, session_id) == sse, "a late reader gets what the live one got"
        assert await ws_items(base, session_id) == ws
        assert await ws_items(base, session_id, f"?after={resume_at}") == rest
        assert await ws_items(base, session_id, **{"Last-Event-ID": str(resume_at)}) == rest


async def test_the_websocket_refuses_what_the_sse_stream_refuses(
    tmp_path: Path, scripted_model: str, make_app: Callable[..., Any]
) -> None:
    token = "t" * 24
    app = make_app(server_config(tmp_path, scripted_model), token=token)
    with serving(app) as base:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            assert (await client.get("/v1/sessions/nope/events")).status_code == 401
            session = (
                await client.post(
                    "/v1/sessions", json={"task": ADD_TASK_TEXT}, headers={"Authorization": f"Bearer {token}"}
                )
            ).json()
            plain = await client.get(f"/v1/sessions/{session['id']}/ws", params={"token": token})
            assert plain.status_code == 426 and "WebSocket" in plain.json()["message"]
        ws_base = base.replace("http://", "ws://")
        with pytest.raises(InvalidStatus) as refused:
            async with connect(f"{ws_base}/v1/sessions/{session['id']}/ws", open_timeout=30):
                pass
        assert refused.value.response.status_code == 403, "no token: the handshake is refused"
        for query, code in ((f"nope/ws?token={token}", 4404), (f"{session['id']}/ws?after=-1&token={token}", 1008)):
            async with connect(f"{ws_base}/v1/sessions/{query}", open_timeout=30) as socket:
                with pytest.raises(ConnectionClosed):
                    await socket.recv()
                assert socket.close_code == code
        items = await ws_items(base, session["id"], f"?token={token}")
        assert items[-1][0] == "end" and items[-2][0] == "SessionFinished"
