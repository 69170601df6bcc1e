"""``SessionStore``: sessions, turns and code versions in a SQL database.

The store is chosen by a SQLAlchemy URL. SQLite (``sqlite:///path/to.db``) is the
embedded default; PostgreSQL (``postgresql+psycopg://user:pw@host/db``) works too.

Durability rules, so a crash mid-debate leaves a consistent store:

- every write method is one short transaction, committed before it returns (a turn
  is on disk as soon as ``add_turn`` returns);
- SQLite runs in WAL mode with foreign keys on and a busy timeout, and write
  transactions start with ``BEGIN IMMEDIATE`` so concurrent writers queue on the
  busy timeout instead of failing half-way;
- opening a store runs the alembic migrations to head, inside one transaction.

One engine per store, one connection per call: a store may be shared between
threads. Appends (sessions, turns, code versions, events) and the session reads
and updates of a debate are Core statements, with no ORM unit of work, so the
per-turn writes stay cheap; the other reads and the gate decisions use an ORM
session. SQLAlchemy and alembic errors never leave this module; they become
``StoreError`` naming the (password-masked) URL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from alembic import command
from alembic.util import CommandError
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError
from sqlalchemy import Connection, Engine, Table, delete, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError, StatementError
from sqlalchemy.orm import Session, sessionmaker

from debatecode.errors import SessionNotFound, StoreError
from debatecode.store.database import (
    WRITE_OPTION,
    build_engine,
    display_url,
    migration_config,
    unwritable_sqlite_file,
)
from debatecode.store.models import (
    Base,
    CodeVersionRow,
    EventRow,
    GateRow,
    LeaseRow,
    SessionRow,
    TurnRow,
    column_values,
    record_from_row,
)
from debatecode.store.records import (
    CodeVersionRecord,
    EventRecord,
    GateRecord,
    SessionLease,
    SessionRecord,
    TurnRecord,
    utcnow,
)

__all__ = ["SessionStore", "open_store"]

logger = logging.getLogger(__name__)

_MIGRATION_LOCK_KEY = 0x64656261  # PostgreSQL advisory lock serialising concurrent migrations
_AMBIGUOUS_SHOWN = 10


class SessionStore:
    """Reads and writes debate sessions, their turns and their code versions.

    Opening a store migrates its database to the current schema. Every write is
    committed before the method returns. Use ``close()`` (or ``with`` / ``async with``) when done.
    """

    def __init__(self, url: str) -> None:
        """Open (and create or migrate, if needed) the store at ``url``.

        A SQLite file this process cannot write (a read-only mount, no write
        permission) whose schema is current is opened for reading only
        (``read_only``): listing and showing work, and a write raises
        ``StoreError`` saying the store is read-only.

        Raises:
            ConfigError: a SQLite file's folder does not exist.
            StoreError: the URL is unusable, the database cannot be reached, or
                it cannot be migrated (for example it was written by a newer
                debatecode, or it is read-only and older than this debatecode).
        """
        self._url = display_url(url)
        self._closed = False
        self.read_only: Path | None = None
        """The SQLite file when the store was opened for reading only (it cannot be written), else None."""
        self._open(build_engine(url))
        try:
            self._migrate(self._writer)
        except StoreError as exc:
            self._engine.dispose()
            self._open_read_only(url, exc)
        except BaseException:
            self._engine.dispose()
            raise
        else:
            self.read_only = unwritable_sqlite_file(url)  # readable as it is (its -shm file exists), not writable

    def _open(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        self._readers = sessionmaker(self._engine, expire_on_commit=False)
        self._writers = sessionmaker(self._writer, expire_on_commit=False)

    def _open_read_only(self, url: str, failure: StoreError) -> None:
        """After ``failure`` to migrate: open a SQLite file this process cannot write, if its schema is current.

        Raises:
            StoreError: ``failure`` when the store is not such a file;
                else that the store is read-only and its schema is not the current one.
        """
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        path = unwritable_sqlite_file(url)
        if path is None:
            raise failure
        self._open(build_engine(f"sqlite:///file:{path}?mode=ro&immutable=1&uri=true"))
        try:
            with self._translate("read the store's schema version"), self._engine.connect() as connection:
                current = MigrationContext.configure(connection).get_current_revision()
        except BaseException:
            self._engine.dispose()
            raise
        head = ScriptDirectory.from_config(migration_config()).get_current_head()
        if current != head:
            self._engine.dispose()
            raise StoreError(
                f"store {self._url} is read-only ({path} or its folder cannot be written) and its schema "
                f"({current or 'empty'}) is older than this debatecode's ({head}), so it cannot be migrated: make "
                "it writable, or copy it to a writable folder and point store_url there"
            )
        self.read_only = path
        logger.info("store %s is read-only: it can be read, not written", self._url)

    @property
    def url(self) -> str:
        """The store's URL, password masked."""
        return self._url

    def __repr__(self) -> str:
        return f"SessionStore({self._url!r})"

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SessionStore:
        """``async with open_store(url) as store:`` closes the store on the way out, like ``with``."""
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store's connections. Closing twice is harmless."""
        if not self._closed:
            self._closed = True
            with self._translate("close the store"):
                self._engine.dispose()

    # -- sessions ---------------------------------------------------------------

    def create_session(self, rec: SessionRecord) -> None:
        """Store a new session.

        Raises:
            StoreError: a session with this id exists, or the write failed.
        """
        self._insert(f"create session {rec.id}", _table(SessionRow), rec)

    def update_session(self, session_id: str, *, event: EventRecord | None = None, **fields: Any) -> SessionRecord:
        """Change fields of a stored session and return the updated record.

        ``fields`` are ``SessionRecord`` field names (``id`` excepted) and are
        validated like the record. ``updated_at`` is set to now unless given.
        With ``event``, the feed event announcing the change is appended in the
        same transaction.

        Raises:
            SessionNotFound: no session has exactly this id.
            StoreError: an unknown field or invalid value, or the write failed.
        """
        unknown = sorted(set(fields) - set(SessionRecord.model_fields))
        if unknown:
            known = ", ".join(name for name in SessionRecord.model_fields if name != "id")
            raise StoreError(
                f"cannot update session {session_id}: unknown field(s) {', '.join(unknown)}; known: {known}"
            )
        if "id" in fields:
            raise StoreError(f"cannot update session {session_id}: the id of a session never changes")
        table = _table(SessionRow)
        with self._connection(f"update session {session_id}", write=True) as connection:
            query = select(table).where(table.c.id == session_id).with_for_update()
            row = connection.execute(query).mappings().first()
            if row is None:
                raise SessionNotFound(session_id)
            stored = SessionRecord.model_validate(dict(row))
            merged = stored.model_dump() | {"updated_at": utcnow()} | fields
            try:
                updated = SessionRecord.model_validate(merged)
            except ValidationError as exc:
                raise StoreError(f"cannot update session {session_id}: {exc}") from exc
            connection.execute(update(table).where(table.c.id == session_id), column_values(updated))
            if event is not None:
                self._append_event(connection, event)
        return updated

    def get_session(self, id_or_prefix: str) -> SessionRecord:
        """The session with this id, or the only one whose id starts with it.

        Raises:
            SessionNotFound: no session matches, or the prefix matches several
                (the message lists them).
            StoreError: the read failed.
        """
        if not id_or_prefix:
            raise SessionNotFound(id_or_prefix, "give a session id or a prefix of one")
        table = _table(SessionRow)
        with self._connection(f"read session {id_or_prefix!r}", write=False) as connection:
            row = connection.execute(select(table).where(table.c.id == id_or_prefix)).mappings().first()
            if row is None:
                prefix_of_id = func.substr(table.c.id, 1, len(id_or_prefix)) == id_or_prefix
                query = select(table).where(prefix_of_id).order_by(table.c.id).limit(_AMBIGUOUS_SHOWN + 1)
                matches = connection.execute(query).mappings().all()
                if not matches:
                    raise SessionNotFound(id_or_prefix)
                if len(matches) > 1:
                    shown = ", ".join(match["id"] for match in matches[:_AMBIGUOUS_SHOWN])
                    more = ", ..." if len(matches) > _AMBIGUOUS_SHOWN else ""
                    raise SessionNotFound(id_or_prefix, f"the prefix is ambiguous; it matches {shown}{more}")
                row = matches[0]
            return SessionRecord.model_validate(dict(row))

    def list_sessions(self, limit: int = 50, status: str | None = None, kind: str | None = None) -> list[SessionRecord]:
        """Up to ``limit`` sessions, newest first, optionally only those with ``status`` and of ``kind``.

        Raises:
            StoreError: the read failed.
        """
        query = select(SessionRow).order_by(SessionRow.created_at.desc(), SessionRow.id.desc()).limit(max(limit, 0))
        if status is not None:
            query = query.where(SessionRow.status == status)
        if kind is not None:
            query = query.where(SessionRow.kind == kind)
        with self._transaction("list sessions", write=False) as db:
            return [record_from_row(SessionRecord, row) for row in db.scalars(query)]

    # -- turns --------------------------------------------------------------------

    def add_turn(self, rec: TurnRecord, *, event: EventRecord | None = None) -> None:
        """Store a completed turn; it is committed when this returns.

        With ``event``, the feed event announcing the turn is appended in the same
        transaction: a reader never sees one without the other, even after a crash.

        Raises:
            StoreError: the session does not exist, the session already has a
                turn with this ``seq`` or ``key`` (or this id), or the write failed.
        """
        self._insert(f"add turn {rec.seq} ({rec.key}) of session {rec.session_id}", _table(TurnRow), rec, event)

    def turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turns in ``seq`` order (empty for an unknown session).

        Raises:
            StoreError: the read failed.
        """
        query = select(TurnRow).where(TurnRow.session_id == session_id).order_by(TurnRow.seq)
        with self._transaction(f"read the turns of session {session_id}", write=False) as db:
            return [record_from_row(TurnRecord, row) for row in db.scalars(query)]

    def token_totals(self, session_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(prompt, completion) tokens of the stored turns of each of ``session_ids``, summed in one query.

        A session without turns (or unknown) is absent. Raises:
            StoreError: the read failed.
        """
        if not session_ids:
            return {}
        query = (
            select(TurnRow.session_id, func.sum(TurnRow.prompt_tokens), func.sum(TurnRow.completion_tokens))
            .where(TurnRow.session_id.in_(list(session_ids)))
            .group_by(TurnRow.session_id)
        )
        with self._transaction(f"sum the tokens of {len(session_ids)} session(s)", write=False) as db:
            return {str(sid): (int(prompt or 0), int(completion or 0)) for sid, prompt, completion in db.execute(query)}

    # -- code versions --------------------------------------------------------------

    def add_code_version(self, rec: CodeVersionRecord, *, event: EventRecord | None = None) -> None:
        """Store a code version; it is committed when this returns.

        With ``event``, the feed event announcing the version is appended in the same transaction.

        Raises:
            StoreError: the session (or the referenced turn) does not exist, the
                version number is taken, or the write failed.
        """
        action = f"add code version {rec.version_number} of session {rec.session_id}"
        self._insert(action, _table(CodeVersionRow), rec, event)

    def versions(self, session_id: str) -> list[CodeVersionRecord]:
        """The session's code versions by ``version_number`` (empty for an unknown session).

        Raises:
            StoreError: the read failed.
        """
        query = (
            select(CodeVersionRow)
            .where(CodeVersionRow.session_id == session_id)
            .order_by(CodeVersionRow.version_number)
        )
        with self._transaction(f"read the code versions of session {session_id}", write=False) as db:
            return [record_from_row(CodeVersionRecord, row) for row in db.scalars(query)]

    # -- approval gates ---------------------------------------------------------------

    def add_gate(self, rec: GateRecord) -> None:
        """Store a gate request.

        Raises:
            StoreError: the session does not exist, or the write failed.
        """
        self._insert(f"add the {rec.phase} gate of session {rec.session_id}", _table(GateRow), rec)

    def gates(self, session_id: str) -> list[GateRecord]:
        """The session's gates, oldest first.

        Raises:
            StoreError: the read failed.
        """
        query = select(GateRow).where(GateRow.session_id == session_id).order_by(GateRow.requested_at, GateRow.id)
        with self._transaction(f"read the gates of session {session_id}", write=False) as db:
            return [record_from_row(GateRecord, row) for row in db.scalars(query)]

    def get_gate(self, gate_id: str) -> GateRecord | None:
        """One gate by id, or None.

        Raises:
            StoreError: the read failed.
        """
        with self._transaction(f"read gate {gate_id}", write=False) as db:
            row = db.get(GateRow, gate_id)
            return record_from_row(GateRecord, row) if row is not None else None

    def decide_gate(self, gate_id: str, status: str, *, reviewer: str = "", reason: str = "") -> GateRecord:
        """Record the decision on a pending gate; a gate already decided keeps its first decision.

        Raises:
            StoreError: no such gate, an invalid status, or the write failed.
        """
        if status not in ("approved", "rejected", "timed_out"):
            raise StoreError(
                f"cannot decide gate {gate_id}: status must be approved, rejected or timed_out, not {status!r}"
            )
        with self._transaction(f"decide gate {gate_id}", write=True) as db:
            row = db.get(GateRow, gate_id, with_for_update=True)
            if row is None:
                raise StoreError(f"no gate {gate_id!r}")
            if row.status == "pending":
                row.status = status
                row.reviewer = reviewer
                row.reason = reason
                row.decided_at = utcnow()
            return record_from_row(GateRecord, row)

    # -- events ---------------------------------------------------------------------

    def add_event(self, rec: EventRecord) -> EventRecord:
        """Append one engine event to its session's feed and return it with its ``id``.

        Raises:
            StoreError: the session does not exist, or the write failed.
        """
        with self._connection(f"add a {rec.type} event to session {rec.session_id}", write=True) as connection:
            return self._append_event(connection, rec)

    def events(self, session_id: str, *, after: int = 0, limit: int = 500) -> list[EventRecord]:
        """Up to ``limit`` of the session's events with an ``id`` above ``after``, oldest first.

        Raises:
            StoreError: the read failed.
        """
        query = (
            select(EventRow)
            .where(EventRow.session_id == session_id, EventRow.id > after)
            .order_by(EventRow.id)
            .limit(max(limit, 0))
        )
        with self._transaction(f"read the events of session {session_id}", write=False) as db:
            return [record_from_row(EventRecord, row) for row in db.scalars(query)]

    # -- leases -----------------------------------------------------------------------

    def claim_session(self, lease: SessionLease, *, holder_gone: Callable[[SessionLease], bool]) -> SessionLease | None:
        """Record ``lease`` as the run of its session; returns the lease in the way, or None once claimed.

        A lease ``holder_gone`` says is stale (its process died) is taken over.

        Raises:
            StoreError: the read or write failed.
        """
        table = _table(LeaseRow)
        key = table.c.session_id == lease.session_id
        with self._connection(f"claim session {lease.session_id}", write=True) as connection:
            row = connection.execute(select(table).where(key).with_for_update()).mappings().first()
            if row is None:
                inserted = connection.execute(_insert_new(connection, table), column_values(lease)).first()
                if inserted is not None:
                    return None
                row = connection.execute(select(table).where(key)).mappings().one()  # claimed a moment ago
            held = SessionLease.model_validate(dict(row))
            if not holder_gone(held):
                return held
            taken = connection.execute(
                update(table).where(key, table.c.lease_id == held.lease_id).returning(table.c.session_id),
                column_values(lease),
            ).first()
            return None if taken is not None else held

    def lease(self, session_id: str) -> SessionLease | None:
        """The lease of the process running ``session_id``, if one holds it.

        Raises:
            StoreError: the read failed.
        """
        table = _table(LeaseRow)
        with self._connection(f"read the lease of session {session_id}", write=False) as connection:
            row = connection.execute(select(table).where(table.c.session_id == session_id)).mappings().first()
        return SessionLease.model_validate(dict(row)) if row is not None else None

    def release_session(self, lease: SessionLease) -> None:
        """Drop ``lease`` (only this one: a run never drops a lease taken over from it).

        Raises:
            StoreError: the write failed.
        """
        table = _table(LeaseRow)
        with self._connection(f"release session {lease.session_id}", write=True) as connection:
            connection.execute(
                delete(table).where(table.c.session_id == lease.session_id, table.c.lease_id == lease.lease_id)
            )

    # -- internals ------------------------------------------------------------------

    def _migrate(self, writer: Engine) -> None:
        """Upgrade the database to the newest revision, atomically."""
        action = "migrate the store to the current schema"
        with self._translate(action), writer.connect() as connection, connection.begin():
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
            command.upgrade(migration_config(connection), "head")
        logger.debug("store %s is at the current schema", self._url)

    def _insert(self, action: str, table: Table, rec: BaseModel, event: EventRecord | None = None) -> None:
        """Insert ``rec`` as one row of ``table``, and ``event`` after it, in one committed transaction."""
        with self._connection(action, write=True) as connection:
            connection.execute(insert(table), column_values(rec))
            if event is not None:
                self._append_event(connection, event)

    @staticmethod
    def _append_event(connection: Connection, rec: EventRecord) -> EventRecord:
        """Insert ``rec`` into the feed through ``connection``; returns it with the ``id`` the database gave it."""
        values = column_values(rec)
        del values["id"]
        key = connection.execute(insert(_table(EventRow)), values).inserted_primary_key
        if key is None:
            raise StoreError(f"the store gave no id to the {rec.type} event of session {rec.session_id}")
        return rec.model_copy(update={"id": key[0]})

    @contextmanager
    def _connection(self, action: str, *, write: bool) -> Iterator[Connection]:
        """One connection in one transaction (Core statements): committed on success, rolled back otherwise."""
        self._require_open(action, write=write)
        with self._translate(action), (self._writer if write else self._engine).begin() as connection:
            yield connection

    @contextmanager
    def _transaction(self, action: str, *, write: bool) -> Iterator[Session]:
        """One ORM session in one transaction: committed on success, rolled back otherwise."""
        self._require_open(action, write=write)
        factory = self._writers if write else self._readers
        with self._translate(action), factory.begin() as db:
            yield db

    def _require_open(self, action: str, *, write: bool = False) -> None:
        if self._closed:
            raise StoreError(f"cannot {action}: store {self._url} is closed")
        if write and self.read_only is not None:
            raise StoreError(
                f"cannot {action}: store {self._url} is read-only ({self.read_only} or its folder cannot be "
                "written); make it writable, or point store_url at a writable place"
            )

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        """Turn SQLAlchemy, alembic and stored-data errors into ``StoreError``."""
        try:
            yield
        except IntegrityError as exc:
            raise StoreError(f"cannot {action} in store {self._url}: constraint violated: {exc.orig}") from exc
        except StatementError as exc:
            raise StoreError(f"cannot {action} in store {self._url}: {exc.orig}") from exc
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot {action} in store {self._url}: {exc}") from exc
        except CommandError as exc:
            raise StoreError(
                f"cannot {action} in store {self._url}: {exc}. "
                "If the database was written by a newer debatecode, upgrade debatecode or use another store_url."
            ) from exc
        except ValidationError as exc:
            raise StoreError(
                f"cannot {action} in store {self._url}: a stored row does not fit its record: {exc}"
            ) from exc
        except PydanticSerializationError as exc:
            raise StoreError(f"cannot {action} in store {self._url}: a JSON field cannot be stored: {exc}") from exc


def _insert_new(connection: Connection, table: Table) -> Any:
    """An insert returning the key it inserted, and nothing when another transaction inserted that key first.

    PostgreSQL needs it: ``SELECT ... FOR UPDATE`` locks no row that does not exist yet.
    SQLite's ``BEGIN IMMEDIATE`` already serialises the writers, so a plain insert does.
    """
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as insert_new

        return (
            insert_new(table).on_conflict_do_nothing(index_elements=[table.c.session_id]).returning(table.c.session_id)
        )
    return insert(table).returning(table.c.session_id)


def _table(row_type: type[Base]) -> Table:
    """The Core table a mapped row class is stored in."""
    return cast(Table, row_type.__table__)


def open_store(url: str) -> SessionStore:
    """Open the session store at ``url``, creating or migrating its database.

    Raises:
        StoreError: see ``SessionStore``.
    """
    return SessionStore(url)
