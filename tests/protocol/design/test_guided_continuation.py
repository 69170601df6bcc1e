""" "Continue with guidance" at an escalation runs another response round with the person's guidance in every prompt.

The stalemate of ``test_escalation_events``: flat satisfaction escalates after round 3 of a debate with
``max_rounds`` 5. The person picks the last option, D, and writes guidance. The debate then runs round 4 with
that guidance in every debater's prompt, and the gate reviewer decides again: synthesis when round 4 settles
it, another escalation when it does not. At most ``MAX_GUIDED_ROUNDS`` rounds are bought so; an escalation
after them offers "combine with guidance" instead, which adds no round.
"""

from __future__ import annotations

from collections.abc import Mapping

from debatecode.errors import ModelAuthError
from debatecode.llm.scripted import register_scripted
from debatecode.llm.types import Message
from debatecode.protocol.design.escalation import COMBINE_OPTION, GUIDANCE_OPTION, MAX_GUIDED_ROUNDS
from debatecode.protocol.design.question import load_question
from debatecode.protocol.events import Escalated, RoundCompleted
from debatecode.store.records import TurnRecord

from .conftest import BILLING_QUESTION, DebateScript, DebateWorld, FakeHuman, RecordingModel
from .test_escalation_events import STALEMATE, stalemate_script

GUIDANCE = "weigh the nightly reporting jobs above throughput"


def settles_once_guided() -> DebateScript:
    """Flat at 50 until the stalemate; every debater satisfied (95) in the round after it."""
    script = stalemate_script()
    script.satisfaction = lambda agent, round_no, kind: 95 if round_no >= 4 else 50
    return script


def _by_key(turns: list[TurnRecord]) -> dict[str, TurnRecord]:
    return {t.key: t for t in turns}


