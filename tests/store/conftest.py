"""Fixtures for the session store tests: a real store on each backend, and record factories.

Every test that takes ``store``, ``store_url`` or ``empty_store_url`` runs twice, once
per backend:

- ``[sqlite]``: a SQLite file in ``tmp_path``, created by the first store opened on it;
- ``[postgresql]``: a database of the test's own, dropped after it, on the PostgreSQL
  server that ``DEBATECODE_TEST_POSTGRES_URL`` names (``bash .ci/run`` starts one and
  sets it; see docs/storage.md). ``empty_store_url`` is a new, empty database (from
  ``template0``), for the tests of first-open migrations; ``store_url`` is a copy of a
  database this session migrated to head once, which is twice as fast to make.

Without a reachable PostgreSQL the ``[postgresql]`` runs are skipped with the
reason, and *fail* instead when ``DEBATECODE_REQUIRE_POSTGRES=1`` (CI), as
``requires_docker`` does for Docker. Tests of SQLite's own behaviour (pragmas, file
paths) take ``sqlite_store`` / ``sqlite_url`` and run on SQLite only.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from debatecode.store import SessionStore, open_store
from debatecode.store.records import CodeVersionRecord, SessionRecord, TurnRecord

POSTGRES_URL_ENV = "DEBATECODE_TEST_POSTGRES_URL"
REQUIRE_POSTGRES_ENV = "DEBATECODE_REQUIRE_POSTGRES"
BACKENDS = ("sqlite", "postgresql")
TEST_DATABASE_PREFIX = "debatecode_t_"


def postgres_required() -> bool:
    return os.environ.get(REQUIRE_POSTGRES_ENV) == "1"


def _postgres_problem(url: str) -> str | None:
    """None when the PostgreSQL server at ``url`` answers and lets us create databases, else why not."""
    if not url:
        return f"{POSTGRES_URL_ENV} is not set (bash .ci/run starts PostgreSQL and sets it)"
    shown = make_url(url).render_as_string(hide_password=True)
    try:
        engine = create_engine(url)
    except ImportError as exc:
        return f"the PostgreSQL driver is missing ({exc}); pip install -e '.[postgres]'"
    try:
        with engine.connect() as conn:
            may_create = conn.execute(text("SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user"))
            if not may_create.scalar():
                return f"the role of {shown} may not create databases (ALTER ROLE ... CREATEDB)"
    except Exception as exc:  # any driver or server error means: not usable here
        return f"PostgreSQL at {shown} does not answer: {exc}"
    finally:
        engine.dispose()
    return None


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine | str]:
    """An autocommit engine on the test server's own database, or why there is none."""
    url = os.environ.get(POSTGRES_URL_ENV, "")
    problem = _postgres_problem(url)
    if problem is not None:
        yield problem
        return
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        yield engine
    finally:
        engine.dispose()


def _usable(postgres_admin: Engine | str) -> Engine:
    """The admin engine; skips without a usable server, fails instead when PostgreSQL is required."""
    if isinstance(postgres_admin, str):
        if postgres_required():
            pytest.fail(f"PostgreSQL is required ({REQUIRE_POSTGRES_ENV}=1) but unusable: {postgres_admin}")
        pytest.skip(f"PostgreSQL unusable: {postgres_admin}")
    return postgres_admin


@contextmanager
def _database(admin: Engine, template: str) -> Iterator[str]:
    """A new database copied from ``template``, dropped on the way out; yields its URL."""
    name = f"{TEST_DATABASE_PREFIX}{uuid.uuid4().hex[:16]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            # FORCE ends the connections of stores a failing test left open.
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def postgres_migrated_template(postgres_admin: Engine | str) -> Iterator[str]:
    """The name of a database migrated to head once per test session, to copy from."""
    admin = _usable(postgres_admin)
    with _database(admin, "template0") as url:
        open_store(url).close()
        yield make_url(url).database or ""


@pytest.fixture
def postgres_url(postgres_admin: Engine | str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database (no tables), dropped after the test."""
    with _database(_usable(postgres_admin), "template0") as url:
        yield url


@pytest.fixture
def migrated_postgres_url(postgres_admin: Engine | str, postgres_migrated_template: str) -> Iterator[str]:
    """The URL of a PostgreSQL database of the test's own, already at the newest schema."""
    with _database(_usable(postgres_admin), postgres_migrated_template) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend under test: each test that depends on it runs once per backend."""
    name: str = request.param
    return name


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    (tmp_path / "state").mkdir()  # a store_url's folder must exist (only `.debatecode` is created)
    return tmp_path / "state" / "debatecode.db"


@pytest.fixture
def sqlite_url(db_path: Path) -> str:
    return f"sqlite:///{db_path}"


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest) -> str:
    """A store URL of the test's own on the backend under test."""
    url: str = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "migrated_postgres_url")
    return url


@pytest.fixture
def empty_store_url(backend: str, request: pytest.FixtureRequest) -> str:
    """A store URL on the backend under test whose database has no tables yet."""
    url: str = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "postgres_url")
    return url


def _opened(url: str) -> Iterator[SessionStore]:
    opened = open_store(url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def store(store_url: str) -> Iterator[SessionStore]:
    yield from _opened(store_url)


@pytest.fixture
def sqlite_store(sqlite_url: str) -> Iterator[SessionStore]:
    """A store on SQLite only, for tests of SQLite's own behaviour."""
    yield from _opened(sqlite_url)


def new_id() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def make_session() -> Callable[..., SessionRecord]:
    def make(**overrides: Any) -> SessionRecord:
        values: dict[str, Any] = {
            "id": new_id(),
            "task_title": "fizzbuzz",
            "task_path": "tasks/fizzbuzz.md",
            "task_hash": "ab" * 32,
            "topic": "Write fizzbuzz(n).",
        }
        return SessionRecord(**(values | overrides))

    return make


@pytest.fixture
def make_turn() -> Callable[..., TurnRecord]:
    def make(session_id: str, seq: int, **overrides: Any) -> TurnRecord:
        values: dict[str, Any] = {
            "id": new_id(),
            "session_id": session_id,
            "seq": seq,
            "key": f"r1/proposal/agent-{seq}/propose",
            "round": 1,
            "phase": "proposal",
            "agent_id": f"agent-{seq}",
            "agent_role": "proposer",
        }
        return TurnRecord(**(values | overrides))

    return make


@pytest.fixture
def make_version() -> Callable[..., CodeVersionRecord]:
    def make(session_id: str, number: int, **overrides: Any) -> CodeVersionRecord:
        values: dict[str, Any] = {
            "id": new_id(),
            "session_id": session_id,
            "turn_id": None,
            "agent_id": "agent-1",
            "code": f"def f():\n    return {number}\n",
            "version_number": number,
        }
        return CodeVersionRecord(**(values | overrides))

    return make
