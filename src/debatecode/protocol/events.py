"""Typed events the engine emits, and the bus that delivers them.

The store, the CLI renderer and the server's event stream subscribe here;
nothing else reaches into the engine. Handlers run synchronously, in
subscription order, on the engine's thread. A failing handler is logged and
does not stop the debate, except the store recorder, which is registered as
``critical`` so that a lost write stops the session instead of silently
diverging from what the user sees.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from debatecode.execution.results import TestReport
from debatecode.store.records import CodeVersionRecord, SessionRecord, TurnRecord

__all__ = [
    "AgentStatusChanged",
    "CheckpointDecided",
    "CheckpointRequested",
    "CodeVersionCommitted",
    "Escalated",
    "EscalationDecided",
    "Event",
    "EventBus",
    "GateDecided",
    "GateRequested",
    "PhaseCompleted",
    "PhaseStarted",
    "RoundCompleted",
    "SessionFinished",
    "SessionStarted",
    "TestsRun",
    "TurnCompleted",
    "VoteCast",
    "event_data",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """Base of all engine events."""

    session_id: str


@dataclass(frozen=True)
class SessionStarted(Event):
    session: SessionRecord
    agents: list[str]
    sandbox: str
    resumed: bool = False
    reused_turns: int = 0


@dataclass(frozen=True)
class PhaseStarted(Event):
    phase: str
    round: int


@dataclass(frozen=True)
class PhaseCompleted(Event):
    phase: str
    round: int
    summary: str = ""


@dataclass(frozen=True)
class AgentStatusChanged(Event):
    agent_id: str
    status: str
    """Short live status: ``thinking``, ``testing``, ``done``, ``idle``..."""
    phase: str = ""


@dataclass(frozen=True)
class TurnCompleted(Event):
    turn: TurnRecord
    reused: bool = False
    """True when a resumed session replayed this turn from the store instead of calling the model."""


@dataclass(frozen=True)
class CodeVersionCommitted(Event):
    version: CodeVersionRecord
    reused: bool = False


@dataclass(frozen=True)
class TestsRun(Event):
    __test__ = False
    agent_id: str
    report: TestReport
    phase: str = ""


@dataclass(frozen=True)
class VoteCast(Event):
    voter: str
    choice: str | None
    """The agent id voted for, or None for an abstention (no parsable choice)."""
    options: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SessionFinished(Event):
    status: str
    outcome: dict[str, Any]
    error: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    """Session fields to persist with the final status (tokens, cost, timings...)."""


Handler = Callable[[Event], None]


class EventBus:
    """Synchronous publish/subscribe for engine events."""

    def __init__(self) -> None:
        self._handlers: list[tuple[Handler, bool]] = []

    def subscribe(self, handler: Handler, *, critical: bool = False) -> None:
        """Call ``handler`` for every event. Errors in a ``critical`` handler propagate."""
        self._handlers.append((handler, critical))

    def emit(self, event: Event) -> None:
        for handler, critical in self._handlers:
            if critical:
                handler(event)
                continue
            try:
                handler(event)
            except Exception:
                logger.exception("event handler %r failed on %s", handler, type(event).__name__)


@dataclass(frozen=True)
class RoundCompleted(Event):
    round: int
    scores: dict[str, int] = field(default_factory=dict)
    """Each reviewer's satisfaction this round."""
    leader: str | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class CheckpointRequested(Event):
    """The debate waits for Continue / Guide / End after ``round``."""

    round: int
    summary: str = ""


@dataclass(frozen=True)
class CheckpointDecided(Event):
    round: int
    action: str
    guidance: str | None = None


@dataclass(frozen=True)
class GateRequested(Event):
    phase: str
    summary: str
    gate_id: str = ""


@dataclass(frozen=True)
class GateDecided(Event):
    phase: str
    decision: str
    """``approved``, ``rejected`` or ``timed_out``."""
    reviewer: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Escalated(Event):
    """The debate could not settle the question and puts it to a human.

    A code debate names why and what is unsettled. A design debate whose human
    can answer from elsewhere (``debatecode serve``: ``POST .../escalation``) also
    lists the options to choose from and each perspective's position, and waits
    for an ``EscalationDecided``.
    """

    reason: str
    summary: str
    options: list[dict[str, str]] = field(default_factory=list)
    """The choices, in order: ``{"label": "A", "text": "..."}``."""
    positions: dict[str, str] = field(default_factory=dict)
    """Each perspective's last stance, by display name."""
    awaiting: bool = False
    """A human is being asked now: the session waits for a choice (or for its timeout)."""


@dataclass(frozen=True)
class EscalationDecided(Event):
    """The answer to an ``Escalated`` design debate: the option chosen, or none (``decided_by`` ``nobody``)."""

    choice: str | None
    """The label of the option chosen (``A``, ``B``...), or None when nobody chose in time."""
    text: str = ""
    """The chosen option's text."""
    guidance: str | None = None
    """What the human asked the record to say about the choice."""
    decided_by: str = "human"
    """``human``, or ``nobody`` when the question timed out unanswered."""


_ADAPTERS: dict[type[Event], TypeAdapter[Any]] = {}


def event_data(event: Event) -> dict[str, Any]:
    """The event's fields as JSON-ready values (records become dicts, datetimes ISO strings)."""
    adapter = _ADAPTERS.get(type(event))
    if adapter is None:
        adapter = _ADAPTERS[type(event)] = TypeAdapter(type(event))
    data: dict[str, Any] = adapter.dump_python(event, mode="json")
    return data
