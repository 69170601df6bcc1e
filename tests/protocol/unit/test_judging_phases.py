"""Review, optimization, convergence (and its round check), the early stop and Reflexion, each alone on a
hand-built state (no engine, git or sandbox)."""

from __future__ import annotations

from tests.protocol.unit.replies import BAD, FAST, GOOD, HACK, fenced, nobody_is_asked
from tests.support.unit_runs import candidate, unit_config, unit_run

from debatecode.execution.generated import RedTest
from debatecode.protocol.early_stop import early_agreement
from debatecode.protocol.phases import (
    CodeRoundCheck,
    ConvergencePhase,
    OptimizationPhase,
    ReflexionPhase,
    ReviewPhase,
)
from debatecode.protocol.settings import ConvergenceSettings, OptimizationSettings, ReviewSettings
from debatecode.protocol.state import DebateState, ReviewItem

_REVIEW = (
    "Satisfaction: 95\nRationale: correct because it subtracts as documented, I checked it.\n"
    "Blocking concerns: none\nSuggested changes: none"
)


async def test_review_caps_the_score_of_a_candidate_that_fails_a_visible_test() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        assert tags["agent"] == "judge" and tags["kind"] == "review", tags
        return _REVIEW

    run = unit_run(unit_config(agents=1), reply, only={"agent-1", "judge"})
    await candidate(run, "agent-1", BAD)
    settings = ReviewSettings(reviewers=["judge"], when="always", revise=False, failing_cap=40)

    summary = await ReviewPhase(settings).execute(run, 1)

    assert run.state.reviews == [
        ReviewItem(
            round=1,
            reviewer="judge",
            role="judge",
            target="agent-1",
            satisfaction=40,
            scored=True,
            concerns=[],
            summary=run.state.reviews[0].summary,
        )
    ]
    (turn,) = run.journal.turns(phase="review")
    assert turn.metadata["reviewer_score"] == 95 and turn.confidence == 0.4
    assert summary == "reviewed agent-1: judge 40"


async def test_review_shows_earlier_rounds_to_the_reviewer() -> None:
    prompts: list[str] = []

    def reply(messages: object, tags: dict[str, str]) -> str:
        prompts.append(str(messages))
        return _REVIEW

    earlier = ReviewItem(
        round=1, reviewer="judge", role="judge", target="agent-1", satisfaction=70, scored=True,
        concerns=["the docstring is missing"], summary="works, undocumented",
    )  # fmt: skip
    run = unit_run(unit_config(agents=1), reply, state=DebateState(reviews=[earlier]), only={"agent-1", "judge"})
    await candidate(run, "agent-1", GOOD)

    await ReviewPhase(ReviewSettings(reviewers=["judge"], when="always", revise=False)).execute(run, 2)

    assert "the docstring is missing" in prompts[0]
    assert [r.round for r in run.state.reviews] == [1, 2] and run.state.reviews[1].satisfaction == 95


async def test_optimization_keeps_a_change_that_regresses_nothing_and_discards_one_that_does() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["agent"] == "performance_analyzer":
            return fenced(HACK, "Skipping the addition for zero is faster.")
        return fenced(FAST, "Operands in the documented order read better.")

    run = unit_run(unit_config(agents=1), reply, only={"agent-1", "performance_analyzer", "refactorer"})
    await candidate(run, "agent-1", GOOD)

    summary = await OptimizationPhase(OptimizationSettings()).execute(run, 0)

    assert run.state.candidates["agent-1"].code == FAST, summary
    assert "refactorer: kept" in summary
    assert "performance_analyzer: kept" in summary, "HACK passes every test GOOD passed (none is about zero)"

    strict = unit_run(unit_config(agents=1), reply, only={"agent-1", "performance_analyzer"})
    await candidate(strict, "agent-1", GOOD)
    strict.state.red_tests.append(RedTest("test_red_zero", "def test_red_zero():\n    assert add(4, 0) == 4\n", 1))
    await strict.refresh()

    summary = await OptimizationPhase(OptimizationSettings(roles=["performance_analyzer"])).execute(strict, 0)

    assert summary == "performance_analyzer: discarded, a test regressed"
    assert strict.state.candidates["agent-1"].code == GOOD
    assert [c.code for c in strict.state.alternatives] == [HACK]


