"""SQLAlchemy tables of the session store and their mapping to the protocol records.

Five tables mirror the five pydantic records of :mod:`debatecode.store.records`,
column for field:

- ``debate_sessions`` ← :class:`~debatecode.store.records.SessionRecord`
- ``debate_turns`` ← :class:`~debatecode.store.records.TurnRecord`
- ``code_versions`` ← :class:`~debatecode.store.records.CodeVersionRecord`
- ``gate_decisions`` ← :class:`~debatecode.store.records.GateRecord`
- ``session_events`` ← :class:`~debatecode.store.records.EventRecord`
- ``session_leases`` ← :class:`~debatecode.store.records.SessionLease` (who runs a session now)

and two more hold the memory layer's records with their vectors
(:mod:`debatecode.memory.store` and :mod:`debatecode.memory.wisdom` map them):

- ``episodes`` ← :class:`~debatecode.memory.episodes.Episode`
- ``lessons`` ← :class:`~debatecode.memory.episodes.Lesson`

The types are dialect-neutral (SQLite by default, PostgreSQL supported): JSON for
structured fields, string ids, and timezone-aware timestamps that are always stored
and returned in UTC (SQLite keeps no zone, so a naive value read back is UTC).

The tables are created by the alembic revisions in ``store/migrations``, never by
``metadata.create_all``; a change here needs a new revision, and a test compares the
two so they cannot drift apart.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from debatecode.store.records import (
    CodeVersionRecord,
    EventRecord,
    GateRecord,
    SessionLease,
    SessionRecord,
    TurnRecord,
)

__all__ = [
    "Base",
    "CodeVersionRow",
    "EpisodeRow",
    "EventRow",
    "GateRow",
    "LeaseRow",
    "LessonRow",
    "SessionRow",
    "TurnRow",
    "UTCDateTime",
    "column_values",
    "record_from_row",
    "row_values",
]

# Explicit constraint names keep future alembic batch migrations (SQLite) stable.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ID = String(64)
NAME = String(255)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware timestamp, stored and returned in UTC.

    A naive datetime handed in is taken to be UTC already. SQLite returns naive
    values (it stores no zone), which are read back as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base of the store's tables."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class SessionRow(Base):
    """One debate session (``SessionRecord``)."""

    __tablename__ = "debate_sessions"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    schema_version: Mapped[int] = mapped_column(Integer)
    task_title: Mapped[str] = mapped_column(Text)
    task_path: Mapped[str] = mapped_column(Text)
    task_hash: Mapped[str] = mapped_column(String(128))
    topic: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32), index=True)
    kind: Mapped[str] = mapped_column(String(16), index=True, server_default="code")
    topology: Mapped[str] = mapped_column(String(64))
    coordination_protocol: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(NAME)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    initiated_by: Mapped[str] = mapped_column(NAME)
    out_dir: Mapped[str] = mapped_column(Text)
    repo_path: Mapped[str] = mapped_column(Text)
    branch: Mapped[str] = mapped_column(NAME)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    total_rounds: Mapped[int] = mapped_column(Integer)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    cost_usd: Mapped[float] = mapped_column(Float)
    duration_s: Mapped[float] = mapped_column(Float)
    final_consensus_score: Mapped[float | None] = mapped_column(Float)
    final_version_id: Mapped[str | None] = mapped_column(ID)
    outcome: Mapped[dict[str, Any]] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)


class TurnRow(Base):
    """One completed agent turn (``TurnRecord``)."""

    __tablename__ = "debate_turns"
    __table_args__ = (
        UniqueConstraint("session_id", "seq"),
        UniqueConstraint("session_id", "key"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    session_id: Mapped[str] = mapped_column(ID, ForeignKey("debate_sessions.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    key: Mapped[str] = mapped_column(NAME)
    round: Mapped[int] = mapped_column(Integer)
    phase: Mapped[str] = mapped_column(String(64))
    agent_id: Mapped[str] = mapped_column(NAME)
    agent_role: Mapped[str] = mapped_column(NAME)
    provider: Mapped[str] = mapped_column(NAME)
    model: Mapped[str] = mapped_column(NAME)
    prompt: Mapped[str] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)
    code: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32))
    confidence: Mapped[float | None] = mapped_column(Float)
    tool_calls: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    test_results: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    reflections: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    # ``metadata`` is reserved on declarative classes; the column keeps the name.
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSON)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    cost_usd: Mapped[float] = mapped_column(Float)
    response_time_ms: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CodeVersionRow(Base):
    """One committed code snapshot (``CodeVersionRecord``)."""

    __tablename__ = "code_versions"
    __table_args__ = (UniqueConstraint("session_id", "version_number"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    session_id: Mapped[str] = mapped_column(ID, ForeignKey("debate_sessions.id", ondelete="CASCADE"), index=True)
    turn_id: Mapped[str | None] = mapped_column(ID, ForeignKey("debate_turns.id", ondelete="SET NULL"), index=True)
    agent_id: Mapped[str] = mapped_column(NAME)
    language: Mapped[str] = mapped_column(String(32))
    code: Mapped[str] = mapped_column(Text)
    version_number: Mapped[int] = mapped_column(Integer)
    commit_sha: Mapped[str | None] = mapped_column(String(64))
    tests_passed: Mapped[int] = mapped_column(Integer)
    tests_total: Mapped[int] = mapped_column(Integer)
    test_pass_rate: Mapped[float] = mapped_column(Float)
    quality_score: Mapped[float | None] = mapped_column(Float)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON)
    diff_from_previous: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class GateRow(Base):
    """One approval gate and its decision (``GateRecord``)."""

    __tablename__ = "gate_decisions"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    session_id: Mapped[str] = mapped_column(ID, ForeignKey("debate_sessions.id", ondelete="CASCADE"), index=True)
    phase: Mapped[str] = mapped_column(String(64))
    round: Mapped[int] = mapped_column(Integer)
    summary: Mapped[str] = mapped_column(Text)
    artifacts: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(32), index=True)
    reviewer: Mapped[str] = mapped_column(NAME)
    reason: Mapped[str] = mapped_column(Text)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class EventRow(Base):
    """One engine event of a session (``EventRecord``), in emission order."""

    __tablename__ = "session_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ID, ForeignKey("debate_sessions.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LeaseRow(Base):
    """The process running a session (``SessionLease``). No foreign key: a run claims its id before creating it."""

    __tablename__ = "session_leases"

    session_id: Mapped[str] = mapped_column(ID, primary_key=True)
    lease_id: Mapped[str] = mapped_column(ID)
    pid: Mapped[int] = mapped_column(Integer)
    host: Mapped[str] = mapped_column(NAME)
    resuming: Mapped[bool] = mapped_column(Boolean)
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime)


class EpisodeRow(Base):
    """One Reflexion episode (``Episode``) with its embedding.

    ``seq`` orders episodes by insertion, for FIFO eviction. ``embedding`` holds
    ``dim`` little-endian float32 values made by the embedder named in
    ``embedder``; a different embedder or size means the vector is recomputed.
    No foreign key to ``debate_sessions``: episodes outlive the sessions they
    came from, and standalone Reflexion runs record no session.
    """

    __tablename__ = "episodes"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    schema_version: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(Integer, index=True)
    session_id: Mapped[str] = mapped_column(ID, index=True)
    turn_id: Mapped[str | None] = mapped_column(ID)
    agent_id: Mapped[str] = mapped_column(NAME, index=True)
    task_title: Mapped[str] = mapped_column(Text)
    task_hash: Mapped[str] = mapped_column(String(128))
    task_text: Mapped[str] = mapped_column(Text)
    attempt: Mapped[int] = mapped_column(Integer)
    code: Mapped[str] = mapped_column(Text)
    test_results: Mapped[dict[str, Any]] = mapped_column(JSON)
    failure_analysis: Mapped[str] = mapped_column(Text)
    reflection: Mapped[str] = mapped_column(Text)
    root_cause: Mapped[str] = mapped_column(Text)
    improvement: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    embedder: Mapped[str] = mapped_column(NAME)
    dim: Mapped[int] = mapped_column(Integer)


class LessonRow(Base):
    """One lesson of accumulated wisdom (``Lesson``) with its embedding (as ``EpisodeRow``)."""

    __tablename__ = "lessons"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    schema_version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    source_episode_ids: Mapped[list[str]] = mapped_column(JSON)
    task_hashes: Mapped[list[str]] = mapped_column(JSON)
    uses: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    embedder: Mapped[str] = mapped_column(NAME)
    dim: Mapped[int] = mapped_column(Integer)


# Record field name -> mapped attribute name, where they differ.
_ATTRIBUTE = {"metadata": "metadata_"}

RecordT = TypeVar("RecordT", SessionRecord, TurnRecord, CodeVersionRecord, GateRecord, EventRecord, SessionLease)


def row_values(record: BaseModel) -> dict[str, Any]:
    """The constructor keyword arguments of the row that stores ``record``.

    JSON fields are dumped in pydantic's JSON mode, so values such as paths or
    datetimes inside them are stored (and read back) as their JSON form.

    Raises:
        pydantic_core.PydanticSerializationError: a JSON field holds a value
            pydantic cannot serialise (the repository turns this into ``StoreError``).
    """
    return {_ATTRIBUTE.get(name, name): value for name, value in column_values(record).items()}


def column_values(record: BaseModel) -> dict[str, Any]:
    """The column values of the row that stores ``record``, by column name (a Core ``insert``'s parameters).

    Column names are the record's field names. JSON fields are dumped in pydantic's
    JSON mode, the other fields as they are.

    Raises:
        pydantic_core.PydanticSerializationError: a JSON field holds a value
            pydantic cannot serialise (the repository turns this into ``StoreError``).
    """
    values = record.model_dump(mode="python")
    structured = {name for name, value in values.items() if isinstance(value, dict | list)}
    if structured:
        values.update(record.model_dump(mode="json", include=structured))
    return values


def record_from_row(record_type: type[RecordT], row: Base) -> RecordT:
    """Rebuild a protocol record from its stored row.

    Raises:
        pydantic.ValidationError: the stored values no longer fit the record
            (the repository turns this into ``StoreError``).
    """
    values = {name: getattr(row, _ATTRIBUTE.get(name, name)) for name in record_type.model_fields}
    return record_type.model_validate(values)
