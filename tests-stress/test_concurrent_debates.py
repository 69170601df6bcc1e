"""100 scripted debates at once in one process and one event loop, into one store: no errors, no turn lost or doubled.

The model answers at once (a ``scripted/...`` add.md debater) and the sandbox
replays each distinct job's first real run (``ReplaySandbox`` over the dummy
sandbox), so what is loaded is the engine and the store: 100 sessions
interleaving their turns, versions, events and status writes on one store.
What each session should hold is what the engine announced on the event bus;
the store must hold exactly that. It runs on SQLite, and on PostgreSQL when
``DEBATECODE_TEST_POSTGRES_URL`` names a server (required in CI).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine
from tests.store.conftest import POSTGRES_URL_ENV, _database, _postgres_problem, postgres_required
from tests.support.load import EngineTally, debate_config, load_services, run_debates, scripted_model
from tests.support.replay_sandbox import ReplaySandbox

from debatecode import DebateResult
from debatecode.store import SessionStore

pytestmark = pytest.mark.slow

DEBATES = 100


@pytest.fixture(params=["sqlite", "postgresql"])
def load_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new, empty store: a SQLite file, or a PostgreSQL database of the test's own (dropped after it)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'load.db'}"
        return
    url = os.environ.get(POSTGRES_URL_ENV, "")
    problem = _postgres_problem(url)
    if problem is not None:
        if postgres_required():
            pytest.fail(f"PostgreSQL is required but unusable: {problem}")
        pytest.skip(f"PostgreSQL unusable: {problem}")
    admin: Engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with _database(admin, "template0") as database_url:
            yield database_url
    finally:
        admin.dispose()


def check_session(store: SessionStore, result: DebateResult, tally: EngineTally) -> list[str]:
    """The session's stored turn keys, after checking the store holds exactly what the engine announced."""
    session_id = result.session.id
    assert (result.status, result.error, result.all_passed) == ("completed", None, True), session_id
    assert store.get_session(session_id).status == "completed"
    turns = store.turns(session_id)
    announced = tally.turns[session_id]
    assert turns, f"session {session_id} stored no turns"
    assert sorted(t.id for t in turns) == sorted(t.id for t in announced), f"turns of {session_id} differ"
    assert [t.seq for t in turns] == list(range(1, len(turns) + 1)), f"gaps or repeats in the seqs of {session_id}"
    keys = [t.key for t in turns]
    assert len(set(keys)) == len(keys), f"a turn of {session_id} is stored twice"
    assert sorted(v.id for v in store.versions(session_id)) == sorted(v.id for v in tally.versions[session_id])
    events = store.events(session_id, limit=10_000)
    assert len(events) == tally.events[session_id], f"events of {session_id} lost or doubled"
    assert events[-1].type == "SessionFinished"
    return sorted(keys)


async def test_100_concurrent_debates_store_every_turn_once(
    load_store_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tally = EngineTally()
    sandbox = ReplaySandbox()
    with scripted_model() as model, caplog.at_level(logging.WARNING):
        services = load_services(load_store_url, sandbox)
        try:
            outcomes = await run_debates(
                DEBATES, services, lambda i: debate_config(model, load_store_url, tmp_path / f"out-{i}"), tally.bus
            )
            failures = [repr(outcome) for outcome in outcomes if isinstance(outcome, BaseException)]
            assert failures == [], f"{len(failures)} debates raised: {failures[:3]}"
            results = [outcome for outcome in outcomes if isinstance(outcome, DebateResult)]
            assert len({r.session.id for r in results}) == DEBATES
            keys = [check_session(services.store, result, tally) for result in results]
            assert len(services.store.list_sessions(limit=2 * DEBATES)) == DEBATES
        finally:
            await services.aclose()

    # Every copy of the deterministic debate went through the same turns: none skipped under load.
    assert all(k == keys[0] for k in keys), "some sessions stored other turns than the rest"
    assert {key.split("/")[1] for key in keys[0]} >= {"proposal", "critique"}
    assert sum(len(t) for t in tally.turns.values()) == DEBATES * len(keys[0])
    jobs = sandbox.runs + sandbox.replays
    assert jobs % DEBATES == 0 and sandbox.runs <= jobs // DEBATES, "every debate sent the sandbox the same jobs"
    # Third-party noise (bandit's plugin loader complaining about an optional formatter) is not a debate's error.
    problems = [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith("debatecode")
    ]
    assert problems == [], "the debates logged warnings or errors"
