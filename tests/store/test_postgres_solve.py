"""A scripted ``solve`` runs against PostgreSQL and stores what it stores on SQLite."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.support.scripted_solve import scripted_solve

from debatecode.store import open_store
from debatecode.store.records import TurnRecord


def stored_turns(turns: list[TurnRecord]) -> list[tuple[Any, ...]]:
    """What the turns say, by key: without random ids, timestamps, or the order concurrent agents finished in."""
    return sorted((t.key, t.phase, t.agent_id, t.status, t.content, t.code) for t in turns)


def without_ids(outcome: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in outcome.items() if name not in ("version_id", "turn_id")}


@pytest.mark.slow
def test_a_scripted_solve_on_postgresql_stores_the_session_sqlite_stores(
    postgres_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    on_postgres = scripted_solve(postgres_url, tmp_path / "pg-out")
    on_sqlite = scripted_solve(sqlite_url, tmp_path / "sqlite-out")
    assert (on_postgres.status, on_postgres.all_passed) == ("completed", True)

    with open_store(postgres_url) as pg, open_store(sqlite_url) as lite:
        session = pg.get_session(on_postgres.session.id)
        assert session.status == "completed"
        assert session.final_version_id is not None
        assert session.outcome["winner"]
        assert without_ids(session.outcome) == without_ids(lite.get_session(on_sqlite.session.id).outcome)
        turns = pg.turns(session.id)
        assert [turn.seq for turn in turns] == list(range(1, len(turns) + 1))
        assert any(turn.phase == "proposal" for turn in turns)
        assert stored_turns(turns) == stored_turns(lite.turns(on_sqlite.session.id))
        versions = pg.versions(session.id)
        assert session.final_version_id in {version.id for version in versions}
        assert sorted(v.code for v in versions) == sorted(v.code for v in lite.versions(on_sqlite.session.id))
        event_types = [event.type for event in pg.events(session.id)]
        assert Counter(event_types) == Counter(event.type for event in lite.events(on_sqlite.session.id))
        assert event_types[-1] == "SessionFinished"
