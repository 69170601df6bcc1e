"""Writes engine events to the store as they happen: every event to the session's feed, and turns, versions and status to their tables.

It lives with the events it reads (the protocol), not in the store, so that
the store never imports the layer above it.

Subscribed to the event bus as a *critical* handler: if a write fails, the
debate stops rather than run on with a record that no longer matches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode.protocol.events import (
    CodeVersionCommitted,
    Event,
    SessionFinished,
    SessionStarted,
    TurnCompleted,
    event_data,
)
from debatecode.store.records import SETTLED_STATUSES, EventRecord, utcnow

if TYPE_CHECKING:
    from debatecode.store.repository import SessionStore

__all__ = ["StoreRecorder"]


class StoreRecorder:
    """Persists turns, code versions and session status from engine events, and every event to the feed.

    A turn, version or status change and the feed event announcing it are
    written in one transaction, so a client that reads an event from the store
    also finds what it announces, and a crash never leaves one without the other.
    """

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    def __call__(self, event: Event) -> None:
        record = EventRecord(session_id=event.session_id, type=type(event).__name__, data=event_data(event))
        if isinstance(event, TurnCompleted) and not event.reused:
            self.store.add_turn(event.turn, event=record)
        elif isinstance(event, CodeVersionCommitted) and not event.reused:
            self.store.add_code_version(event.version, event=record)
        elif isinstance(event, SessionStarted):
            self.store.update_session(event.session_id, event=record, status="running", error=None)
        elif isinstance(event, SessionFinished):
            fields = dict(event.fields)
            fields.update(status=event.status, outcome=event.outcome, error=event.error)
            if event.status in SETTLED_STATUSES:
                fields.setdefault("completed_at", utcnow())
            self.store.update_session(event.session_id, event=record, **fields)
        else:
            self.store.add_event(record)
