"""``GET /v1/sessions/{id}/events``: a session's engine events as server-sent events, resumable.

Every event the engine emits is in the store's feed with a growing id, which
is the SSE ``id:``. A client that reconnects with ``Last-Event-ID`` (browsers do
it by themselves) gets exactly the events it missed, then the live ones. Any
number of clients can follow one session; each reads the feed on its own.
Sessions run by this server wake their streams the moment an event is written;
those run by another process (``debatecode solve``) are polled every
``poll_s``. The stream ends after the session's ``SessionFinished`` (or when
the session is no longer open and nothing is left to send) with an ``end`` event
naming the session's status.

When the server stops (SIGTERM), every stream hears it at once: the sessions this
server runs are cancelled, and each stream sends what is left of its session's
feed (its ``SessionFinished``, status ``cancelled``) and then ``end``; a stream of
a session run elsewhere ends with ``end`` and the status that session has now.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent

from debatecode.server.context import ServerContext, context_of
from debatecode.server.runs import is_finished_event
from debatecode.server.schemas import ERROR_RESPONSES

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

OPEN_STATUSES = ("pending", "running")
PING_S = 15
SHUTDOWN_GRACE_S = 5.0
"""How long a stream may take, once the server stops, to send its session's last events and ``end``."""
MAX_EVENT_ID = 2**63 - 1
"""The largest feed id a client may name: a SQL BIGINT (a larger one overflows SQLite's integers)."""


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
    after: Annotated[
        int, Query(ge=0, le=MAX_EVENT_ID, description="Start after this event id (like Last-Event-ID).")
    ] = 0,
) -> EventSourceResponse:
    """Stream the session's events: ``event:`` is the event type, ``data:`` its fields as JSON, ``id:`` its feed id."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    start = _resume_point(last_event_id, after)
    stopping = anyio.Event()  # set by sse-starlette when the server shuts down
    return EventSourceResponse(
        _follow(ctx, record.id, start, request, stopping),
        ping=PING_S,
        shutdown_event=stopping,
        shutdown_grace_period=SHUTDOWN_GRACE_S,
    )


def _resume_point(last_event_id: str | None, after: int) -> int:
    """Where the stream starts: ``Last-Event-ID`` when it is a feed id, else ``after``.

    A header that is no number at all is ignored (a browser echoes whatever ``id:`` it saw last).

    Raises:
        RequestValidationError: the header is a number beyond ``MAX_EVENT_ID``.
    """
    value = (last_event_id or "").strip()
    if not (value.isascii() and value.isdigit()):
        return after
    start = int(value)
    if start > MAX_EVENT_ID:
        raise RequestValidationError(
            [
                {
                    "type": "less_than_equal",
                    "loc": ("header", "last-event-id"),
                    "msg": f"Input should be less than or equal to {MAX_EVENT_ID}",
                    "input": value,
                }
            ]
        )
    return start


async def _follow(
    ctx: ServerContext, session_id: str, after: int, request: Request, stopping: anyio.Event
) -> AsyncIterator[ServerSentEvent]:
    while not await request.is_disconnected():
        signal = ctx.manager.signals.current(session_id)
        batch = await asyncio.to_thread(ctx.store.events, session_id, after=after)
        for event in batch:
            after = event.id
            yield ServerSentEvent(data=json.dumps(event.data), event=event.type, id=str(event.id))
            if is_finished_event(event.type):
                yield _end(session_id, "finished", str(event.data.get("status", "")))
                return
        if batch:
            continue
        if not _may_emit_more(ctx, session_id):
            if await asyncio.to_thread(ctx.store.events, session_id, after=after, limit=1):
                continue  # it wrote its last events since the read above: send them (its SessionFinished ends)
            yield _end(session_id, "closed", await _status(ctx, session_id))
            return
        if stopping.is_set():
            if ctx.manager.live(session_id) is None:  # run elsewhere: it goes on without this server
                yield _end(session_id, "server_stopped", await _status(ctx, session_id))
                return
            ctx.manager.cancel_all()  # its SessionFinished (cancelled) is on its way
        await _wait_any(signal, stopping, ctx.options.poll_s)


def _end(session_id: str, reason: str, status: str) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps({"session_id": session_id, "reason": reason, "status": status}), event="end")


async def _status(ctx: ServerContext, session_id: str) -> str:
    return (await asyncio.to_thread(ctx.store.get_session, session_id)).status


async def _wait_any(signal: asyncio.Event, stopping: anyio.Event, timeout_s: float) -> None:
    """Until the session's next event, the server stopping (when it is not yet), or ``timeout_s``."""
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(signal.wait())]
    if not stopping.is_set():
        waits.append(asyncio.ensure_future(stopping.wait()))
    try:
        await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()


def _may_emit_more(ctx: ServerContext, session_id: str) -> bool:
    live = ctx.manager.live(session_id)
    if live is not None:
        return live.running
    return ctx.store.get_session(session_id).status in OPEN_STATUSES
