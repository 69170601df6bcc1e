"""The session event feed: appended in order, read back after any id, isolated per session."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from debatecode.errors import StoreError
from debatecode.protocol.events import GateRequested, TurnCompleted, event_data
from debatecode.protocol.recorder import StoreRecorder
from debatecode.store.records import EventRecord, SessionRecord, TurnRecord
from debatecode.store.repository import SessionStore


def test_events_get_growing_ids_and_read_back_after_any_id(
    store: SessionStore, make_session: Callable[..., SessionRecord]
) -> None:
    session = make_session()
    store.create_session(session)
    written = [store.add_event(EventRecord(session_id=session.id, type="Tick", data={"n": n})) for n in range(5)]
    ids = [event.id for event in written]
    assert ids == sorted(ids) and len(set(ids)) == 5 and ids[0] > 0
    assert [e.data["n"] for e in store.events(session.id)] == [0, 1, 2, 3, 4]
    assert [e.data["n"] for e in store.events(session.id, after=ids[2])] == [3, 4]
    assert [e.data["n"] for e in store.events(session.id, after=ids[0], limit=2)] == [1, 2]
    assert store.events(session.id, after=ids[-1]) == []


def test_events_of_one_session_never_show_in_another(
    store: SessionStore, make_session: Callable[..., SessionRecord]
) -> None:
    first, second = make_session(), make_session()
    store.create_session(first)
    store.create_session(second)
    store.add_event(EventRecord(session_id=first.id, type="A"))
    store.add_event(EventRecord(session_id=second.id, type="B"))
    assert [e.type for e in store.events(first.id)] == ["A"]
    assert [e.type for e in store.events(second.id)] == ["B"]


def test_an_event_for_an_unknown_session_is_refused(store: SessionStore) -> None:
    with pytest.raises(StoreError, match="session"):
        store.add_event(EventRecord(session_id="nope", type="A"))


@pytest.fixture
def recorded(
    store: SessionStore, make_session: Callable[..., SessionRecord], make_turn: Callable[..., TurnRecord]
) -> tuple[SessionRecord, StoreRecorder, TurnRecord]:
    """A stored session, a recorder on the store, and the session's first turn, recorded through it."""
    session = make_session()
    store.create_session(session)
    recorder = StoreRecorder(store)
    turn = make_turn(session.id, 1)
    recorder(TurnCompleted(session.id, turn))
    return session, recorder, turn


def test_the_recorder_feeds_every_event_with_its_fields_as_json(
    store: SessionStore, recorded: tuple[SessionRecord, StoreRecorder, TurnRecord]
) -> None:
    session, recorder, turn = recorded
    recorder(GateRequested(session.id, "convergence", "leader: a", "g1"))
    feed = store.events(session.id)
    assert [e.type for e in feed] == ["TurnCompleted", "GateRequested"]
    assert feed[0].data["turn"]["id"] == turn.id and feed[0].data["turn"]["created_at"].endswith(("Z", "+00:00"))
    assert feed[1].data == {"session_id": session.id, "phase": "convergence", "summary": "leader: a", "gate_id": "g1"}
    assert feed[1].data == event_data(GateRequested(session.id, "convergence", "leader: a", "g1"))
    # The turn itself went to its table before the event announcing it.
    assert [t.id for t in store.turns(session.id)] == [turn.id]


def test_a_turn_and_its_event_are_written_together_or_not_at_all(
    store: SessionStore,
    make_turn: Callable[..., TurnRecord],
    recorded: tuple[SessionRecord, StoreRecorder, TurnRecord],
) -> None:
    session, recorder, first = recorded
    # A second turn with the same seq is refused; the event announcing it must not reach the feed either.
    clash = make_turn(session.id, 1)
    with pytest.raises(StoreError, match="turn 1"):
        recorder(TurnCompleted(session.id, clash))
    assert [t.id for t in store.turns(session.id)] == [first.id]
    assert [e.data["turn"]["id"] for e in store.events(session.id)] == [first.id]


def test_a_refused_event_rolls_back_the_status_change_it_announces(
    store: SessionStore, make_session: Callable[..., SessionRecord]
) -> None:
    session = make_session()
    store.create_session(session)
    # An event whose data cannot be stored as JSON fails inside the same transaction as the update.
    bad = EventRecord(session_id=session.id, type="SessionStarted", data={"when": object()})
    with pytest.raises(StoreError):
        store.update_session(session.id, event=bad, status="running")
    assert store.get_session(session.id).status == session.status
    assert store.events(session.id) == []