async def test_convergence_picks_the_candidate_passing_most_tests_without_asking_anyone() -> None:
    run = unit_run(unit_config(agents=2), nobody_is_asked, only={"agent-1", "agent-2"})
    await candidate(run, "agent-1", BAD)
    await candidate(run, "agent-2", GOOD)

    summary = await ConvergencePhase(ConvergenceSettings()).execute(run, 0)

    outcome = run.state.outcome
    assert (outcome.winner, outcome.method) == ("agent-2", "most_tests"), summary
    assert [r.agent for r in outcome.ranking] == ["agent-2", "agent-1"]


async def test_convergence_majority_counts_identical_codes_among_the_tied() -> None:
    run = unit_run(unit_config(agents=3), nobody_is_asked, only={"agent-1", "agent-2", "agent-3"})
    await candidate(run, "agent-1", FAST)
    await candidate(run, "agent-2", GOOD)
    await candidate(run, "agent-3", GOOD)

    await ConvergencePhase(ConvergenceSettings(ranking="vote", voting="majority", vote_threshold=0.6)).execute(run, 0)

    outcome = run.state.outcome
    assert (outcome.winner, outcome.method) == ("agent-2", "majority")
    assert outcome.vote is not None and outcome.vote.share == round(2 / 3, 3) and outcome.vote.threshold_reached


async def test_the_round_check_stops_on_a_passing_leader_or_on_no_progress() -> None:
    run = unit_run(unit_config(agents=1), lambda messages: "unused", only={"agent-1"})
    check = CodeRoundCheck(ConvergenceSettings(patience=1), satisfaction_target=None, rounds=5, vote=False)
    await candidate(run, "agent-1", BAD)

    history: list[object] = []
    assert await check(run, 1, history) is None
    assert await check(run, 2, history) == "no improvement for 1 rounds"

    await candidate(run, "agent-1", GOOD)
    assert await check(run, 3, history) == "converged: the leader passes every visible and exchanged test"

    reviewed = CodeRoundCheck(ConvergenceSettings(), satisfaction_target=90, rounds=5, vote=False)
    run.state.reviews.append(
        ReviewItem(round=4, reviewer="judge", role="judge", target="agent-1", satisfaction=80, scored=True,
                   concerns=[], summary="")
    )  # fmt: skip
    assert await reviewed(run, 4, []) is None, "a reviewer below target keeps the loop going"


async def test_the_early_stop_needs_a_passing_quorum_that_agrees_on_every_probe() -> None:
    run = unit_run(unit_config(agents=2), lambda messages: "unused", only={"agent-1", "agent-2"})
    settings = ConvergenceSettings(early_stop=True, agreement_probes=12)
    await candidate(run, "agent-1", GOOD)
    await candidate(run, "agent-2", FAST)

    reason = await early_agreement(run, settings)

    assert reason is not None and reason.startswith("early stop: 2 of 2 authors' candidates (agent-1, agent-2)")
    assert await early_agreement(run, ConvergenceSettings(early_stop=False)) is None

    apart = unit_run(unit_config(agents=2), lambda messages: "unused", only={"agent-1", "agent-2"})
    await candidate(apart, "agent-1", GOOD)
    await candidate(apart, "agent-2", HACK)
    assert await early_agreement(apart, settings) is None
    (turn,) = apart.journal.turns(phase="early_stop")
    assert turn.metadata["agree"] is False and turn.metadata["disagreements"]


async def test_reflexion_reflects_on_a_failing_candidate_and_retries_until_it_passes() -> None:
    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"].startswith("reflect-"):
            return (
                "Root cause: subtraction instead of addition.\nWhat went wrong: add(1, 2) gave -1.\n"
                "What to change: add the operands.\nLesson: read the operator twice.\nConfidence: 0.9"
            )
        return fenced(GOOD, "Adding as the reflection says.")

    run = unit_run(unit_config(agents=2), reply, only={"agent-1", "agent-2"}, reflexion=True)
    await candidate(run, "agent-1", GOOD)
    await candidate(run, "agent-2", BAD)

    summary = await ReflexionPhase().execute(run, 1)

    assert summary == "1 failing candidates reflected (1 reflections so far), 1 improved"
    assert run.state.candidates["agent-2"].code == GOOD
    (reflection,) = run.state.reflections["agent-2"]
    assert reflection.root_cause == "subtraction instead of addition." and reflection.confidence == 0.9
    assert [t.metadata["kind"] for t in run.journal.turns()] == ["reflect-1", "retry-1"]
