"""The early stop (candidates that pass and agree skip the debate) and reviews grounded in execution."""

from __future__ import annotations

from collections import Counter

from tests.protocol.conftest import ADD_TASK, BAD, Harness
from tests.support.debaters import add_debater

from debatecode.execution.inputs import generated_inputs
from debatecode.execution.results import TestCaseResult, TestReport
from debatecode.protocol.early_stop import agreement_probes, quorum
from debatecode.protocol.events import PhaseStarted
from debatecode.protocol.phases.review import grounded_satisfaction
from debatecode.protocol.state import Candidate
from debatecode.task import load_task

_DEBATE = {"phases.optimization": True, "phases.adversarial": True, "participants.moonshot": False}


def test_probes_are_the_generated_inputs_visible_calls_first() -> None:
    task = load_task(ADD_TASK)
    probes = agreement_probes(task, limit=40)

    assert probes[0] == "add(1, 2)", "the task's own example calls come first"
    assert {"add(-4, 4)", "add(0, 2)", "add(1, 0)"} <= set(probes), "visible calls and their nudges"
    assert len(probes) == len(set(probes)) > 12, "hypothesis draws add inputs beyond the nudges"
    assert probes == generated_inputs(task, limit=40, seed=0)
    assert len(agreement_probes(task, limit=5)) == 5


def test_quorum_is_a_strict_majority() -> None:
    assert [quorum(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]


async def test_agreeing_passing_drafts_skip_the_debate(harness: Harness) -> None:
    model = harness.scripted("agreeing", [], fn=add_debater())
    config = harness.config(model, rounds=2, **{"convergence.early_stop": True, **_DEBATE})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))

    assert result.status == "completed" and result.all_passed
    phases = [e.phase for e in harness.of(PhaseStarted)]
    assert "critique" not in phases and "review" not in phases and "optimization" not in phases
    assert "adversarial" not in phases and phases[-1] == "convergence"
    assert result.session.outcome["stop_reason"].startswith("early stop: 3 of 3")
    turns = store.turns(result.session.id)
    kinds = Counter(t.metadata["kind"] for t in turns)
    assert kinds["draft"] == 3 and not any(k.startswith("refine") for k in kinds)
    probe = next(t for t in turns if t.phase == "early_stop")
    assert probe.metadata["agree"] is True and probe.metadata["disagreements"] == []
    assert {row["agent"] for row in probe.tool_calls} == {"agent-1", "agent-2", "agent-3"}


async def test_the_early_stop_saves_tokens_against_the_full_debate(harness: Harness) -> None:
    totals = {}
    for early in (True, False):
        model = harness.scripted(f"saving-{early}", [], fn=add_debater())
        config = harness.config(model, rounds=2, **{"convergence.early_stop": early, **_DEBATE})
        engine, store = harness.engine(config)
        result = await engine.solve(load_task(ADD_TASK))
        assert result.all_passed
        totals[early] = sum(t.prompt_tokens + t.completion_tokens for t in store.turns(result.session.id))
    assert totals[True] < totals[False] / 2


async def test_candidates_that_pass_but_disagree_go_on_to_the_debate(harness: Harness) -> None:
    # agent-2 special-cases b == 0: it passes every visible test but disagrees on generated calls with b == 0.
    model = harness.scripted("disagreeing", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(model, rounds=1, **{"convergence.early_stop": True, **_DEBATE})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))

    assert "critique" in [e.phase for e in harness.of(PhaseStarted)]
    probe = next(t for t in store.turns(result.session.id) if t.phase == "early_stop")
    disagreements = probe.metadata["disagreements"]
    assert probe.metadata["agree"] is False and disagreements
    assert all(call.endswith(", 0)") for call in disagreements), disagreements
    assert not result.session.outcome["stop_reason"].startswith("early stop")
    assert result.all_passed, "the debate then catches the hack"


def _candidate(code: str | None, *outcomes: str) -> Candidate:
    cases = [TestCaseResult(name=f"test_{i}", outcome=o, suite="visible") for i, o in enumerate(outcomes)]  # type: ignore[arg-type]
    return Candidate(agent_id="agent-1", code=code, report=TestReport(cases=cases))


def test_a_failing_candidate_cannot_score_above_the_cap() -> None:
    failing = _candidate("def add(a, b):\n    return a - b\n", "passed", "failed")
    assert grounded_satisfaction(95, failing, cap=50) == 50
    assert grounded_satisfaction(30, failing, cap=50) == 30
    assert grounded_satisfaction(90, _candidate(None), cap=40) == 40
    assert grounded_satisfaction(95, _candidate("def add(a, b):\n    return a + b\n", "passed", "passed"), cap=50) == 95


async def test_reviewers_of_failing_code_are_capped_and_their_own_score_kept(harness: Harness) -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags.get("kind") == "review":
            return "Satisfaction: 95\nRationale: looks right because it is short.\nBlocking concerns: none"
        if tags.get("kind") == "vote":
            return "Ranking: 1\nVote: Candidate 1"
        return "Subtraction it is.\n" + BAD

    model = harness.scripted("overconfident", [], fn=reply)
    config = harness.config(
        model, rounds=1, agents=1, **{"phases.critique": False, "review.revise": False, "review.reviewers": ["judge"]}
    )
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))

    review = next(t for t in store.turns(result.session.id) if t.phase == "review")
    assert review.metadata["review"]["satisfaction"] == 50
    assert review.metadata["reviewer_score"] == 95
    assert not result.all_passed
