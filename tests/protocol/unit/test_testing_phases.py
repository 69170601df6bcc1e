"""Adjudication, critique and the Red/Blue phase, each run alone on a hand-built state (no engine, git or sandbox)."""

from __future__ import annotations

import ast
import re

from tests.protocol.unit.replies import GOOD, HACK, fenced, nobody_is_asked
from tests.support.unit_runs import candidate, unit_config, unit_run

from debatecode.protocol.phases import AdjudicationPhase, AdversarialPhase, CritiquePhase
from debatecode.protocol.settings import AdjudicationSettings, AdversarialSettings, CritiqueSettings


def _asked_sum(messages: object) -> str:
    """The sum of the ``add(a, b)`` call an adjudication prompt asks about, as its ``ANSWER`` line."""
    text = str(messages[-1]["content"]) if isinstance(messages, list) else str(messages)
    call = re.findall(r"add\((-?\d+), (-?\d+)\)", text)[-1]
    return f"The task asks for the sum.\nANSWER: {int(call[0]) + int(call[1])}"


async def test_adjudication_turns_the_majority_answer_into_a_test_and_the_wrong_author_refines() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"].startswith("adjudicate-"):
            return _asked_sum(messages)
        assert tags["kind"] == "refine-adjudicated-1" and tags["agent"] == "agent-2", tags
        return fenced(GOOD, "Zero is not special: the sum is a + b.")

    run = unit_run(unit_config(agents=2), reply, only={"agent-1", "agent-2"})
    await candidate(run, "agent-1", GOOD)
    await candidate(run, "agent-2", HACK)
    assert run.state.candidates["agent-2"].all_visible_pass(), "the visible tests cannot tell them apart"

    summary = await AdjudicationPhase(AdjudicationSettings(max_questions=2, red_inputs=0)).execute(run, 0)

    adjudicated = run.state.adjudicated
    assert adjudicated and all(t.votes == t.answers == 2 for t in adjudicated), summary
    for test in adjudicated:
        a, b = ast.literal_eval(test.call.removeprefix("add"))
        assert b == 0 and test.expected == repr(a + b), "only inputs the candidates disagree on are asked"
    assert run.state.candidates["agent-2"].code == GOOD
    assert run.state.candidates["agent-2"].report.all_passed
    assert summary.endswith("; 1 refinements")


async def test_adjudication_when_passing_asks_nobody_while_every_candidate_fails_a_visible_test() -> None:
    run = unit_run(unit_config(agents=2), nobody_is_asked, only={"agent-1", "agent-2"})
    await candidate(run, "agent-1", "def add(a: int, b: int) -> int:\n    return a - b\n")
    await candidate(run, "agent-2", "def add(a: int, b: int) -> int:\n    return a * b\n")

    summary = await AdjudicationPhase(AdjudicationSettings(when="passing", red_inputs=0)).execute(run, 0)

    assert summary.startswith("skipped: no candidate passes every visible test") and not run.state.adjudicated
    assert len(run.journal) == 0, "not even the behaviour probe runs"


async def test_adjudication_is_silent_when_the_candidates_behave_alike() -> None:
    run = unit_run(unit_config(agents=2), nobody_is_asked, only={"agent-1", "agent-2"})
    await candidate(run, "agent-1", GOOD)
    await candidate(run, "agent-2", "def add(a: int, b: int) -> int:\n    return b + a\n")

    summary = await AdjudicationPhase(AdjudicationSettings(red_inputs=0)).execute(run, 0)

    assert summary.startswith("the leading candidates agree on all") and not run.state.adjudicated


async def test_critique_exchanges_tests_trusted_by_a_majority_and_the_attacked_author_revises() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"].startswith("attack-"):
            return "```text\nadd(5, 0)\nadd(-3, 3)\n```"
        assert tags["kind"] == "contrast", tags
        return fenced(GOOD, "The other code returns 5 for add(5, 0) because zero adds nothing.")

    run = unit_run(unit_config(agents=3, critique__when="always"), reply, only={"agent-1", "agent-2", "agent-3"})
    for agent_id, code in (("agent-1", GOOD), ("agent-2", HACK), ("agent-3", GOOD)):
        await candidate(run, agent_id, code)

    summary = await CritiquePhase(CritiqueSettings(when="always"), tolerate_failures=True).execute(run, 1)

    trusted = {(t.author, t.call, t.expected) for t in run.state.active_exchanged()}
    assert ("agent-1", "add(5, 0)", "5") in trusted, summary
    assert not any(t.author == "agent-2" and t.call == "add(5, 0)" for t in run.state.active_exchanged()), (
        "agent-2's own answer for add(5, 0) has no majority behind it"
    )
    assert run.state.candidates["agent-2"].code == GOOD, "the contrastive revision was adopted"
    assert run.state.candidates["agent-2"].report.passed_in("exchanged") == run.state.candidates[
        "agent-2"
    ].report.total_in("exchanged")


async def test_critique_when_tied_stays_silent_while_the_tests_separate_the_candidates() -> None:
    run = unit_run(unit_config(agents=2), nobody_is_asked, only={"agent-1", "agent-2"})
    await candidate(run, "agent-1", GOOD)
    await candidate(run, "agent-2", "def add(a: int, b: int) -> int:\n    return a - b\n")

    summary = await CritiquePhase(CritiqueSettings(when="tied")).execute(run, 1)

    assert summary.startswith("skipped:") and summary.endswith("(critique.when = tied)")
    assert not run.state.exchanged and len(run.journal) == 0


async def test_red_attacks_join_the_regression_suite_and_an_unanswered_failure_is_an_open_risk() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        assert tags["agent"] == "red" and tags["kind"] == "attack", tags
        if tags["round"] == "1":
            return (
                "```python\ndef test_small():\n    assert add(2, 3) == 5\n\n\n"
                "def test_sum_of_five():\n    assert add(5, 0) == 5\n```"
            )
        return "NONE"

    run = unit_run(unit_config(agents=1), reply, only={"agent-1", "red"})
    await candidate(run, "agent-1", HACK)

    summary = await AdversarialPhase(AdversarialSettings(max_rounds=3)).execute(run, 0)

    assert [t.name for t in run.state.red_tests] == ["test_red_1_1"], summary
    assert [(r.source, r.status, r.severity) for r in run.state.risks] == [("red", "open", "high")]
    assert "test_red_1_2" in run.state.risks[0].description
    assert summary.startswith("2 rounds, 1 failing attacks, 0 fixed, 1 in the regression suite")
