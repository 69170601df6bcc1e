"""Reading and writing sessions, turns and code versions through ``SessionStore``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from tests.support.threads import errors_in_threads

from debatecode.errors import SessionNotFound, StoreError
from debatecode.execution.results import TestCaseResult, TestReport
from debatecode.store import SessionStore, open_store
from debatecode.store.records import CodeVersionRecord, SessionRecord, TurnRecord

MakeSession = Callable[..., SessionRecord]
MakeTurn = Callable[..., TurnRecord]
MakeVersion = Callable[..., CodeVersionRecord]


def raw_row(url: str, sql: str, **params: Any) -> tuple[Any, ...]:
    """One row read straight from the database, under the store; PostgreSQL shows times in UTC."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SET TIME ZONE 'UTC'"))
            return tuple(conn.execute(text(sql), params).one())
    finally:
        engine.dispose()


def test_session_round_trips_every_field_including_json_and_timestamps(
    store: SessionStore, make_session: MakeSession
) -> None:
    ist = timezone(timedelta(hours=5, minutes=30))
    record = make_session(
        status="completed",
        topology="tree",
        coordination_protocol="CPDE",
        model="scripted/echo",
        config={"max_rounds": 3, "phases": {"critique": True}, "ratio": 0.5, "tags": ["a", "ü"], "none": None},
        initiated_by="cli",
        out_dir="/tmp/out",
        repo_path="/tmp/out",
        branch="debate/x",
        created_at=datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=ist),
        completed_at=datetime(2025, 1, 2, 4, 0, tzinfo=UTC),
        total_rounds=3,
        prompt_tokens=1234,
        completion_tokens=567,
        cost_usd=0.0123,
        duration_s=12.5,
        final_consensus_score=0.875,
        final_version_id="v-1",
        outcome={"winner": "agent-2", "method": "borda", "votes": {"agent-1": 1, "agent-2": 2}},
        error="boom",
    )
    store.create_session(record)
    loaded = store.get_session(record.id)
    assert loaded == record
    assert loaded.created_at.utcoffset() == timedelta(0)
    assert loaded.created_at == datetime(2025, 1, 1, 21, 34, 5, 678901, tzinfo=UTC)
    assert loaded.completed_at is not None and loaded.completed_at.tzinfo is not None


def test_timestamps_are_stored_in_utc_and_naive_input_is_taken_as_utc(
    store: SessionStore, store_url: str, make_session: MakeSession
) -> None:
    plus_two = timezone(timedelta(hours=2))
    record = make_session(created_at=datetime(2025, 6, 1, 12, 0, tzinfo=plus_two), updated_at=datetime(2025, 6, 1, 9))
    store.create_session(record)
    row = raw_row(
        store_url,
        "SELECT CAST(created_at AS TEXT), CAST(updated_at AS TEXT) FROM debate_sessions WHERE id = :id",
        id=record.id,
    )
    created, updated = row
    assert created.startswith("2025-06-01 10:00:00")
    assert updated.startswith("2025-06-01 09:00:00")
    loaded = store.get_session(record.id)
    assert loaded.updated_at == datetime(2025, 6, 1, 9, tzinfo=UTC)


def test_turn_round_trips_every_field_including_json(
    store: SessionStore, store_url: str, make_session: MakeSession, make_turn: MakeTurn
) -> None:
    session = make_session()
    store.create_session(session)
    report = TestReport(cases=[TestCaseResult(name="t1", outcome="passed", duration_s=0.1)], backend="local")
    full = make_turn(
        session.id,
        1,
        provider="scripted",
        model="scripted/echo",
        prompt="Write f().",
        content="```python\ndef f(): ...\n```",
        code="def f(): ...\n",
        status="ok",
        confidence=0.9,
        tool_calls=[{"name": "run_tests", "args": {"n": 1}}],
        test_results=report.model_dump(mode="json"),
        reflections=[{"lesson": "check n == 0"}],
        metadata={"prompt_hash": "abc", "nested": {"k": [1, 2.5, None]}},
        prompt_tokens=10,
        completion_tokens=20,
        cost_usd=0.001,
        response_time_ms=250,
    )
    bare = make_turn(session.id, 2, status="no_code", code=None, test_results=None)
    store.add_turn(full)
    store.add_turn(bare)
    assert store.turns(session.id) == [full, bare]
    assert TestReport.model_validate(store.turns(session.id)[0].test_results).passed == 1
    (nulls,) = raw_row(store_url, "SELECT count(*) FROM debate_turns WHERE test_results IS NULL")
    assert nulls == 1


