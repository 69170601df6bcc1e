"""A session's engine events, live and resumable: ``GET .../events`` (SSE) and ``.../ws`` (WebSocket).

Both send the same items in the same order from the same point (``server/feed.py``):

- **SSE** (``GET /v1/sessions/{id}/events``): ``event:`` is the event type, ``data:``
  its fields as JSON, ``id:`` its feed id. A client that reconnects with
  ``Last-Event-ID`` (browsers do it by themselves) or ``?after=`` gets exactly the
  events it missed, then the live ones.
- **WebSocket** (``/v1/sessions/{id}/ws``): one JSON text message per item,
  ``{"event": ..., "id": ..., "data": ...}``; it resumes from ``?after=`` (or a
  ``Last-Event-ID`` header, for clients that can send one). After ``end`` (whose
  ``id`` is null) the server closes the socket (code 1000). A plain ``GET`` of the
  same path, without the upgrade, answers 426 and says how to connect.

Any number of clients can follow one session; each reads the feed on its own.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, Header, Query, Request, WebSocket, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.websockets import WebSocketDisconnect

from debatecode.errors import SessionNotFound
from debatecode.server.auth import COOKIE
from debatecode.server.context import ServerContext, context_of
from debatecode.server.feed import MAX_EVENT_ID, FeedItem, follow_feed, resume_point
from debatecode.server.schemas import ERROR_RESPONSES, ApiError

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

PING_S = 15
SHUTDOWN_GRACE_S = 5.0
"""How long a stream may take, once the server stops, to send its session's last events and ``end``."""
CLOSE_UNAUTHORIZED = 4401
CLOSE_NOT_FOUND = 4404
"""WebSocket close codes (the 4000s are the application's): no token, no such session."""

After = Annotated[int, Query(ge=0, le=MAX_EVENT_ID, description="Start after this event id (like Last-Event-ID).")]


@router.get(
    "/sessions/{session_id}/events",
    tags=["sessions"],
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "The session's events, as SSE."}},
)
async def session_events(
    session_id: str,
    request: Request,
    ctx: Annotated[ServerContext, Depends(context_of)],
    last_event_id: Annotated[str | None, Header()] = None,
    after: After = 0,
) -> EventSourceResponse:
    """Stream the session's events: ``event:`` is the event type, ``data:`` its fields as JSON, ``id:`` its feed id."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    start = resume_point(last_event_id, after)
    stopping = anyio.Event()  # set by sse-starlette when the server shuts down

    async def items() -> AsyncIterator[ServerSentEvent]:
        async for item in follow_feed(ctx, record.id, start, disconnected=request.is_disconnected, stopping=stopping):
            yield _sse(item)

    return EventSourceResponse(
        items(),
        ping=PING_S,
        shutdown_event=stopping,
        shutdown_grace_period=SHUTDOWN_GRACE_S,
    )


def _sse(item: FeedItem) -> ServerSentEvent:
    return ServerSentEvent(
        data=json.dumps(item.data), event=item.event, id=str(item.id) if item.id is not None else None
    )


@router.get(
    "/sessions/{session_id}/ws",
    tags=["sessions"],
    status_code=status.HTTP_426_UPGRADE_REQUIRED,
    responses={426: {"model": ApiError, "description": "Not a WebSocket handshake: connect with a WebSocket client."}},
)
async def session_socket_info(
    session_id: str,
    ctx: Annotated[ServerContext, Depends(context_of)],
    last_event_id: Annotated[str | None, Header()] = None,
    after: After = 0,
) -> JSONResponse:
    """The session's events over a WebSocket: the same items, order and resume (``?after=``) as ``.../events``.

    Each message is ``{"event": <type>, "id": <feed id>, "data": {...}}``; the last is ``end`` (id null), after
    which the server closes the socket. Asked without the WebSocket upgrade, this answers 426.
    """
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    resume_point(last_event_id, after)
    body = ApiError(
        error="UpgradeRequired",
        message=f"connect with a WebSocket client to ws(s)://<host>/v1/sessions/{record.id}/ws?after=<event id>; "
        "plain HTTP clients can follow the same events as SSE at .../events",
        exit_code=None,
    )
    return JSONResponse(
        body.model_dump(), status_code=status.HTTP_426_UPGRADE_REQUIRED, headers={"Upgrade": "websocket"}
    )


@router.websocket("/sessions/{session_id}/ws")
async def session_socket(websocket: WebSocket, session_id: str) -> None:
    """Send the session's feed items as JSON messages until ``end``; the client may leave at any time."""
    ctx: ServerContext = websocket.app.state.ctx
    token = ctx.options.token
    if token is not None and not _carries(websocket, token):
        await websocket.close(code=CLOSE_UNAUTHORIZED, reason="this server needs its token")
        return
    try:
        after = int(websocket.query_params.get("after", "0") or 0)
        if not 0 <= after <= MAX_EVENT_ID:
            raise ValueError(after)
        start = resume_point(websocket.headers.get("last-event-id"), after)
        record = await asyncio.to_thread(ctx.store.get_session, session_id)
    except SessionNotFound as exc:
        await _refuse(websocket, CLOSE_NOT_FOUND, str(exc))
        return
    except (ValueError, RequestValidationError):  # a bad ?after= or Last-Event-ID
        await _refuse(websocket, status.WS_1008_POLICY_VIOLATION, "after must be an event id (0 or more)")
        return
    await websocket.accept()
    left = anyio.Event()

    async def listen() -> None:
        try:
            while True:
                if (await websocket.receive())["type"] == "websocket.disconnect":
                    break
        finally:
            left.set()

    async def disconnected() -> bool:
        return left.is_set()

    listener = asyncio.ensure_future(listen())
    try:
        async for item in follow_feed(ctx, record.id, start, disconnected=disconnected, stopping=left):
            await websocket.send_text(json.dumps({"event": item.event, "id": item.id, "data": item.data}))
        await websocket.close(code=status.WS_1000_NORMAL_CLOSURE)
    except (WebSocketDisconnect, RuntimeError):  # the client left while we were sending
        pass
    finally:
        listener.cancel()


async def _refuse(websocket: WebSocket, code: int, reason: str) -> None:
    """Accept, then close with ``code`` and ``reason``: a client sees why (a refused handshake says only 403)."""
    await websocket.accept()
    await websocket.close(code=code, reason=reason[:120])  # a close reason is at most 123 bytes


def _carries(websocket: WebSocket, token: str) -> bool:
    """Whether the handshake carries the server's token (header, cookie or ``?token=``), as every HTTP request must."""
    header = websocket.headers.get("authorization", "")
    offered = [
        header[7:].strip() if header.lower().startswith("bearer ") else "",
        websocket.cookies.get(COOKIE, ""),
        websocket.query_params.get("token", ""),
    ]
    return any(candidate and secrets.compare_digest(candidate, token) for candidate in offered)
