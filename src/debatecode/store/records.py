"""The persisted records of a debate: sessions, turns, code versions and approval gates.

These models are what the store writes and what a resumed session is rebuilt
from. They carry ``schema_version`` so that stored sessions keep loading when
the models grow; bump it together with an alembic revision. They live here, in
the store, because the store and the protocol both use them and the store sits
below the protocol; everyone imports them from here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA_VERSION",
    "SETTLED_STATUSES",
    "CodeVersionRecord",
    "EventRecord",
    "GateRecord",
    "GateStatus",
    "SessionKind",
    "SessionLease",
    "SessionRecord",
    "SessionStatus",
    "TurnRecord",
    "TurnStatus",
    "utcnow",
]

SCHEMA_VERSION = 1

SessionStatus = Literal["pending", "running", "completed", "failed", "budget_exceeded", "cancelled", "paused"]
SETTLED_STATUSES: frozenset[str] = frozenset({"completed", "failed", "budget_exceeded", "cancelled"})
"""The statuses a session ends in (it gets a ``completed_at``); ``paused`` can go on."""
"""``paused``: stopped at a checkpoint nobody answered in time; ``--resume`` continues it."""
SessionKind = Literal["code", "design"]
TurnStatus = Literal["ok", "no_code", "error", "rejected"]
GateStatus = Literal["pending", "approved", "rejected", "timed_out"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class SessionRecord(BaseModel):
    """One debate session: a task, a config, and where it got to."""

    model_config = ConfigDict(extra="forbid")

    id: str
    schema_version: int = SCHEMA_VERSION
    task_title: str
    task_path: str
    task_hash: str
    """sha256 of the task file's text, so a resume can refuse a changed task."""
    topic: str = ""
    """The task description."""
    status: SessionStatus = "pending"
    kind: SessionKind = "code"
    """``code`` (a ``solve`` session) or ``design`` (a ``debate`` session ending in a decision record)."""
    topology: str = "mesh"
    coordination_protocol: str = "independent"
    model: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    """The effective ``DebateConfig`` as JSON."""
    initiated_by: str = ""
    out_dir: str = ""
    repo_path: str = ""
    branch: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    completed_at: datetime | None = None
    total_rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    duration_s: float = 0.0
    final_consensus_score: float | None = None
    final_version_id: str | None = None
    outcome: dict[str, Any] = Field(default_factory=dict)
    """Winner, how it was chosen, its pass count, and the vote if one was needed."""
    error: str | None = None


class TurnRecord(BaseModel):
    """One completed agent turn: the prompt sent, the reply, and what running it showed."""

    model_config = ConfigDict(extra="forbid")

    id: str
    session_id: str
    seq: int
    """Order of completion within the session, from 1."""
    key: str
    """Deterministic identity of the turn (round, phase, agent, kind); a resume reuses a turn with the same key."""
    round: int
    phase: str
    agent_id: str
    agent_role: str
    provider: str = ""
    model: str = ""
    prompt: str = ""
    content: str = ""
    code: str | None = None
    status: TurnStatus = "ok"
    confidence: float | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    test_results: dict[str, Any] | None = None
    """A ``TestReport`` as JSON, when the turn's code was run."""
    reflections: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    response_time_ms: int = 0
    created_at: datetime = Field(default_factory=utcnow)


class CodeVersionRecord(BaseModel):
    """A snapshot of one candidate's code, committed to the session's git branch."""

    model_config = ConfigDict(extra="forbid")

    id: str
    session_id: str
    turn_id: str | None
    agent_id: str
    language: str = "python"
    code: str
    version_number: int
    """Sequential within the session, from 1."""
    commit_sha: str | None = None
    tests_passed: int = 0
    tests_total: int = 0
    test_pass_rate: float = 0.0
    quality_score: float | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    diff_from_previous: str = ""
    """Unified diff against this agent's previous version."""
    created_at: datetime = Field(default_factory=utcnow)


class GateRecord(BaseModel):
    """An approval gate: the debate waited here for a human decision."""

    model_config = ConfigDict(extra="forbid")

    id: str
    session_id: str
    phase: str
    round: int = 0
    summary: str = ""
    artifacts: dict[str, Any] = Field(default_factory=dict)
    """What the reviewer sees: the leader's code, its tests, the scores."""
    status: GateStatus = "pending"
    reviewer: str = ""
    reason: str = ""
    requested_at: datetime = Field(default_factory=utcnow)
    decided_at: datetime | None = None


class EventRecord(BaseModel):
    """One engine event as the store keeps it: the live feed of a session, replayable from any point.

    ``id`` grows across the whole store, so "every event after N" is one indexed
    query; the server's event stream uses it as the SSE ``Last-Event-ID``.
    """

    model_config = ConfigDict(extra="forbid")

    id: int = 0
    """Assigned by the store when the event is written."""
    session_id: str
    type: str
    """The event class name: ``TurnCompleted``, ``GateRequested``..."""
    data: dict[str, Any] = Field(default_factory=dict)
    """The event's fields as JSON."""
    created_at: datetime = Field(default_factory=utcnow)


class SessionLease(BaseModel):
    """Which process runs a session right now: one at a time may write its turns.

    Taken when a run or a resume starts and dropped when it ends; a lease whose
    process died on this host is taken over by the next resume.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str
    lease_id: str
    """Unique per run, so that a run only ever drops its own lease."""
    pid: int
    host: str
    resuming: bool = False
    acquired_at: datetime = Field(default_factory=utcnow)