def test_code_version_round_trips_every_field(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn, make_version: MakeVersion
) -> None:
    session = make_session()
    store.create_session(session)
    turn = make_turn(session.id, 1)
    store.add_turn(turn)
    version = make_version(
        session.id,
        1,
        turn_id=turn.id,
        commit_sha="a" * 40,
        tests_passed=3,
        tests_total=5,
        test_pass_rate=0.6,
        quality_score=0.75,
        metrics={"complexity": 2, "bandit": []},
        diff_from_previous="--- /dev/null\n+++ b/solution.py\n",
    )
    orphan = make_version(session.id, 2)
    store.add_code_version(version)
    store.add_code_version(orphan)
    assert store.versions(session.id) == [version, orphan]


def test_get_session_finds_a_unique_prefix(store: SessionStore, make_session: MakeSession) -> None:
    first = make_session(id="aaaa1111")
    store.create_session(first)
    store.create_session(make_session(id="bbbb2222"))
    assert store.get_session("aaaa1111") == first
    assert store.get_session("aa").id == "aaaa1111"
    assert store.get_session("a").id == "aaaa1111"


def test_an_ambiguous_prefix_raises_session_not_found_listing_the_matches(
    store: SessionStore, make_session: MakeSession
) -> None:
    store.create_session(make_session(id="abc123"))
    store.create_session(make_session(id="abc456"))
    with pytest.raises(SessionNotFound, match="ambiguous") as caught:
        store.get_session("abc")
    assert "abc123" in str(caught.value) and "abc456" in str(caught.value)
    assert store.get_session("abc4").id == "abc456"


def test_prefix_matching_is_exact_and_case_sensitive(store: SessionStore, make_session: MakeSession) -> None:
    store.create_session(make_session(id="abc_def"))
    with pytest.raises(SessionNotFound):
        store.get_session("ABC")
    with pytest.raises(SessionNotFound):
        store.get_session("abc%")
    assert store.get_session("abc_").id == "abc_def"


def test_unknown_or_empty_id_raises_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound, match="nope"):
        store.get_session("nope")
    with pytest.raises(SessionNotFound):
        store.get_session("")


def test_list_sessions_is_newest_first_with_limit_and_status_filter(
    store: SessionStore, make_session: MakeSession
) -> None:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    records = [
        make_session(id=f"s{i}", created_at=start + timedelta(hours=i), status="failed" if i % 2 else "completed")
        for i in range(5)
    ]
    for record in records:
        store.create_session(record)
    assert [r.id for r in store.list_sessions()] == ["s4", "s3", "s2", "s1", "s0"]
    assert [r.id for r in store.list_sessions(limit=2)] == ["s4", "s3"]
    assert [r.id for r in store.list_sessions(status="failed")] == ["s3", "s1"]
    assert store.list_sessions(status="running") == []


def test_update_session_changes_fields_and_bumps_updated_at(store: SessionStore, make_session: MakeSession) -> None:
    old = datetime(2024, 1, 1, tzinfo=UTC)
    record = make_session(updated_at=old)
    store.create_session(record)
    updated = store.update_session(record.id, status="completed", total_rounds=4, outcome={"winner": "agent-1"})
    assert (updated.status, updated.total_rounds, updated.outcome) == ("completed", 4, {"winner": "agent-1"})
    assert updated.updated_at > old
    assert store.get_session(record.id) == updated
    assert updated.created_at == record.created_at


