"""The store's schema: what the migrations create, how they run, and the public surface."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from pydantic import BaseModel
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import make_url
from tests.support.threads import errors_in_threads

import debatecode.store
from debatecode.errors import ConfigError, StoreError
from debatecode.memory.episodes import Episode, Lesson
from debatecode.store import SessionStore, open_store
from debatecode.store.models import Base
from debatecode.store.records import CodeVersionRecord, GateRecord, SessionLease, SessionRecord, TurnRecord

REPO_ROOT = Path(__file__).resolve().parents[2]
HEAD = "0006"


class StoredEpisode(Episode):
    """An episode row: the record's fields plus its insertion order and its vector."""

    seq: int
    embedding: bytes
    embedder: str
    dim: int


class StoredLesson(Lesson):
    """A lesson row: the record's fields plus its vector."""

    embedding: bytes
    embedder: str
    dim: int


TABLES: dict[str, type[BaseModel]] = {
    "debate_sessions": SessionRecord,
    "debate_turns": TurnRecord,
    "code_versions": CodeVersionRecord,
    "gate_decisions": GateRecord,
    "session_leases": SessionLease,
    "episodes": StoredEpisode,
    "lessons": StoredLesson,
}


def accepts_none(annotation: object) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(
        annotation
    )


@contextmanager
def engine_on(url: str) -> Iterator[Engine]:
    """A plain engine on a store's database, for looking under the store."""
    engine = create_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


def revision_of(url: str) -> list[str]:
    with engine_on(url) as engine, engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))]


def migrated(url: str) -> str:
    """``url`` after a store was opened (and so migrated) on it, and closed again."""
    open_store(url).close()
    return url


def test_migrations_create_the_tables_with_every_record_field(empty_store_url: str) -> None:
    with engine_on(migrated(empty_store_url)) as engine:
        inspector = inspect(engine)
        assert set(TABLES) | {"alembic_version"} <= set(inspector.get_table_names())
        for table, record in TABLES.items():
            columns = {column["name"]: column for column in inspector.get_columns(table)}
            assert set(columns) == set(record.model_fields), table
            for name, info in record.model_fields.items():
                assert columns[name]["nullable"] == accepts_none(info.annotation), f"{table}.{name}"
            key = "session_id" if table == "session_leases" else "id"  # one lease per session
            assert inspector.get_pk_constraint(table)["constrained_columns"] == [key]


def test_migrations_create_keys_indexes_and_unique_constraints(empty_store_url: str) -> None:
    with engine_on(migrated(empty_store_url)) as engine:
        inspector = inspect(engine)
        uniques = {
            table: {tuple(uc["column_names"]) for uc in inspector.get_unique_constraints(table)} for table in TABLES
        }
        assert uniques["debate_turns"] == {("session_id", "seq"), ("session_id", "key")}
        assert uniques["code_versions"] == {("session_id", "version_number")}
        for table in ("debate_turns", "code_versions"):
            indexed = {tuple(ix["column_names"]) for ix in inspector.get_indexes(table)}
            assert ("session_id",) in indexed, table
        foreign = {
            table: {(fk["constrained_columns"][0], fk["referred_table"]) for fk in inspector.get_foreign_keys(table)}
            for table in TABLES
        }
        assert foreign["debate_turns"] == {("session_id", "debate_sessions")}
        assert foreign["code_versions"] == {("session_id", "debate_sessions"), ("turn_id", "debate_turns")}
        timestamps = [c["type"] for c in inspector.get_columns("debate_sessions") if c["name"].endswith("_at")]
        assert len(timestamps) == 3
        if engine.dialect.name == "sqlite":
            assert {str(kind) for kind in timestamps} == {"DATETIME"}
        else:
            assert all(getattr(kind, "timezone", False) for kind in timestamps), "PostgreSQL stores timestamptz"


def test_models_and_migrations_describe_the_same_schema(empty_store_url: str) -> None:
    with engine_on(migrated(empty_store_url)) as engine, engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    assert revision_of(empty_store_url) == [HEAD]


def test_sqlite_pragmas_are_set_on_store_connections(sqlite_store: SessionStore, db_path: Path) -> None:
    with sqlite_store._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
    assert db_path.parent.is_dir()


def test_reopening_an_existing_store_is_idempotent(
    empty_store_url: str, make_session: Callable[..., SessionRecord]
) -> None:
    store_url = empty_store_url
    record = make_session()
    with open_store(store_url) as first:
        first.create_session(record)
    assert revision_of(store_url) == [HEAD]
    for _ in range(2):
        with open_store(store_url) as again:
            assert again.get_session(record.id) == record
    assert revision_of(store_url) == [HEAD]


def test_concurrent_first_opens_migrate_once(empty_store_url: str) -> None:
    url = empty_store_url
    stores: list[SessionStore] = []
    lock = threading.Lock()

    def open_one(_: int) -> None:
        opened = open_store(url)
        with lock:
            stores.append(opened)

    errors = errors_in_threads(open_one, range(6))
    for opened in stores:
        opened.close()
    assert errors == []
    assert len(stores) == 6
    assert revision_of(url) == [HEAD]


def test_a_database_from_a_newer_debatecode_is_refused_with_store_error(store_url: str) -> None:
    open_store(store_url).close()
    with engine_on(store_url) as engine, engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError, match="newer debatecode") as caught:
        open_store(store_url)
    assert make_url(store_url).render_as_string(hide_password=True) in str(caught.value)


def test_alembic_cli_upgrades_a_database_using_the_repo_ini(
    tmp_path: Path, empty_store_url: str, make_session: Callable[..., SessionRecord]
) -> None:
    url = empty_store_url
    env = os.environ | {"DEBATECODE_STORE_URL": url}
    result = subprocess.run(
        [sys.executable, "-m", "alembic", "-c", str(REPO_ROOT / "alembic.ini"), "upgrade", "head"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Running upgrade 0001 -> 0002" in result.stderr
    assert revision_of(url) == [HEAD]
    with engine_on(url) as engine:
        assert set(TABLES) <= set(inspect(engine).get_table_names())
    record = make_session()
    with open_store(url) as cli_made:
        cli_made.create_session(record)
        assert cli_made.get_session(record.id) == record


def test_unusable_urls_raise_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="invalid store URL"):
        open_store("not a url")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="which does not exist"):  # a folder is never made under a file
        open_store(f"sqlite:///{blocker / 'sub' / 'x.db'}")
    with pytest.raises(ConfigError, match="which is not a folder"):
        open_store(f"sqlite:///{blocker / 'x.db'}")
    with pytest.raises(StoreError, match="nosuchdialect"):
        open_store("nosuchdialect://host/db")


def test_password_is_masked_in_the_store_url() -> None:
    with pytest.raises(StoreError) as caught:
        open_store("postgresql+psycopg://user:hunter2@127.0.0.1:1/db")
    assert "hunter2" not in str(caught.value)


def test_store_package_exports_exactly_its_public_api() -> None:
    assert debatecode.store.__all__ == ["SessionStore", "open_store"]
    assert debatecode.store.SessionStore is SessionStore
    assert debatecode.store.open_store is open_store


def test_importing_the_store_package_does_not_import_sqlalchemy() -> None:
    code = (
        "import sys, debatecode\n"
        "before = 'sqlalchemy' in sys.modules\n"
        "import debatecode.store\n"
        "assert before or 'sqlalchemy' not in sys.modules, 'debatecode.store imported sqlalchemy eagerly'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
