"""The journal: every turn of a session, by a key that survives a crash and resume.

A turn whose key is already journaled (a resumed or replayed session) is
taken from the journal instead of being produced again, so a resume neither
loses nor duplicates turns. Model turns, tool results and human decisions all
go through :meth:`Journal.replay_or_do`; :meth:`Journal.record` persists a
turn once, giving it the next sequence number, and announces it on the bus
(the store recorder writes it).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from debatecode.protocol.events import EventBus, TurnCompleted
from debatecode.store.records import TurnRecord

__all__ = ["Journal", "turn_key"]


def turn_key(round_no: int, phase: str, agent_id: str, kind: str) -> str:
    """The deterministic identity of a turn, stable across a crash and resume."""
    return f"r{round_no}/{phase}/{agent_id}/{kind}"


class Journal:
    """One session's turns by key, in recording order."""

    def __init__(self, session_id: str, bus: EventBus, stored: Iterable[TurnRecord] = ()) -> None:
        self.session_id = session_id
        self.bus = bus
        self._turns: dict[str, TurnRecord] = {t.key: t for t in stored}
        self.next_seq = max((t.seq for t in self._turns.values()), default=0) + 1
        self.replayed = 0
        """Turns taken from the journal instead of being produced again."""
        self._lock = asyncio.Lock()

    def __contains__(self, key: object) -> bool:
        return key in self._turns

    def __len__(self) -> int:
        return len(self._turns)

    def get(self, key: str) -> TurnRecord | None:
        return self._turns.get(key)

    def has_turn_id(self, turn_id: str) -> bool:
        return any(t.id == turn_id for t in self._turns.values())

    def new_turn(self, *, key: str, agent_id: str, role: str, kind: str, **fields: Any) -> TurnRecord:
        """A fresh, not yet recorded turn of this session (round and phase are read from ``key``)."""
        round_part, phase, *_ = key.split("/", 2)
        metadata = {"kind": kind, **fields.pop("metadata", {})}
        return TurnRecord(
            id=uuid.uuid4().hex,
            session_id=self.session_id,
            seq=0,
            key=key,
            round=int(round_part[1:]),
            phase=phase,
            agent_id=agent_id,
            agent_role=role,
            metadata=metadata,
            **fields,
        )

    def holds(self, key: str) -> bool:
        """Whether a turn is journaled under ``key`` (not counted as replayed)."""
        return key in self._turns

    def replay(self, key: str) -> TurnRecord | None:
        """The journaled turn under ``key`` (counted as replayed), or None."""
        stored = self._turns.get(key)
        if stored is not None:
            self.replayed += 1
        return stored

    async def replay_or_do(self, key: str, produce: Callable[[], Awaitable[TurnRecord]]) -> TurnRecord:
        """The journaled turn under ``key``, or a new one from ``produce()`` (not yet recorded)."""
        return self.replay(key) or await produce()

    async def record(self, turn: TurnRecord) -> TurnRecord:
        """Persist ``turn`` once, giving it the next sequence number; a journaled key is announced as reused."""
        if turn.key in self._turns:
            self.bus.emit(TurnCompleted(self.session_id, self._turns[turn.key], reused=True))
            return self._turns[turn.key]
        async with self._lock:
            turn = turn.model_copy(update={"seq": self.next_seq})
            self.next_seq += 1
            self._turns[turn.key] = turn
        self.bus.emit(TurnCompleted(self.session_id, turn))
        return turn

    def turns(self, phase: str | None = None, kind: str | None = None) -> list[TurnRecord]:
        """Recorded turns in order, optionally of one phase and kind."""
        found = [
            t
            for t in self._turns.values()
            if (phase is None or t.phase == phase) and (kind is None or t.metadata.get("kind") == kind)
        ]
        return sorted(found, key=lambda t: t.seq)
