"""Following a session's feed: what the SSE and the WebSocket streams both send, in the same order, from the same point.

Every event the engine emits is in the store's feed with a growing id. A
follower starts after a given id (``Last-Event-ID``, or ``?after=``), sends what
is stored, then waits for more: sessions run by this server wake it the moment
an event is written, those run by another process (``debatecode solve``) are
polled every ``poll_s``. It ends after the session's ``SessionFinished`` (or
when the session is no longer open and nothing is left to send) with an ``end``
item naming the session's status.

When the server stops, every follower hears it at once: the sessions this
server runs are cancelled and each follower sends what is left of its session's
feed (its ``SessionFinished``, status ``cancelled``) and then ``end``; a
follower of a session run elsewhere ends with ``end`` and the status that
session has now.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi.exceptions import RequestValidationError

from debatecode.server.context import ServerContext
from debatecode.server.runs import is_finished_event

__all__ = ["MAX_EVENT_ID", "FeedItem", "follow_feed", "resume_point"]

OPEN_STATUSES = ("pending", "running")
MAX_EVENT_ID = 2**63 - 1
"""The largest feed id a client may name: a SQL BIGINT (a larger one overflows SQLite's integers)."""
END = "end"
"""The type of the last item of every stream."""


@dataclass(frozen=True)
class FeedItem:
    """One item of a stream: an engine event with its feed id, or the closing ``end`` (no id)."""

    event: str
    data: dict[str, Any]
    id: int | None = None


def resume_point(last_event_id: str | None, after: int) -> int:
    """Where a stream starts: ``Last-Event-ID`` when it is a feed id, else ``after``.

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


async def follow_feed(
    ctx: ServerContext,
    session_id: str,
    after: int,
    *,
    disconnected: Callable[[], Awaitable[bool]],
    stopping: anyio.Event,
) -> AsyncIterator[FeedItem]:
    """The items of ``session_id``'s feed after id ``after``, live, until ``end`` or the client leaves."""
    while not await disconnected():
        signal = ctx.manager.signals.current(session_id)
        batch = await asyncio.to_thread(ctx.store.events, session_id, after=after)
        for event in batch:
            after = event.id
            yield FeedItem(event.type, event.data, event.id)
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


def _end(session_id: str, reason: str, status: str) -> FeedItem:
    return FeedItem(END, {"session_id": session_id, "reason": reason, "status": status})


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
