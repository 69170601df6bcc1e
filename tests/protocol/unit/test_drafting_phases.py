"""Proposal, self-evolvement and dehallucination, each run alone on a hand-built state (no engine, git or sandbox)."""

from __future__ import annotations

from tests.protocol.unit.replies import BAD, GOOD, fenced
from tests.support.unit_runs import candidate, unit_config, unit_run

from debatecode.protocol.phases import DehallucinationPhase, ProposalPhase, SelfEvolvementPhase
from debatecode.protocol.settings import DehallucinationSettings, SelfEvolvementSettings
from debatecode.protocol.state import DebateState


async def test_proposal_drafts_a_candidate_per_author_and_keeps_the_contrarians_objection() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "draft":
            return fenced(BAD if tags["agent"] == "agent-2" else GOOD)
        assert tags["kind"] == "object", tags
        return "Objection: subtraction would be wrong for every non-zero b, because the task asks for a sum."

    run = unit_run(unit_config(agents=2), reply, only={"agent-1", "agent-2", "contrarian"})

    summary = await ProposalPhase().execute(run, 0)

    candidates = run.state.candidates
    assert set(candidates) == {"agent-1", "agent-2"}, summary
    assert candidates["agent-1"].all_visible_pass() and not candidates["agent-2"].all_visible_pass()
    assert [d.agent for d in run.state.dissents] == ["contrarian"]
    assert "subtraction would be wrong" in run.state.dissents[0].text
    assert len(run.state.versions) == 2 and run.state.next_version == 3, "each draft is a committed version"
    assert [t.metadata["kind"] for t in run.journal.turns()].count("draft") == 2
    assert summary.endswith("1 pass every visible test")


async def test_self_evolvement_refines_a_failing_draft_from_its_failures_and_leaves_a_passing_one() -> None:
    asked: list[str] = []

    def reply(messages: object, tags: dict[str, str]) -> str:
        asked.append(f"{tags['agent']}:{tags['kind']}")
        if tags["kind"] == "draft":
            return fenced(BAD if tags["agent"] == "agent-2" else GOOD)
        return fenced(GOOD, "The failing example add(1, 2) shows the sign was wrong.")

    run = unit_run(unit_config(agents=2), reply, only={"agent-1", "agent-2"})

    summary = await SelfEvolvementPhase(SelfEvolvementSettings(max_iterations=2)).execute(run, 0)

    assert sorted(asked) == ["agent-1:draft", "agent-2:draft", "agent-2:refine-1"], "a passing draft is not refined"
    assert run.state.candidates["agent-2"].code == GOOD
    assert [c.code for c in run.state.history["agent-2"]] == [BAD, GOOD]
    assert summary == "2 drafts, 1 refinements; 2 pass every visible test"


async def test_self_evolvement_stops_at_its_iteration_limit_when_no_refinement_passes() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        return fenced(BAD, "Still subtracting.")

    run = unit_run(unit_config(agents=1), reply, only={"agent-1"})

    await SelfEvolvementPhase(SelfEvolvementSettings(max_iterations=3)).execute(run, 0)

    kinds = [t.metadata["kind"] for t in run.journal.turns()]
    assert kinds == ["draft", "refine-1", "refine-2", "refine-3"]
    assert not run.state.candidates["agent-1"].all_visible_pass()


async def test_fresh_drafts_replace_failing_candidates_until_one_passes_then_stop() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        # The first fresh draft of agent-2 is right; everything else keeps the sign wrong.
        return fenced(GOOD if (tags["agent"], tags["kind"]) == ("agent-2", "redraw-1") else BAD)

    run = unit_run(unit_config(agents=2), reply, only={"agent-1", "agent-2"})

    summary = await SelfEvolvementPhase(SelfEvolvementSettings(max_iterations=1, redraws=3)).execute(run, 0)

    turns = run.journal.turns()
    assert sorted(f"{t.agent_id}:{t.metadata['kind']}" for t in turns) == [
        "agent-1:draft", "agent-1:redraw-1", "agent-1:refine-1",
        "agent-2:draft", "agent-2:redraw-1", "agent-2:refine-1",
    ], "one round of fresh drafts: it found a passing candidate, so no second round"  # fmt: skip
    assert run.state.candidates["agent-2"].code == GOOD and run.state.candidates["agent-2"].all_visible_pass()
    drafts = {t.agent_id: t for t in turns if t.metadata["kind"] == "draft"}
    for fresh in (t for t in turns if t.metadata["kind"] == "redraw-1"):
        assert fresh.metadata["temperature"] > 0, "sampled, not greedy"
        assert fresh.metadata["seed"] != drafts[fresh.agent_id].metadata["seed"], "another seed than the draft"
    assert summary == "2 drafts, 2 refinements, 2 fresh drafts; 1 pass every visible test"


async def test_no_fresh_drafts_by_default_or_when_a_draft_already_passes() -> None:
    asked: list[str] = []

    def reply(messages: object, tags: dict[str, str]) -> str:
        asked.append(tags["kind"])
        return fenced(GOOD if tags["agent"] == "agent-1" else BAD)

    run = unit_run(unit_config(agents=2), reply, only={"agent-1", "agent-2"})
    await SelfEvolvementPhase(SelfEvolvementSettings(max_iterations=0, redraws=2)).execute(run, 0)
    assert "redraw-1" not in asked, "agent-1's draft passes: nothing is drawn again"

    asked.clear()
    failing = unit_run(unit_config(agents=2), lambda messages, tags: fenced(BAD), only={"agent-1", "agent-2"})
    await SelfEvolvementPhase(SelfEvolvementSettings(max_iterations=0)).execute(failing, 0)
    assert [t.metadata["kind"] for t in failing.journal.turns()] == ["draft", "draft"], "redraws is 0 by default"


async def test_dehallucination_skips_a_simple_task_and_asks_otherwise() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "ask-1":
            return "[edge_cases] What should happen for negative numbers?"
        if tags["kind"].startswith("ask-"):
            return "NONE"
        return "1. Negative numbers are added like any other.\nConfidence: 0.95"

    config = unit_config(agents=1)
    skipped = unit_run(config, reply, only={"agent-1", "moderator"})
    assert await DehallucinationPhase(DehallucinationSettings()).execute(skipped, 0) == "skipped: simple task"
    assert len(skipped.journal) == 0

    state = DebateState(clarifications=[{"question": "Are inputs ints?", "answer": "yes", "category": "constraints"}])
    run = unit_run(config, reply, state=state, only={"agent-1", "moderator"})

    summary = await DehallucinationPhase(DehallucinationSettings(skip_simple=False)).execute(run, 0)

    assert summary == "1 questions answered, confidence 0.95"
    assert [c["question"] for c in run.state.clarifications] == [
        "Are inputs ints?",
        "What should happen for negative numbers?",
    ]
    assert run.state.clarifications[1]["answer"] == "Negative numbers are added like any other."


async def test_a_hand_built_candidate_is_tested_in_process() -> None:
    run = unit_run(unit_config(agents=1), lambda messages: "unused")
    good = await candidate(run, "agent-1", GOOD)
    bad = await candidate(run, "agent-2", BAD)
    assert good.report.all_passed and good.report.total == len(run.task.test_names)
    assert bad.report.passed < bad.report.total