def _prompt_text(messages: list[Message]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


async def test_continuing_with_guidance_runs_one_more_round_with_it_in_every_prompt_and_records_it(
    design_world: DebateWorld,
) -> None:
    human = FakeHuman(choice=("D", GUIDANCE))
    result = await design_world.debate(BILLING_QUESTION, settles_once_guided(), human=human, **STALEMATE)
    assert result.status == "completed", result.error

    [(_, _, options)] = human.escalations
    assert options[-1] == ("D", GUIDANCE_OPTION), "the last option continues the debate"
    assert human.checkpoints == [1, 2], "no checkpoint is asked around the guided round"
    model = design_world.last
    for phase in ("arguments", "rebuttals"):
        guided = model.of(phase, round_no=4)
        assert len(guided) >= len(model.of(phase, round_no=3)) > 0, f"every debater spoke in round 4's {phase}"
        assert all(GUIDANCE in _prompt_text(c.messages) for c in guided), f"the guidance is in every {phase} prompt"
        assert not any(GUIDANCE in _prompt_text(c.messages) for c in model.of(phase, round_no=3))

    turns = design_world.turns(result.session.id)
    keys = _by_key(turns)
    assert keys["r0/escalation/human/choice"].metadata["choice"] == "D"
    assert "r4/escalation/human/choice" not in keys, "round 4 settled it: nobody is asked again"
    assert all(GUIDANCE in t.prompt for t in turns if t.round == 4 and t.phase in ("arguments", "rebuttals"))
    assert keys["r4/gate/gate-reviewer/review"].metadata["action"] == "synthesize"
    rounds = [e.round for e in design_world.events if isinstance(e, RoundCompleted)]
    assert rounds == [1, 2, 3, 4]

    record = result.record
    assert record is not None
    assert record.rounds == 4 and record.stop_reason.startswith("consensus")
    assert record.escalation is None, "the escalation was answered by more debate, not by a decision"
    [continued] = record.continued
    assert continued.choice == "D" and continued.guidance == GUIDANCE and continued.continued_in_round == 4
    assert record.recommendation.confidence != "HUMAN", "the debaters settled it, no person decided"
    text = result.adr_path.read_text() if result.adr_path else ""
    section = text.split("\n## Escalation after round 3, continued with guidance\n")[1].split("\n## ")[0]
    assert f"**Guidance:** {GUIDANCE}" in section
    assert "**Continued:** the debate ran round 4 with this guidance" in section
    assert "\n## Escalation\n" not in text
    summary = text.split("\n## Round-by-round summary\n")[1].split("\n## ")[0]
    assert f"Human guidance: {GUIDANCE}" in summary and "**Round 4**" in summary
    assert (result.folder / "round-3.md").read_text().count(GUIDANCE) >= 1


async def test_a_guided_round_that_settles_nothing_escalates_again_until_no_round_is_left(
    design_world: DebateWorld,
) -> None:
    human = FakeHuman(choice=("D", GUIDANCE))  # continues at every escalation it is offered
    result = await design_world.debate(BILLING_QUESTION, stalemate_script(), human=human, **STALEMATE)
    assert result.status == "completed", result.error

    assert [options[-1][1] for _, _, options in human.escalations] == [
        GUIDANCE_OPTION,
        GUIDANCE_OPTION,
        COMBINE_OPTION,
    ], f"{MAX_GUIDED_ROUNDS} guided rounds, then the last escalation adds no round"
    escalated = [e for e in design_world.events if isinstance(e, Escalated)]
    assert len(escalated) == 3 and all(e.awaiting for e in escalated)

    keys = _by_key(design_world.turns(result.session.id))
    assert {"r0/escalation/human/choice", "r4/escalation/human/choice", "r5/escalation/human/choice"} <= set(keys)
    assert "r6/arguments/performance/argue" not in keys
    record = result.record
    assert record is not None
    assert record.rounds == 3 + MAX_GUIDED_ROUNDS == 5
    assert [e.continued_in_round for e in record.continued] == [4, 5]
    assert record.escalation is not None and record.escalation.choice == "D"
    assert record.escalation.options[-1].text == COMBINE_OPTION
    assert record.recommendation.confidence == "HUMAN", "at the last escalation the person's direction decides"
    text = result.adr_path.read_text() if result.adr_path else ""
    assert "\n## Escalation after round 3, continued with guidance\n" in text
    assert "\n## Escalation after round 4, continued with guidance\n" in text
    assert "\n## Escalation\n" in text


class FailsInGuidedRebuttals(RecordingModel):
    """The billing stalemate, whose model fails for good at Performance's round-4 rebuttal."""

    def choose(
        self, messages: list[Message], tags: Mapping[str, str], *, model: str = "scripted"
    ) -> tuple[str, float, Exception | None]:
        if tags.get("phase") == "rebuttals" and tags.get("round") == "4" and tags.get("agent") == "performance":
            return "", 0.0, ModelAuthError("scripted: the key was revoked mid-round", model=model)
        return super().choose(messages, tags, model=model)


async def test_a_debate_that_fails_in_its_guided_round_resumes_turn_by_turn_without_asking_again(
    design_world: DebateWorld,
) -> None:
    failing = FailsInGuidedRebuttals(settles_once_guided())
    register_scripted("design", failing)
    design_world.models["design"] = failing
    config = design_world.config(checkpoints__enabled=True, **STALEMATE)
    engine = design_world.engine(config, human=FakeHuman(choice=("D", GUIDANCE)))
    broken = await engine.debate(load_question(BILLING_QUESTION))
    assert broken.status == "failed", "the round-4 rebuttal failed"
    before = _by_key(design_world.turns(broken.session.id))
    assert "r0/escalation/human/choice" in before and "r4/arguments/performance/argue" in before

    again = FakeHuman(choice=("A", None))
    resumed = await design_world.resume(
        broken.session.id, BILLING_QUESTION, settles_once_guided(), human=again, **STALEMATE
    )
    assert resumed.status == "completed", resumed.error
    assert again.escalations == [] and again.checkpoints == [], "the journaled answers are replayed"
    model = design_world.last
    assert model.of("arguments", round_no=4) == [], "round 4's arguments are replayed from the journal"
    assert next(c.agent for c in model.of("rebuttals", round_no=4)) == "performance", "it goes on where it failed"
    assert all(GUIDANCE in _prompt_text(c.messages) for c in model.of("rebuttals", round_no=4))
    record = resumed.record
    assert record is not None and record.rounds == 4 and record.escalation is None
    assert [e.guidance for e in record.continued] == [GUIDANCE]
