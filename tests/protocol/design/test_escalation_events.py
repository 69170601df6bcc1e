"""The escalation step announces itself, whoever runs the debate: ``Escalated``, then ``EscalationDecided``, once.

The engine is driven here as the Python API drives it (``DesignEngine.debate``): no server, no terminal.
"""

from __future__ import annotations

from debatecode.protocol.events import Escalated, EscalationDecided, Event
from debatecode.store import open_store

from .conftest import BILLING_QUESTION, DebateScript, DebateWorld, FakeHuman

KAFKA = "publish invoice events through Kafka"
STALEMATE = {"design__min_rounds": 3, "design__max_rounds": 5}
"""Medium complexity: 4 rounds planned, so the stalemate (3 flat rounds) escalates after round 3."""


def stalemate_script() -> DebateScript:
    return DebateScript(
        satisfaction=50,
        stance=lambda agent: {
            "operational-simplicity": "keep the outbox table and add a relay",
            "performance": KAFKA,
        }.get(agent, f"{agent} wants a staged hybrid"),
    )


def _of(events: list[Event], kind: type[Event]) -> list[Event]:
    return [e for e in events if isinstance(e, kind)]


async def test_an_escalation_a_person_answers_is_announced_with_its_options_then_its_choice(
    design_world: DebateWorld,
) -> None:
    human = FakeHuman(choice=("C", "Kafka for invoices only"))
    result = await design_world.debate(BILLING_QUESTION, stalemate_script(), human=human, **STALEMATE)
    assert result.status == "completed", result.error

    [escalated] = _of(design_world.events, Escalated)
    [decided] = _of(design_world.events, EscalationDecided)
    assert isinstance(escalated, Escalated) and isinstance(decided, EscalationDecided)
    assert escalated.session_id == decided.session_id == result.session.id
    assert escalated.reason.startswith("stalemate") and escalated.awaiting is True
    [(_, summary, asked)] = human.escalations
    assert [(o["label"], o["text"]) for o in escalated.options] == asked, "the options the person was shown"
    assert escalated.summary == summary
    assert escalated.positions["Performance"] == f"{KAFKA}."
    assert decided.choice == "C" and decided.decided_by == "human"
    assert decided.text == dict(asked)["C"] and KAFKA in decided.text
    assert decided.guidance == "Kafka for invoices only"
    order = [type(e).__name__ for e in design_world.events]
    assert order.index("Escalated") < order.index("EscalationDecided") < order.index("SessionFinished")

    store = open_store(design_world.store_url)
    try:
        fed = [e.type for e in store.events(result.session.id, limit=5000)]
    finally:
        store.close()
    assert fed.count("Escalated") == 1 and fed.count("EscalationDecided") == 1, "the feed has each once"


async def test_an_escalation_nobody_can_answer_is_announced_as_not_awaited_and_decided_by_nobody(
    design_world: DebateWorld,
) -> None:
    result = await design_world.debate(BILLING_QUESTION, stalemate_script(), **STALEMATE)
    assert result.escalated

    [escalated] = _of(design_world.events, Escalated)
    [decided] = _of(design_world.events, EscalationDecided)
    assert isinstance(escalated, Escalated) and isinstance(decided, EscalationDecided)
    assert escalated.awaiting is False
    assert [o["label"] for o in escalated.options] == ["A", "B", "C", "D"]
    assert decided.choice is None and decided.decided_by == "nobody" and decided.text == ""


async def test_resuming_a_decided_escalation_announces_nothing_again(design_world: DebateWorld) -> None:
    human = FakeHuman(choice=("C", None))
    first = await design_world.debate(BILLING_QUESTION, stalemate_script(), human=human, **STALEMATE)
    assert first.status == "completed", first.error
    design_world.events.clear()

    again = FakeHuman(choice=("A", None))
    resumed = await design_world.resume(
        first.session.id, BILLING_QUESTION, stalemate_script(), human=again, **STALEMATE
    )
    assert resumed.status == "completed", resumed.error
    assert again.escalations == [], "the journaled choice is replayed, nobody is asked twice"
    assert not _of(design_world.events, Escalated) and not _of(design_world.events, EscalationDecided)
