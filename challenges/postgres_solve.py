"""A team keeps its sessions in PostgreSQL: a scripted solve stores into a new database and is read back from it.

The server is the one ``DEBATECODE_TEST_POSTGRES_URL`` names (``bash .ci/run``
starts it); the challenge makes a database of its own there and drops it after.
``store_url`` in ``debatecode.toml`` points ``solve`` and ``sessions show`` at it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, text

from challenges._harness import POSTGRES_URL_ENV, REPO, Journey, expect, write_config
from challenges._sessions import session_id_in, shown

NEEDS_DOCKER = True
NEEDS_POSTGRES = True


@contextmanager
def fresh_database(server_url: str) -> Iterator[Engine]:
    """A new, empty database on the server of ``server_url``, dropped on the way out; an engine on it."""
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    name = f"debatecode_challenge_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE template0'))
        engine = create_engine(admin.url.set(database=name))
        try:
            yield engine
        finally:
            engine.dispose()
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def run(journey: Journey) -> str:
    task = REPO / "examples" / "tasks" / "add.md"
    replies = REPO / "examples" / "replies" / "add.yaml"
    with fresh_database(os.environ[POSTGRES_URL_ENV]) as database:
        url = database.url.render_as_string(hide_password=False)
        write_config(journey, f"store_url = {json.dumps(url)}", secret=database.url.password)
        solved = journey.cli(
            "solve", str(task), "--model", f"scripted:{replies}", "--sandbox", "docker", "--out", "out"
        )
        expect(solved.returncode == 0, f"solve exited {solved.returncode}", solved.stdout + solved.stderr)
        session_id = session_id_in(solved)
        expect(not (journey.workdir / ".debatecode" / "debatecode.db").exists(), "the session went to SQLite too")

        document = shown(journey, session_id)
        session, turns, versions = document["session"], document["turns"], document["versions"]
        expect(session["status"] == "completed", f"the session read back is {session['status']}, not completed")
        expect(len(turns) >= 10, f"only {len(turns)} turns read back from PostgreSQL")
        expect([t["seq"] for t in turns] == list(range(1, len(turns) + 1)), "the turns read back are out of order")
        expect(any(t["phase"] == "proposal" for t in turns), "no proposal turn read back")
        expect(
            session["final_version_id"] in {v["id"] for v in versions}, "the final version is not among those stored"
        )
        with database.connect() as conn:
            held = {
                table: conn.execute(
                    text(f"SELECT count(*) FROM {table} WHERE session_id = :id"), {"id": session_id}
                ).scalar_one()
                for table in ("debate_turns", "code_versions")
            }
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        listed = {"debate_turns": len(turns), "code_versions": len(versions)}
        expect(held == listed, f"PostgreSQL holds {held}, sessions show listed {listed}")

        scored = [v for v in versions if v["quality_score"] is not None]
        expect(len(scored) == len(versions), f"{len(versions) - len(scored)} versions read back without quality")
    return (
        f"session {session_id} in a new PostgreSQL database (schema {revision}): "
        f"{len(turns)} turns and {len(versions)} versions read back"
    )