def test_update_session_rejects_unknown_fields_bad_values_and_missing_sessions(
    store: SessionStore, make_session: MakeSession
) -> None:
    record = make_session()
    store.create_session(record)
    with pytest.raises(StoreError, match="unknown field"):
        store.update_session(record.id, colour="blue")
    with pytest.raises(StoreError, match="never changes"):
        store.update_session(record.id, id="other")
    with pytest.raises(StoreError, match="status"):
        store.update_session(record.id, status="exploded")
    with pytest.raises(SessionNotFound):
        store.update_session("missing", status="running")
    assert store.get_session(record.id) == record


def test_duplicate_turn_seq_raises_store_error_not_sqlalchemy(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn
) -> None:
    session = make_session()
    store.create_session(session)
    store.add_turn(make_turn(session.id, 1))
    with pytest.raises(StoreError, match="constraint") as caught:
        store.add_turn(make_turn(session.id, 1, key="another-key"))
    assert not isinstance(caught.value, SQLAlchemyError)
    assert isinstance(caught.value.__cause__, SQLAlchemyError)
    assert store.url in str(caught.value), "the message names the store, its password masked"
    assert len(store.turns(session.id)) == 1


def test_duplicate_turn_key_and_version_number_raise_store_error(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn, make_version: MakeVersion
) -> None:
    session = make_session()
    store.create_session(session)
    store.add_turn(make_turn(session.id, 1, key="r1/proposal/agent-1"))
    with pytest.raises(StoreError):
        store.add_turn(make_turn(session.id, 2, key="r1/proposal/agent-1"))
    store.add_code_version(make_version(session.id, 1))
    with pytest.raises(StoreError):
        store.add_code_version(make_version(session.id, 1))
    with pytest.raises(StoreError):
        store.create_session(session)


def test_rows_must_belong_to_an_existing_session(
    store: SessionStore, make_turn: MakeTurn, make_version: MakeVersion
) -> None:
    with pytest.raises(StoreError, match=r"(?i)foreign key"):
        store.add_turn(make_turn("no-such-session", 1))
    with pytest.raises(StoreError, match=r"(?i)foreign key"):
        store.add_code_version(make_version("no-such-session", 1))


def test_turns_survive_when_the_session_is_later_marked_failed(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn, make_version: MakeVersion
) -> None:
    session = make_session(status="running")
    store.create_session(session)
    turns = [make_turn(session.id, seq) for seq in (1, 2, 3)]
    for turn in turns:
        store.add_turn(turn)
    store.add_code_version(make_version(session.id, 1, turn_id=turns[0].id))
    failed = store.update_session(session.id, status="failed", error="sandbox unavailable")
    assert failed.status == "failed"
    assert store.turns(session.id) == turns
    assert len(store.versions(session.id)) == 1


def test_rows_come_back_in_seq_order_and_unknown_sessions_are_empty(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn, make_version: MakeVersion
) -> None:
    session = make_session()
    store.create_session(session)
    store.add_turn(make_turn(session.id, 5))
    store.add_turn(make_turn(session.id, 1))
    store.add_code_version(make_version(session.id, 1))
    assert [t.seq for t in store.turns(session.id)] == [1, 5]
    assert [v.version_number for v in store.versions(session.id)] == [1]
    assert store.turns("other") == []
    assert store.versions("other") == []


def test_token_totals_sum_each_sessions_turns_in_one_query_and_leave_out_sessions_without_turns(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn
) -> None:
    busy, other, silent = make_session(), make_session(), make_session()
    for session in (busy, other, silent):
        store.create_session(session)
    store.add_turn(make_turn(busy.id, 1, prompt_tokens=100, completion_tokens=7))
    store.add_turn(make_turn(busy.id, 2, prompt_tokens=50, completion_tokens=3))
    store.add_turn(make_turn(other.id, 1, prompt_tokens=1, completion_tokens=2))

    totals = store.token_totals([busy.id, silent.id, "unknown"])

    assert totals == {busy.id: (150, 10)}, "another session's turns never count; no turns, no entry"
    assert store.token_totals([]) == {}


