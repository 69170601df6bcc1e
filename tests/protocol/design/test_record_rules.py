"""The decision record is right in every detail: who dissents, how sure it is, who took part, what happened when."""

from __future__ import annotations

import re

from tests.protocol.design.conftest import (
    DEFAULT_SYNTHESIS,
    SQLITE_QUESTION,
    DebateScript,
    DebateWorld,
    RecordingModel,
    debate_fn,
)

from debatecode.llm.scripted import register_scripted
from debatecode.protocol.design.engine import DesignResult
from debatecode.protocol.design.question import load_question

CROISSANT = (
    "Stance: laminate the dough with cold butter.\n"
    "Reasons:\n- fold the butter block into the dough three times and chill it between folds\n"
    "- proof the shaped croissants until they wobble, then bake them golden at 200 degrees\n"
    "Challenge: Contrarian: your flour has too little protein for a flaky crumb.\n"
    "Satisfaction: 95\nReady for synthesis: no"
)


def _section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0].strip()


def _adr(result: DesignResult) -> str:
    assert result.adr_path is not None, result.error
    return result.adr_path.read_text(encoding="utf-8")


async def test_a_dissent_aimed_at_the_contrarian_is_never_the_contrarians(design_world: DebateWorld) -> None:
    script = DebateScript(satisfaction=60, challenge_text=lambda agent, rnd: "I disagree with Contrarian on the costs")
    result = await design_world.debate(SQLITE_QUESTION, script, design__min_rounds=2, design__max_rounds=2)
    record = result.record
    assert record is not None and record.dissents
    aimed = [d for d in record.dissents if re.search(r"disagree with contrarian", d.text, re.IGNORECASE)]
    assert aimed and set(aimed[0].perspectives) >= {"Moonshot", "Data Integrity"}, "its holders share it"
    for dissent in record.dissents:
        if re.search(r"disagree with contrarian", dissent.text, re.IGNORECASE):
            assert "Contrarian" not in dissent.perspectives, dissent
    contrarian = [d for d in record.dissents if "Contrarian" in d.perspectives]
    assert contrarian == [contrarian[0]] and "keeping SQLite" in contrarian[0].text, "its own stance, in its own words"
    holders = [name for d in record.dissents for name in d.perspectives]
    assert len(holders) == len(set(holders)), "each perspective listed once"


async def test_high_confidence_drops_to_medium_after_a_correction_and_says_why(design_world: DebateWorld) -> None:
    corrected = "PostgreSQL is needed from day one because several writers append events at once"
    script = DebateScript(
        satisfaction=95, review=lambda agent: f"MISREPRESENTED: {corrected}" if agent == "contrarian" else "ACCURATE"
    )
    result = await design_world.debate(SQLITE_QUESTION, script)
    record = result.record
    assert record is not None and record.corrections
    assert record.stop_reason.startswith("consensus")
    assert record.recommendation.confidence == "MEDIUM"
    assert "lowered from HIGH because Contrarian corrected how the record stated its view" in (
        record.recommendation.confidence_reason
    )
    assert record.status == "proposed"
    text = _adr(result)
    assert "- **Confidence:** MEDIUM" in text and "**Confidence:** HIGH" not in text


async def test_the_record_says_when_the_contrarian_did_not_take_part(design_world: DebateWorld) -> None:
    result = await design_world.debate(SQLITE_QUESTION, DebateScript(satisfaction=95), design__contrarian=False)
    record = result.record
    assert record is not None
    assert "Contrarian" not in [p.name for p in record.perspectives]
    [line] = record.participation
    assert line.startswith("The Contrarian did not take part (switched off (design.contrarian = false))")
    assert "The Contrarian did not take part" in _section(_adr(result), "Participation")


async def test_with_everyone_there_the_participation_section_says_so(design_world: DebateWorld) -> None:
    result = await design_world.debate(SQLITE_QUESTION, DebateScript(satisfaction=95))
    assert _section(_adr(result), "Participation") == "Every perspective took part throughout."


