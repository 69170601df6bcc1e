"""Design debates end to end over scripted models: rounds, gate decisions, polls, escalation, synthesis and the ADR.

Every test runs the real ``DesignEngine`` against a temp repository and a temp
SQLite store, then checks what the debate left behind: the stored session and
turns, the session folder (``.debatecode/debates/<id>/``) and the ADR.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from debatecode.errors import TaskError
from debatecode.llm.function import FunctionModel
from debatecode.llm.types import Message
from debatecode.protocol.design.engine import DesignResult
from debatecode.store.records import TurnRecord

from .conftest import (
    ADR_SECTIONS,
    BILLING_QUESTION,
    NUDGE_MARK,
    SQLITE_QUESTION,
    DebateScript,
    DebateWorld,
    FakeHuman,
    Rendezvous,
    debate_fn,
)

SPECIALISTS = ("observability", "operations", "test", "security")
"""The cross-cutting specialists every design debate includes (seed 000's rule of thumb)."""
SQLITE_DEBATERS = ("data-integrity", "operational-simplicity", *SPECIALISTS, "contrarian", "moonshot")
SQLITE_NAMES = [
    "Data Integrity",
    "Operational Simplicity",
    "Observability",
    "Operations",
    "Testability",
    "Security",
    "Contrarian",
    "Moonshot",
]
TRIO = ("simplicity", *SPECIALISTS, "contrarian", "moonshot")
"""``design.perspectives = ["simplicity"]`` plus the specialists and the always-present Contrarian and Moonshot."""


def _keys(turns: list[TurnRecord]) -> list[str]:
    return [t.key for t in turns]


def _by_key(turns: list[TurnRecord]) -> dict[str, TurnRecord]:
    return {t.key: t for t in turns}


def _adr(result: DesignResult) -> str:
    assert result.adr_path is not None, result.error
    assert result.adr_path.parent == result.folder.parents[2] / "docs" / "decisions"
    return result.adr_path.read_text(encoding="utf-8")


def _gate(turns: list[TurnRecord], round_no: int) -> TurnRecord:
    return _by_key(turns)[f"r{round_no}/gate/gate-reviewer/review"]


def _flag_kinds(turns: list[TurnRecord], round_no: int) -> set[str]:
    return {flag["kind"] for flag in _gate(turns, round_no).metadata["flags"]}


def _rounds_spoken(turns: list[TurnRecord]) -> set[int]:
    return {t.round for t in turns if t.phase in ("arguments", "rebuttals")}


def _assert_unique_keys(turns: list[TurnRecord]) -> None:
    repeated = [key for key, n in Counter(_keys(turns)).items() if n > 1]
    assert not repeated, repeated
    assert [t.seq for t in turns] == list(range(1, len(turns) + 1))


# -- 1. consensus ------------------------------------------------------------------------------------------------


async def test_consensus_from_round_one_stops_after_the_minimum_two_rounds(design_world: DebateWorld) -> None:
    positions_together = Rendezvous("positions", len(SQLITE_DEBATERS))
    result = await design_world.debate(SQLITE_QUESTION, DebateScript(satisfaction=95), transport=positions_together)

    assert result.status == "completed", result.error
    session = result.session
    assert session.kind == "design" and session.status == "completed" and session.total_rounds == 2
    record = result.record
    assert record is not None
    assert record.rounds == 2
    assert record.stop_reason.startswith("consensus")
    assert record.status == "accepted"
    assert record.recommendation.confidence == "HIGH"
    assert record.recommendation.text == "Use SQLite now, with a migration path to PostgreSQL."
    assert [p.name for p in record.perspectives] == SQLITE_NAMES
    assert record.scores == dict.fromkeys(SQLITE_NAMES, 95)
    assert session.outcome["stop_reason"] == record.stop_reason and session.outcome["confidence"] == "HIGH"
    assert session.outcome["adr"] == str(result.adr_path)

    turns = design_world.turns(session.id)
    _assert_unique_keys(turns)
    assert _rounds_spoken(turns) == {1, 2}, "min rounds reached, then consensus stops the loop"
    for phase in ("positions", "arguments", "rebuttals"):
        assert {t.agent_id for t in turns if t.phase == phase} == set(SQLITE_DEBATERS), phase
    assert _gate(turns, 1).metadata["action"] == "continue"
    assert _gate(turns, 2).metadata["action"] == "synthesize"
    assert "converged" in _flag_kinds(turns, 2)

    # Phase 1: in parallel (all positions were asked before any was answered), and blind to the others.
    assert len(design_world.last.of("positions")) == len(SQLITE_DEBATERS)
    assert positions_together.met, "the positions were asked one after another"
    stored = [t for t in turns if t.phase == "positions"]
    assert len(stored) == len(SQLITE_DEBATERS) and all(t.prompt for t in stored)
    for turn in stored:
        others = [t for t in stored if t.agent_id != turn.agent_id]
        for other in others:
            assert f"Stance: {other.agent_id} recommends" in other.content
            assert f"{other.agent_id} recommends" not in turn.prompt, (turn.agent_id, other.agent_id)
    round_one = next(t for t in turns if t.key == "r1/arguments/moonshot/argue")
    assert "contrarian recommends" in round_one.prompt, "from round 1 on, debaters see the positions"

    text = _adr(result)
    assert text.startswith("# ADR 0001: Should a small team store session events in SQLite or PostgreSQL?")
    for heading in ADR_SECTIONS:
        assert f"\n## {heading}\n" in text, heading
    assert "## Escalation" not in text and "## Corrections" not in text
    assert "- **Status:** accepted" in text and "**Confidence:** HIGH" in text
    assert "### Contrarian" in text and "### Moonshot" in text
    assert "contrarian recommends keeping SQLite with a documented exit path." in text
    assert "| Lock contention | medium | high | WAL mode and short transactions | Moderator |" in text

    folder = result.folder
    assert folder == design_world.repo / ".debatecode" / "debates" / session.id
    assert sorted(p.name for p in folder.iterdir()) == [
        "convergence.json",
        "metadata.json",
        "round-0.md",
        "round-1.md",
        "round-2.md",
    ]
    metadata = json.loads((folder / "metadata.json").read_text())
    assert metadata["status"] == "completed" and metadata["rounds_completed"] == 2
    assert metadata["perspectives"] == SQLITE_NAMES
    assert metadata["adr"] == str(result.adr_path)
    convergence = json.loads((folder / "convergence.json").read_text())
    assert convergence["converged"] is True and convergence["reason"].startswith("consensus")
    assert [r["round"]["action"] for r in convergence["rounds"]] == ["continue", "synthesize"]
    assert "# Round 0: independent positions" in (folder / "round-0.md").read_text()


# -- 2. stalemate → escalation -----------------------------------------------------------------------------------


def _stalemate_script() -> DebateScript:
    return DebateScript(
        satisfaction=50,
        stance=lambda agent: {
            "operational-simplicity": "keep the outbox table and add a relay",
            "performance": "publish invoice events through Kafka",
        }.get(agent, f"{agent} wants a staged hybrid"),
    )


async def _stalemate(world: DebateWorld, human: FakeHuman | None = None) -> DesignResult:
    # Medium complexity: min 3 + 1 = 4 rounds planned, so the stalemate (3 flat rounds) comes before the cap.
    return await world.debate(
        BILLING_QUESTION, _stalemate_script(), human=human, design__min_rounds=3, design__max_rounds=5
    )


async def test_flat_satisfaction_escalates_and_nobody_decides_without_a_human(design_world: DebateWorld) -> None:
    result = await _stalemate(design_world)

    assert result.status == "completed", result.error
    assert result.escalated
    record = result.record
    assert record is not None
    assert record.rounds == 3
    assert record.stop_reason.startswith("stalemate")
    assert record.status == "escalated"
    assert record.recommendation.confidence == "LOW"
    assert record.recommendation.text.startswith("Undecided: stalemate"), "nobody decided: the record must not pretend"
    escalation = record.escalation
    assert escalation is not None
    assert escalation.reason.startswith("stalemate")
    assert escalation.choice is None and escalation.decided_by == "nobody"
    labels = [o.label for o in escalation.options]
    assert labels == ["A", "B", "C", "D"], "one option per position (three), then continue with guidance"
    hybrid, *_ = escalation.options
    assert "staged hybrid" in hybrid.stance and {"Contrarian", "Moonshot"} <= set(hybrid.holders), "most held first"
    by_stance = {o.stance: o for o in escalation.options if o.kind == "position"}
    assert by_stance["keep the outbox table and add a relay."].holders == ["Operational Simplicity"]
    assert by_stance["publish invoice events through Kafka."].holders == ["Performance"]
    assert escalation.options[1].text == "Operational Simplicity: keep the outbox table and add a relay."
    assert escalation.options[2].text == "Performance: publish invoice events through Kafka."
    last = escalation.options[-1]
    assert last.kind == "guidance" and last.text.startswith("Continue with guidance")

    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    assert _rounds_spoken(turns) == {1, 2, 3}
    for round_no in (1, 2, 3):
        assert not {"repetition", "circular"} & _flag_kinds(turns, round_no), "the texts vary: no repetition"
    assert "stalemate" in _flag_kinds(turns, 3)
    assert _gate(turns, 3).metadata["action"] == "escalate"
    choice = _by_key(turns)["r0/escalation/human/choice"]
    assert choice.content == "no decision (non-interactive run)" and choice.metadata["choice"] is None

    text = _adr(result)
    assert "- **Status:** escalated" in text
    assert "\n## Escalation\n" in text
    for label in ("A", "B", "C", "D"):
        assert f"- **{label}.** " in text
    assert "**Choice:** no decision: non-interactive run" in text
    assert "Moderator's draft" not in text, "nobody decided: there is no decision the draft was replaced by"
    assert result.session.outcome["record_status"] == "escalated"


async def test_a_human_choice_at_the_escalation_is_journaled_and_shapes_the_record(design_world: DebateWorld) -> None:
    human = FakeHuman(choice=("C", "start with Kafka for invoices only"))  # a position only Performance holds
    result = await _stalemate(design_world, human)

    assert result.status == "completed", result.error
    assert not result.escalated
    assert human.checkpoints == [1, 2], "continue at every checkpoint until the stalemate"
    [(title, summary, options)] = human.escalations
    assert title.startswith("Escalation: stalemate")
    assert "Performance" in summary
    assert [label for label, _ in options] == ["A", "B", "C", "D"]

    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    choice = _by_key(turns)["r0/escalation/human/choice"]
    assert choice.agent_id == "human" and choice.status == "ok"
    assert choice.metadata["choice"] == "C" and choice.metadata["guidance"] == "start with Kafka for invoices only"
    synthesis = _by_key(turns)["r0/synthesis/moderator/synthesise"]
    assert "option C: Performance: publish invoice events through Kafka." in synthesis.prompt
    assert "start with Kafka for invoices only" in synthesis.prompt

    record = result.record
    assert record is not None and record.escalation is not None
    assert record.escalation.choice == "C" and record.escalation.decided_by == "human"
    assert record.recommendation.text.startswith(
        "Option C, chosen by a person at the escalation: publish invoice events through Kafka."
    ), "the person's choice is the decision, not the moderator's draft"
    assert record.recommendation.confidence == "HUMAN"
    assert record.moderator_draft == "Use SQLite now, with a migration path to PostgreSQL."
    assert record.status == "accepted"
    dissenters = {name for d in record.dissents for name in d.perspectives}
    assert "Performance" not in dissenters and {"Operational Simplicity", "Contrarian", "Moonshot"} <= dissenters
    text = _adr(result)
    assert "**Choice:** C: Performance: publish invoice events through Kafka. (decided by human)" in text
    assert "**Guidance:** start with Kafka for invoices only" in text
    assert "**Confidence:** decided by a person at the escalation — " in text
    recommendation = text.split("\n## Recommendation\n")[1].split("\n## ")[0]
    assert "HIGH" not in recommendation and "MEDIUM" not in recommendation
    draft = text.split("\n## Moderator's draft (context only, not the decision)\n")[1]
    assert "Use SQLite now, with a migration path to PostgreSQL." in draft
    assert "- **Status:** accepted" in text


# -- 3. repetition → circular → forced synthesis -----------------------------------------------------------------


async def test_repeated_speeches_turn_circular_and_force_a_synthesis_with_dissents(design_world: DebateWorld) -> None:
    script = DebateScript(
        repeat=True,
        satisfaction=lambda agent, rnd, kind: 70 if agent == "contrarian" else 95,
        challenge_text=lambda agent, rnd: f"{agent} says the write load claim needs measured numbers",
    )
    result = await design_world.debate(SQLITE_QUESTION, script, design__min_rounds=3, design__max_rounds=5)

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    assert "repetition" not in _flag_kinds(turns, 1)
    assert "repetition" in _flag_kinds(turns, 2) and "circular" not in _flag_kinds(turns, 2)
    assert {"repetition", "circular"} <= _flag_kinds(turns, 3)
    assert _rounds_spoken(turns) == {1, 2, 3}

    record = result.record
    assert record is not None
    assert record.stop_reason.startswith("circular")
    assert "forced synthesis with dissents recorded" in record.stop_reason
    assert record.escalation is None
    assert "r0/synthesis/moderator/synthesise" in _keys(turns)
    assert [(d.perspectives, d.text) for d in record.dissents] == [
        (["Contrarian"], "Moonshot: contrarian says the write load claim needs measured numbers.")
    ], "only the perspective below the target dissents, in its own words"
    assert record.recommendation.confidence == "MEDIUM"
    text = _adr(result)
    assert "- **Contrarian:** Moonshot: contrarian says the write load claim needs measured numbers." in text
    assert "## Escalation" not in text
    round_three = (result.folder / "round-3.md").read_text()
    assert "**circular**" in round_three and "**repetition**" in round_three


# -- 4. convergence polls ----------------------------------------------------------------------------------------


async def test_a_two_thirds_poll_moves_the_debate_to_synthesis(design_world: DebateWorld) -> None:
    script = DebateScript(
        satisfaction=70,
        ready=lambda agent, rnd, kind: agent == "simplicity" and rnd == 2,
        votes=lambda agent, rnd: agent not in ("moonshot", "security"),
    )
    result = await design_world.debate(SQLITE_QUESTION, script, design__perspectives=["simplicity"])

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    assert {t.agent_id for t in turns if t.phase == "positions"} == set(TRIO)
    votes = {t.agent_id: t.content for t in turns if t.phase == "poll"}
    assert votes == {
        **dict.fromkeys(
            ("simplicity", "observability", "operations", "test", "contrarian"), "yes, ready to synthesise"
        ),
        "security": "no, not yet",
        "moonshot": "no, not yet",
    }
    assert all(t.round == 2 and t.key.endswith("/vote") for t in turns if t.phase == "poll")
    assert "poll" in _flag_kinds(turns, 2)

    record = result.record
    assert record is not None
    assert record.stop_reason.startswith("convergence poll")
    assert "5/7 yes (called by simplicity)" in record.stop_reason
    assert record.recommendation.confidence == "MEDIUM"
    assert record.status == "proposed"
    round_two = (result.folder / "round-2.md").read_text()
    assert "Called by Simplicity: 71% yes, passed." in round_two
    assert "- Moonshot: no" in round_two and "- Contrarian: yes" in round_two
    convergence = json.loads((result.folder / "convergence.json").read_text())
    assert convergence["converged"] is True and convergence["reason"].startswith("convergence poll")
    assert "convergence poll: 5/7 yes" in _adr(result)


async def test_a_one_third_poll_fails_and_the_debate_goes_on(design_world: DebateWorld) -> None:
    script = DebateScript(
        satisfaction=lambda agent, rnd, kind: 95 if rnd >= 3 else 70,
        ready=lambda agent, rnd, kind: agent == "simplicity" and rnd == 2,
        votes=lambda agent, rnd: agent == "simplicity",
    )
    # Medium complexity: 3 rounds planned, so a failed poll in round 2 leaves room for a third.
    result = await design_world.debate(BILLING_QUESTION, script, design__perspectives=["simplicity"])

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    assert sorted(t.agent_id for t in turns if t.phase == "poll") == sorted(TRIO)
    assert {t.round for t in turns if t.phase == "poll"} == {2}
    assert "poll" not in _flag_kinds(turns, 2)
    assert _gate(turns, 2).metadata["action"] == "continue"
    assert _rounds_spoken(turns) == {1, 2, 3}
    record = result.record
    assert record is not None
    assert record.rounds == 3 and record.stop_reason.startswith("consensus")
    round_two = (result.folder / "round-2.md").read_text()
    assert "Called by Simplicity: 14% yes, failed." in round_two


# -- 6. patchlist mode -------------------------------------------------------------------------------------------

BACKUP = ("BLOCKING", "B1: no backup of the event store -> add nightly snapshots")


def _patches(agent: str, round_no: int, kind: str) -> list[tuple[str, str]]:
    items = [BACKUP]
    if agent == "data-integrity":
        items.append(("BLOCKING", "B2: the WAL file grows without bound -> checkpoint it hourly"))
    if agent == "contrarian":
        items += [
            ("HIGH", "H1: the WAL file grows without bound -> truncate it at startup"),
            ("HIGH", "H2: no load test of concurrent writers -> run one before launch"),
        ]
    if agent == "moonshot":
        items.append(("MEDIUM/LOW", "M1: event names are not versioned -> prefix them with v1"))
    return items


async def test_patchlist_mode_merges_and_renumbers_items_into_severity_sections(design_world: DebateWorld) -> None:
    script = DebateScript(patchlist=_patches)
    result = await design_world.debate(SQLITE_QUESTION, script, design__mode="patchlist")

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    position = _by_key(turns)["r0/positions/moonshot/position"]
    assert "BLOCKING:" in position.prompt and "MEDIUM/LOW:" in position.prompt, "debaters are asked for a patchlist"
    record = result.record
    assert record is not None and record.mode == "patchlist"
    patches = [(p.id, p.severity, p.issue, p.change, p.raised_by) for p in record.patches]
    assert patches == [
        (
            "B1",
            "BLOCKING",
            "no backup of the event store",
            "add nightly snapshots",
            SQLITE_NAMES,
        ),
        (
            "B2",
            "BLOCKING",
            "the WAL file grows without bound",
            "checkpoint it hourly",
            ["Data Integrity", "Contrarian"],
        ),
        ("H1", "HIGH", "no load test of concurrent writers", "run one before launch", ["Contrarian"]),
        ("M1", "MEDIUM-LOW", "event names are not versioned", "prefix them with v1", ["Moonshot"]),
    ]

    text = _adr(result)
    assert "- **Mode:** patchlist" in text
    for heading in ("BLOCKING", "HIGH", "MEDIUM/LOW"):
        assert f"\n## {heading}\n" in text, heading
    for essay in ("Perspectives", "Points of agreement", "Key tensions", "Rejected alternatives"):
        assert f"\n## {essay}\n" not in text, essay
    for heading in ("Recommendation", "Confidence"):
        assert f"\n## {heading}\n" in text, "a patchlist states what to do and how sure it is"
    blocking = text.split("\n## BLOCKING\n")[1].split("\n## HIGH\n")[0]
    assert "**B1** no backup of the event store → add nightly snapshots" in blocking
    assert "**B2** the WAL file grows without bound → checkpoint it hourly (raised by: Data Integrity, Contrarian)" in (
        blocking
    )
    assert "**M1** event names are not versioned" in text.split("\n## MEDIUM/LOW\n")[1]


# -- 7. rubber stamps --------------------------------------------------------------------------------------------


async def test_a_reply_that_challenges_nobody_is_rejected_and_asked_again_once(design_world: DebateWorld) -> None:
    def challenges(agent: str, rnd: int, kind: str, retry: bool) -> bool:
        if rnd == 1 and kind == "argue" and agent == "moonshot":
            return retry  # agrees blindly, then challenges once nudged
        return not (rnd == 1 and kind == "argue" and agent == "contrarian")  # never challenges in round 1

    result = await design_world.debate(SQLITE_QUESTION, DebateScript(challenges=challenges))

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    by_key = _by_key(turns)
    model = design_world.last
    for agent in ("moonshot", "contrarian"):
        rejected = by_key[f"r1/arguments/{agent}/argue:rejected"]
        assert rejected.status == "rejected"
        assert "Challenge:" not in rejected.content
        calls = model.of("arguments", round_no=1, agent=agent)
        assert len(calls) == 2, "re-asked once, never twice"
        assert NUDGE_MARK not in str(calls[0].messages[-1]["content"])
        assert NUDGE_MARK in str(calls[1].messages[-1]["content"])
        kept = by_key[f"r1/arguments/{agent}/argue"]
        assert kept.status == "ok" and kept.metadata["rejected_retry"] is True
    assert "Challenge: Contrarian:" in by_key["r1/arguments/moonshot/argue"].content
    assert "Challenge:" not in by_key["r1/arguments/contrarian/argue"].content, "the second answer stands as given"
    for agent in ("data-integrity", "operational-simplicity"):
        assert f"r1/arguments/{agent}/argue:rejected" not in by_key
        assert len(model.of("arguments", round_no=1, agent=agent)) == 1
    assert not [t for t in turns if t.status == "rejected" and t.round != 1]
    assert not [t for t in turns if t.phase == "positions" and t.status == "rejected"], "phase 1 needs no challenge"
    round_one = (result.folder / "round-1.md").read_text()
    assert round_one.count("Re-asked: the first reply challenged nobody or gave no satisfaction score.") == 2


# -- 8. synthesis review -----------------------------------------------------------------------------------------

CORRECTED = "PostgreSQL is needed from day one because several writers append events at once"


async def test_a_misrepresented_dissent_gets_one_correction_round_in_the_debaters_words(
    design_world: DebateWorld,
) -> None:
    script = DebateScript(
        satisfaction=lambda agent, rnd, kind: 70 if agent == "contrarian" else 95,
        ready=lambda agent, rnd, kind: agent == "data-integrity" and rnd == 2,
        review=lambda agent: f"MISREPRESENTED: {CORRECTED}" if agent == "contrarian" else "ACCURATE",
    )
    result = await design_world.debate(SQLITE_QUESTION, script)

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    _assert_unique_keys(turns)
    reviews = [t for t in turns if t.phase == "synthesis_review"]
    assert sorted(t.agent_id for t in reviews) == sorted(SQLITE_DEBATERS), "every debater reviews once"
    contrarian_review = _by_key(turns)["r0/synthesis_review/contrarian/review"]
    assert "Dissent: Moonshot: the write load claim needs measured numbers." in contrarian_review.prompt
    [correction] = [t for t in turns if t.phase == "correction"]
    assert correction.key == "r0/correction/moderator/apply"
    assert correction.content == f"Contrarian: {CORRECTED}"
    assert correction.seq == max(t.seq for t in turns), "one correction round, nothing asked after it"

    record = result.record
    assert record is not None
    assert record.stop_reason.startswith("convergence poll")
    assert [(d.perspectives, d.text) for d in record.dissents] == [(["Contrarian"], CORRECTED)]
    assert len(record.corrections) == 1 and CORRECTED in record.corrections[0]
    text = _adr(result)
    dissents = text.split("\n## Dissents\n")[1].split("\n## ")[0]
    assert f"- **Contrarian:** {CORRECTED}" in dissents
    assert "the write load claim needs measured numbers" not in dissents, "the misrepresented version is replaced"
    corrections = text.split("\n## Corrections\n")[1]
    assert "Contrarian said its view was misrepresented" in corrections and CORRECTED in corrections


# -- 9. checkpoints ----------------------------------------------------------------------------------------------


async def test_an_unanswered_checkpoint_pauses_and_resume_continues_without_asking_again(
    design_world: DebateWorld,
) -> None:
    paused = await design_world.debate(SQLITE_QUESTION, human=FakeHuman(hang=True), checkpoints__timeout_s=0.2)

    assert paused.status == "paused"
    assert paused.session.status == "paused"
    assert paused.record is None and paused.adr_path is None
    assert f"--resume {paused.session.id}" in str(paused.error)
    session_id = paused.session.id
    before = design_world.turns(session_id)
    assert _rounds_spoken(before) == {1}
    assert not [t for t in before if t.phase == "checkpoint"]
    assert json.loads((paused.folder / "metadata.json").read_text())["status"] == "paused"
    assert not (design_world.repo / "docs" / "decisions").exists()

    human = FakeHuman()
    resumed = await design_world.resume(session_id, SQLITE_QUESTION, human=human)

    assert resumed.status == "completed", resumed.error
    assert resumed.session.id == session_id and resumed.session.status == "completed"
    assert human.checkpoints == [1]
    model = design_world.last
    assert not model.of("analysis") and not model.of("positions"), "phase 1 is replayed, not asked again"
    assert not model.of("arguments", round_no=1) and not model.of("rebuttals", round_no=1)
    assert model.of("arguments", round_no=2)
    after = design_world.turns(session_id)
    _assert_unique_keys(after)
    assert [(t.id, t.key, t.content) for t in after[: len(before)]] == [(t.id, t.key, t.content) for t in before]
    assert _by_key(after)["r1/checkpoint/human/decision"].content == "continue"
    assert resumed.record is not None and resumed.record.stop_reason.startswith("consensus")
    assert "\n## Recommendation\n" in _adr(resumed)


async def test_guidance_at_a_checkpoint_reaches_the_later_prompts(design_world: DebateWorld) -> None:
    guidance = "Weigh the restore drill before anything else"
    result = await design_world.debate(SQLITE_QUESTION, human=FakeHuman([("guide", guidance)]))

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    assert _by_key(turns)["r1/checkpoint/human/decision"].content == f"guide: {guidance}"
    spoken = [t for t in turns if t.phase in ("arguments", "rebuttals", "moderation")]
    assert all(guidance not in t.prompt for t in spoken if t.round == 1)
    later = [t for t in spoken if t.round == 2]
    assert later and all(guidance in t.prompt for t in later)
    assert guidance in _by_key(turns)["r0/synthesis/moderator/synthesise"].prompt
    record = result.record
    assert record is not None and f"Human guidance: {guidance}" in record.context
    assert guidance in _adr(result)
    assert guidance in (result.folder / "round-1.md").read_text().split("## Human guidance")[1]


async def test_ending_at_a_checkpoint_stops_the_rounds_and_still_synthesises(design_world: DebateWorld) -> None:
    result = await design_world.debate(SQLITE_QUESTION, human=FakeHuman([("end", None)]))

    assert result.status == "completed", result.error
    turns = design_world.turns(result.session.id)
    assert _rounds_spoken(turns) == {1}
    assert _by_key(turns)["r1/checkpoint/human/decision"].content == "end"
    assert "r0/synthesis/moderator/synthesise" in _keys(turns)
    record = result.record
    assert record is not None
    assert record.stop_reason == "ended by the human at a checkpoint"
    assert record.rounds == 1 and record.escalation is None
    assert "- **Stop reason:** ended by the human at a checkpoint" in _adr(result)


# -- resuming ----------------------------------------------------------------------------------------------------


async def test_resuming_a_finished_debate_asks_nothing_and_keeps_its_one_record(design_world: DebateWorld) -> None:
    done = await design_world.debate(SQLITE_QUESTION)
    assert done.adr_path is not None
    before = design_world.turns(done.session.id)

    again = await design_world.resume(done.session.id, SQLITE_QUESTION)

    assert again.status == "completed", again.error
    assert not design_world.last.calls, "every turn is replayed from the store"
    assert design_world.turns(done.session.id) == before
    assert again.adr_path == done.adr_path
    assert [p.name for p in (design_world.repo / "docs" / "decisions").iterdir()] == [done.adr_path.name]
    assert again.record is not None and again.record.number == 1
    assert again.session.outcome["adr"] == str(done.adr_path)


async def test_resuming_with_a_changed_question_is_refused(design_world: DebateWorld) -> None:
    paused = await design_world.debate(SQLITE_QUESTION, human=FakeHuman(hang=True), checkpoints__timeout_s=0.2)
    assert paused.status == "paused"

    with pytest.raises(TaskError, match="changed since debate"):
        await design_world.resume(paused.session.id, SQLITE_QUESTION + " And for audit logs?")
    assert not design_world.last.calls


def _rising(agent: str, round_no: int, kind: str) -> int:
    """Satisfaction climbing 10 a round (55, 65, 75, 85): never the target of 90 within 4 rounds."""
    return 45 + 10 * round_no if round_no else 40


async def test_a_debate_still_gaining_at_its_planned_end_gets_more_rounds_up_to_the_maximum(
    design_world: DebateWorld,
) -> None:
    # Low complexity plans 2 rounds; the mean rises 10 a round, so each planned end is extended by one round.
    result = await design_world.debate(
        SQLITE_QUESTION, DebateScript(satisfaction=_rising), design__min_rounds=2, design__max_rounds=4
    )

    assert result.status == "completed", result.error
    record = result.record
    assert record is not None
    assert record.rounds == 4
    assert record.stop_reason.startswith("max rounds (4)")
    turns = design_world.turns(result.session.id)
    assert [_gate(turns, n).metadata["action"] for n in (1, 2, 3, 4)] == [
        "continue",
        "continue",
        "continue",
        "escalate",
    ]


async def test_a_debate_that_stops_gaining_at_its_planned_end_escalates_there(design_world: DebateWorld) -> None:
    result = await design_world.debate(
        SQLITE_QUESTION, DebateScript(satisfaction=60), design__min_rounds=2, design__max_rounds=5
    )

    record = result.record
    assert record is not None
    assert record.rounds == 2
    assert record.stop_reason.startswith("max rounds (2)")


async def test_a_round_reply_without_a_satisfaction_score_is_asked_again_once(design_world: DebateWorld) -> None:
    unscored = "Stance: SQLite.\nReasons:\n- one file\nChallenge: Contrarian: the write load is small.\nRisks:\n- locks"

    def fn(messages: list[Message], tags: dict[str, str]) -> str:
        nudged = "no 'Satisfaction:" in str(messages[-1]["content"])
        if tags.get("phase") == "arguments" and tags.get("agent") == "data-integrity" and tags.get("round") == "1":
            return unscored + ("\nSatisfaction: 80" if nudged else "")
        return base(messages, tags)

    base = debate_fn(DebateScript())
    result = await design_world.debate(SQLITE_QUESTION, transport=FunctionModel(fn))

    turns = design_world.turns(result.session.id)
    by_key = _by_key(turns)
    assert by_key["r1/arguments/data-integrity/argue:rejected"].status == "rejected"
    kept = by_key["r1/arguments/data-integrity/argue"]
    assert kept.metadata["rejected_retry"] is True and "Satisfaction: 80" in kept.content


async def test_session_files_go_next_to_the_sqlite_store_and_the_record_into_the_repository(
    design_world: DebateWorld, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "state" / "store.db"
    elsewhere.parent.mkdir()
    result = await design_world.debate(SQLITE_QUESTION, store_url=f"sqlite:///{elsewhere}")

    assert result.folder == tmp_path / "state" / ".debatecode" / "debates" / result.session.id
    assert (result.folder / "metadata.json").is_file()
    assert result.adr_path is not None and result.adr_path.parent == design_world.repo / "docs" / "decisions"


async def test_a_stance_that_only_restates_the_question_is_counted_for_no_option(design_world: DebateWorld) -> None:
    def stance(agent: str) -> str:
        if agent == "moonshot":
            return "Run a small team store session events in SQLite or PostgreSQL"  # the question, restated
        return "Use PostgreSQL" if agent == "contrarian" else "Use SQLite"

    result = await design_world.debate(SQLITE_QUESTION, DebateScript(stance=stance))

    record = result.record
    assert record is not None
    assert record.agreement[:2] == [
        "6 of 8 perspectives recommend SQLite: Data Integrity, Operational Simplicity, Observability, Operations, "
        "Testability, Security.",
        "1 of 8 perspectives recommend PostgreSQL: Contrarian.",
    ]
    moonshot = next(p for p in record.perspectives if p.name == "Moonshot")
    assert not any("Run a small team" in argument for argument in moonshot.key_arguments)
