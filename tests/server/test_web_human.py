"""WebHuman: a checkpoint or escalation is answerable from the moment it is announced, and answered once."""

from __future__ import annotations

import asyncio

import pytest

from debatecode.protocol.events import CheckpointRequested, Escalated, RoundCompleted
from debatecode.protocol.human import CheckpointDecision
from debatecode.server.human import UnknownOption, WebHuman

OPTIONS = [("A", "Postgres"), ("B", "Kafka"), ("C", "Continue with guidance")]


def _escalated(awaiting: bool = True) -> Escalated:
    return Escalated(
        "s1",
        "stalemate",
        "- Architect: Postgres\n- Engineer: Kafka",
        options=[{"label": label, "text": text} for label, text in OPTIONS],
        positions={"Architect": "Postgres", "Engineer": "Kafka"},
        awaiting=awaiting,
    )


async def test_an_answer_sent_as_soon_as_the_checkpoint_is_announced_is_kept_for_the_engine() -> None:
    human = WebHuman()
    human.announced(CheckpointRequested("s1", 2, "round 2 done"))
    assert human.waiting_round == 2, "announced, so it waits for an answer before the engine asks"
    assert human.decide(CheckpointDecision(action="guide", guidance="keep it small")) == 2
    assert human.waiting_round is None and human.decide(CheckpointDecision()) is None, "answered once"

    decision = await asyncio.wait_for(human.checkpoint(2, "round 2 done"), timeout=1)

    assert decision == CheckpointDecision(action="guide", guidance="keep it small")
    assert human.waiting_round is None


async def test_a_checkpoint_nobody_announced_opens_when_the_engine_asks() -> None:
    human = WebHuman()
    assert human.decide(CheckpointDecision()) is None, "nothing waits yet"
    asking = asyncio.ensure_future(human.checkpoint(1, ""))
    await asyncio.sleep(0)
    assert human.waiting_round == 1
    assert human.decide(CheckpointDecision(action="end")) == 1
    assert (await asyncio.wait_for(asking, timeout=1)).action == "end"


async def test_other_events_open_nothing() -> None:
    human = WebHuman()
    human.announced(RoundCompleted("s1", 1, {}, None, None))
    human.announced(_escalated(awaiting=False))
    assert human.waiting_round is None and human.escalation is None


async def test_an_option_chosen_as_soon_as_the_escalation_is_announced_is_the_choice() -> None:
    human = WebHuman()
    human.announced(_escalated())
    waiting = human.escalation
    assert waiting is not None and waiting.options == tuple(OPTIONS)
    with pytest.raises(UnknownOption):
        human.choose_option("Z", None)
    assert human.escalation is not None, "an unknown option leaves it waiting"
    assert human.choose_option("b", " Kafka for invoices only ") == ("B", "Kafka")
    assert human.escalation is None and human.choose_option("A", None) is None, "chosen once"

    picked = await asyncio.wait_for(human.choose("Escalation: stalemate", "", OPTIONS), timeout=1)

    assert picked == ("B", "Kafka for invoices only")