async def test_rounds_implementation_notes_and_responsibilities_from_the_moderator(design_world: DebateWorld) -> None:
    synthesis = (
        DEFAULT_SYNTHESIS
        + "## Implementation notes\n- Turn on WAL mode before the first release\n"
        + "## Responsibilities\n- Data Integrity: the event schema and its checksums | the append-only events table\n"
    )
    result = await design_world.debate(SQLITE_QUESTION, DebateScript(satisfaction=95, synthesis=synthesis))
    record = result.record
    assert record is not None
    assert [r.round for r in record.round_summaries] == [1, 2]
    assert record.round_summaries[0].decision.startswith("continue: min rounds")
    assert record.round_summaries[1].decision.startswith("synthesize: consensus")
    assert record.round_summaries[0].summary.startswith("Round 1 summary")
    assert record.implementation_notes == ["Turn on WAL mode before the first release"]
    integrity = next(p for p in record.perspectives if p.name == "Data Integrity")
    assert integrity.responsibilities == ["the event schema and its checksums"]
    assert integrity.interfaces == ["the append-only events table"]
    simplicity = next(p for p in record.perspectives if p.name == "Operational Simplicity")
    assert simplicity.responsibilities and simplicity.responsibilities[0].endswith("(its declared focus)")
    text = _adr(result)
    rounds = _section(text, "Round-by-round summary")
    assert "- **Round 1** (satisfaction: " in rounds and "Gate reviewer: synthesize: consensus" in rounds
    assert _section(text, "Implementation notes") == "- Turn on WAL mode before the first release"
    assert "**Responsibilities:** the event schema and its checksums" in text
    assert "**Interfaces:** the append-only events table" in text


async def test_without_the_moderators_notes_the_holders_reasons_are_the_implementation_notes(
    design_world: DebateWorld,
) -> None:
    result = await design_world.debate(SQLITE_QUESTION, DebateScript(satisfaction=95))
    record = result.record
    assert record is not None and record.implementation_notes
    assert all("weighs the" in note for note in record.implementation_notes), record.implementation_notes


async def test_a_perspective_off_topic_twice_in_a_row_is_muted_and_the_record_says_so(
    design_world: DebateWorld,
) -> None:
    script = DebateScript(satisfaction=95)
    normal = debate_fn(script)

    def fn(messages: list, tags: dict[str, str]) -> str:  # type: ignore[type-arg]
        if tags.get("agent") == "moonshot" and tags.get("phase") in ("arguments", "rebuttals"):
            return CROISSANT
        return normal(messages, tags)

    model = RecordingModel(script)
    model._fn = fn
    register_scripted("design", model)
    design_world.models["design"] = model
    config = design_world.config(memory__embedder="hashing", design__min_rounds=3, design__max_rounds=3)
    result = await design_world.engine(config).debate(load_question(SQLITE_QUESTION))

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    spoken = {(t.round, t.phase) for t in turns if t.agent_id == "moonshot"}
    assert (1, "arguments") in spoken and (1, "rebuttals") in spoken
    assert not {(r, p) for r, p in spoken if r >= 2 and p in ("arguments", "rebuttals")}, "muted after round 1"
    gate = next(t for t in turns if t.key == "r1/gate/gate-reviewer/review")
    kinds = [(f["kind"], f["agents"]) for f in gate.metadata["flags"]]
    assert ("off_topic", ["moonshot"]) in kinds and ("muted", ["moonshot"]) in kinds
    record = result.record
    assert record is not None
    assert any(line.startswith("Moonshot was muted after round 1") for line in record.participation)
    assert "Moonshot" not in record.scores, "a muted perspective's stale score decides nothing"
    assert any("muted: Moonshot" in note for note in record.round_summaries[0].notes)


async def test_the_journal_alone_gives_back_the_escalation_and_the_choice(design_world: DebateWorld) -> None:
    """What a server shows (``escalation_from_turns``) is what the record says, read from the stored turns only."""
    from tests.protocol.design.conftest import FakeHuman

    from debatecode.protocol.design.escalation import escalation_from_turns

    script = DebateScript(
        satisfaction=50,
        stance=lambda agent: "keep SQLite in WAL mode" if agent == "contrarian" else "move the events to PostgreSQL",
    )
    human = FakeHuman(choice=("B", "revisit at 100 writes a second"))
    result = await design_world.debate(SQLITE_QUESTION, script, human=human, design__min_rounds=2, design__max_rounds=2)
    record = result.record
    assert record is not None and record.escalation is not None
    stored = escalation_from_turns(design_world.turns(result.session.id))
    assert stored == record.escalation
    assert stored.choice == "B" and stored.decided_by == "human" and stored.guidance == "revisit at 100 writes a second"
    chosen = next(o for o in stored.options if o.label == "B")
    assert chosen.holders == ["Contrarian"] and "keep SQLite" in chosen.stance, "the minority position"
    assert record.recommendation.text.startswith("Option B, chosen by a person at the escalation: keep SQLite")
    assert escalation_from_turns([]) is None
