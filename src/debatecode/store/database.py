"""The database under the session store: the engine for a store URL, SQLite's setup, and the migrations' config.

SQLite runs in WAL mode with foreign keys on and a busy timeout; a connection
marked with ``WRITE_OPTION`` starts ``BEGIN IMMEDIATE``, so concurrent writers
queue on the busy timeout instead of failing half-way. ``SessionStore``
(``repository.py``) and alembic's ``env.py`` both build their engines here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from debatecode.errors import ConfigError, StoreError

__all__ = [
    "DEFAULT_STORE_URL",
    "MIGRATIONS_DIR",
    "SQLITE_BUSY_TIMEOUT_MS",
    "WRITE_OPTION",
    "build_engine",
    "display_url",
    "migration_config",
    "unwritable_sqlite_file",
]

DEFAULT_STORE_URL = "sqlite:///.debatecode/debatecode.db"
MIGRATIONS_DIR = Path(__file__).resolve().with_name("migrations")
SQLITE_BUSY_TIMEOUT_MS = 30_000
WRITE_OPTION = "debatecode_write"
"""Execution option marking a connection that will write (``BEGIN IMMEDIATE`` on SQLite)."""


def display_url(url: str | URL) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return str(url)


def _on_sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy emit BEGIN itself (see ``_on_sqlite_begin``): the sqlite3
    # driver's legacy mode skips BEGIN before DDL and SELECT, which would make
    # migrations non-transactional and reads non-repeatable.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
    finally:
        cursor.close()


def _on_sqlite_begin(connection: Connection) -> None:
    # A deferred transaction that reads and then writes can fail with SQLITE_BUSY
    # without waiting when another writer got in first; IMMEDIATE takes the write
    # lock up front, so writers wait on the busy timeout instead.
    immediate = connection.get_execution_options().get(WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def build_engine(url: str | URL) -> Engine:
    """Create the engine for a store URL, with the SQLite setup the store relies on.

    For a SQLite file the folder must exist, except the default ``.debatecode``
    folder, which is created inside an existing one: a ``store_url`` with a typo
    in its folder is refused rather than creating a stray tree. ``sqlite://``
    (in memory) uses a single shared connection and suits tests only.

    Raises:
        ConfigError: the SQLite file's folder does not exist, or the URL's driver is not installed.
        StoreError: the URL is malformed, or the ``.debatecode`` folder cannot be created.
    """
    shown = display_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"invalid store URL {shown!r}: {exc}") from exc
    try:
        if parsed.get_backend_name() != "sqlite":
            return create_engine(parsed, pool_pre_ping=True)
        database = parsed.database or ""
        in_memory = database in ("", ":memory:") or parsed.query.get("mode") == "memory"
        if in_memory:
            engine = create_engine(parsed, poolclass=StaticPool, connect_args={"check_same_thread": False})
        else:
            if not database.startswith("file:"):
                _store_folder(Path(database), shown)
            engine = create_engine(parsed)
    except OSError as exc:
        raise StoreError(f"cannot create the directory of store {shown}: {exc}") from exc
    except ImportError as exc:  # a feature whose extra is not installed: bad input (exit 2), as for every extra
        raise ConfigError(
            f"the database driver for store {shown} is not installed ({exc}); "
            "for PostgreSQL use a postgresql+psycopg:// URL and `pip install 'debatecode[postgres]'`",
            key="store_url",
        ) from exc
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot use store {shown}: {exc}") from exc
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def _store_folder(database: Path, shown: str) -> None:
    """Make sure the folder of SQLite file ``database`` exists: create it only when it is the default ``.debatecode``.

    Raises:
        ConfigError: the folder does not exist (or is not a folder).
        OSError: the ``.debatecode`` folder cannot be created.
    """
    folder = database.parent
    if folder.is_dir():
        return
    if folder.name == ".debatecode" and folder.parent.is_dir():
        folder.mkdir(exist_ok=True)
        return
    problem = "is not a folder" if folder.exists() else "does not exist"
    raise ConfigError(
        f"store_url {shown} names a file in {folder}, which {problem}; create the folder first "
        f"(mkdir -p {folder}) or fix store_url (debatecode.toml or DEBATECODE_STORE_URL)",
        key="store_url",
    )


def unwritable_sqlite_file(url: str) -> Path | None:
    """The SQLite file of ``url`` when it exists and this process cannot write it or its folder, else None.

    A read-only mount, or a file and folder without write permission: SQLite then cannot even read a
    WAL database normally (it needs to create its ``-shm`` file), so the store is opened as immutable.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return None
    path = Path(database)
    if not path.is_file() or (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return None
    return path.resolve()


def migration_config(connection: Connection | None = None) -> Config:
    """An alembic ``Config`` for the migrations shipped in this package (no ini file).

    With ``connection``, env.py migrates through it instead of opening its own.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    if connection is not None:
        config.attributes["connection"] = connection
    return config
