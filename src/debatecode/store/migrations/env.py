"""Alembic environment of the session store.

Two ways in:

- programmatically, from ``SessionStore`` (``database.migration_config``): the
  caller passes an open connection in ``config.attributes["connection"]`` and owns
  its transaction; no ini file and no logging setup;
- from the command line, for developers: ``alembic -c alembic.ini upgrade head``
  at the repository root. The database is, in order of precedence,
  ``-x url=...``, ``$DEBATECODE_STORE_URL``, ``sqlalchemy.url`` in the ini, or the
  default ``sqlite:///.debatecode/debatecode.db``.

New revisions: ``alembic -c alembic.ini revision --autogenerate --rev-id 0002 -m "..."``
(compare against ``store/models.py``; review the result before committing it).
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection

from debatecode.store.database import DEFAULT_STORE_URL, build_engine
from debatecode.store.models import Base, UTCDateTime

config = context.config
target_metadata = Base.metadata


def _render_item(kind: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    # Revisions spell the plain column type, so they never import debatecode.
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _store_url() -> str:
    from_x = context.get_x_argument(as_dictionary=True).get("url")
    return (
        from_x
        or os.environ.get("DEBATECODE_STORE_URL")
        or config.get_main_option("sqlalchemy.url")
        or DEFAULT_STORE_URL
    )


def _migrate(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # build_engine makes SQLite emit BEGIN before DDL too, so DDL is transactional there.
        transactional_ddl=True if sqlite else None,
        render_as_batch=sqlite,
        compare_type=True,
        render_item=_render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Print the SQL of the migrations instead of running it (``--sql``)."""
    context.configure(
        url=_store_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_item=_render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate through the caller's connection, or through one opened here."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    engine = build_engine(_store_url())
    try:
        with engine.connect() as own_connection:
            _migrate(own_connection)
    finally:
        engine.dispose()


if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