def test_turns_are_ordered_by_seq_not_insertion(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn
) -> None:
    session = make_session()
    store.create_session(session)
    for seq in (3, 1, 2):
        store.add_turn(make_turn(session.id, seq))
    assert [turn.seq for turn in store.turns(session.id)] == [1, 2, 3]


def test_concurrent_writes_from_many_threads_all_land(
    store: SessionStore, make_session: MakeSession, make_turn: MakeTurn
) -> None:
    session = make_session()
    store.create_session(session)

    def write(worker: int) -> None:
        for i in range(10):
            seq = worker * 10 + i + 1
            store.add_turn(make_turn(session.id, seq, key=f"w{worker}/{i}"))
            store.update_session(session.id, total_rounds=seq)
            store.turns(session.id)

    assert errors_in_threads(write, range(8)) == []
    assert [turn.seq for turn in store.turns(session.id)] == list(range(1, 81))


def test_a_closed_store_refuses_work_with_store_error(store_url: str, make_session: MakeSession) -> None:
    closed = open_store(store_url)
    closed.close()
    closed.close()
    with pytest.raises(StoreError, match="closed"):
        closed.create_session(make_session())
    with pytest.raises(StoreError, match="closed"):
        closed.list_sessions()


def test_json_fields_store_the_json_form_and_refuse_what_has_none(
    store: SessionStore, make_session: MakeSession
) -> None:
    record = make_session(config={"out": Path("debatecode-out"), "when": datetime(2025, 1, 1, tzinfo=UTC)})
    store.create_session(record)
    assert store.get_session(record.id).config == {"out": "debatecode-out", "when": "2025-01-01T00:00:00Z"}
    with pytest.raises(StoreError, match="JSON field"):
        store.create_session(make_session(outcome={"winner": object()}))


def test_an_in_memory_store_works_for_tests(make_session: MakeSession) -> None:
    with open_store("sqlite://") as memory:
        record = make_session()
        memory.create_session(record)
        assert memory.list_sessions() == [record]


def test_gate_request_and_decision_round_trip(store_url: str, make_session) -> None:  # type: ignore[no-untyped-def]
    from debatecode.store.records import GateRecord

    session = make_session()
    with open_store(store_url) as store:
        store.create_session(session)
        store.add_gate(
            GateRecord(id="g1", session_id=session.id, phase="convergence", summary="ship it?", artifacts={"code": "x"})
        )
        assert [g.status for g in store.gates(session.id)] == ["pending"]
        decided = store.decide_gate("g1", "approved", reviewer="ana", reason="tests pass")
        assert (decided.status, decided.reviewer, decided.reason) == ("approved", "ana", "tests pass")
        assert decided.decided_at is not None
        again = store.decide_gate("g1", "rejected", reviewer="bob")
        assert again.status == "approved", "the first decision stands"
        assert store.get_gate("g1") == again
        assert store.get_gate("missing") is None


def test_postgresql_in_another_time_zone_still_reads_back_utc(
    migrated_postgres_url: str, make_session: MakeSession
) -> None:
    engine = create_engine(migrated_postgres_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            database = conn.execute(text("SELECT current_database()")).scalar_one()
            conn.execute(text(f"ALTER DATABASE \"{database}\" SET TimeZone = 'Asia/Kolkata'"))
    finally:
        engine.dispose()
    record = make_session(created_at=datetime(2025, 6, 1, 12, 0, tzinfo=UTC))
    with open_store(migrated_postgres_url) as store:
        store.create_session(record)
        loaded = store.get_session(record.id)
    assert loaded.created_at == record.created_at
    assert loaded.created_at.utcoffset() == timedelta(0)
    engine = create_engine(migrated_postgres_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT current_setting('TimeZone')")).scalar() == "Asia/Kolkata"
    finally:
        engine.dispose()
