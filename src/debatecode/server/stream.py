"""``GET /v1/sessions/{id}/events``: a session's engine events as server-sent events, resumable.

Every event the engine emits is in the store's feed with a growing id, which
is the SSE ``id:``. A client that reconnects with ``Last-Event-ID`` (browsers do
it by themselves) gets exactly the events it missed, then the live ones. Any
number of clients can follow one session; each reads the feed on its own.
Sessions run by this server wake their streams the moment an event is written;
those run by another process (``debatecode solve``) are polled every
``poll_s``. The stream ends after the session's ``SessionFinished`` (or when
the session is no longer open and nothing is left to send) with an ``end`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from sse_starlette import EventSourceResponse, ServerSentEvent

from debatecode.server.context import ServerContext, context_of
from debatecode.server.runs import is_finished_event
from debatecode.server.schemas import ERROR_RESPONSES

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

OPEN_STATUSES = ("pending", "running")
PING_S = 15


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
    after: Annotated[int, Query(ge=0, description="Start after this event id (like Last-Event-ID).")] = 0,
) -> EventSourceResponse:
    """Stream the session's events: ``event:`` is the event type, ``data:`` its fields as JSON, ``id:`` its feed id."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    start = _resume_point(last_event_id, after)
    return EventSourceResponse(_follow(ctx, record.id, start, request), ping=PING_S)


def _resume_point(last_event_id: str | None, after: int) -> int:
    if last_event_id is not None and last_event_id.strip().isdigit():
        return int(last_event_id.strip())
    return after


async def _follow(ctx: ServerContext, session_id: str, after: int, request: Request) -> AsyncIterator[ServerSentEvent]:
    while not await request.is_disconnected():
        signal = ctx.manager.signals.current(session_id)
        batch = await asyncio.to_thread(ctx.store.events, session_id, after=after)
        for event in batch:
            after = event.id
            yield ServerSentEvent(data=json.dumps(event.data), event=event.type, id=str(event.id))
            if is_finished_event(event.type):
                yield ServerSentEvent(data=json.dumps({"session_id": session_id, "reason": "finished"}), event="end")
                return
        if batch:
            continue
        if not _may_emit_more(ctx, session_id):
            yield ServerSentEvent(data=json.dumps({"session_id": session_id, "reason": "closed"}), event="end")
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(signal.wait(), ctx.options.poll_s)


def _may_emit_more(ctx: ServerContext, session_id: str) -> bool:
    live = ctx.manager.live(session_id)
    if live is not None:
        return live.running
    return ctx.store.get_session(session_id).status in OPEN_STATUSES
