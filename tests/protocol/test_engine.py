"""The engine end to end on scripted models, the dummy sandbox, a real store and real git."""

from __future__ import annotations

import subprocess
from collections import Counter

from tests.protocol.conftest import (
    ADD_REPLIES,
    ADD_TASK,
    BAD,
    EVERY_PHASE_IN_ORDER,
    GOOD,
    PARTIAL,
    WORSE,
    Harness,
    reply,
)

from debatecode.protocol.events import PhaseStarted, RoundCompleted, SessionStarted, TurnCompleted, VoteCast
from debatecode.task import load_task


def _git_subjects(out: object, session_id: str) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(out), "log", "--format=%s", f"debate/{session_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()


async def test_full_protocol_with_the_shipped_replies(harness: Harness) -> None:
    # The voting path: candidates tied on tests go to the agents' vote (the default ranks them by behaviour).
    config = harness.config(f"scripted:{ADD_REPLIES}", convergence__ranking="vote")
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))

    assert result.status == "completed", result.error
    assert [e.phase for e in harness.of(PhaseStarted)] == EVERY_PHASE_IN_ORDER
    assert result.all_passed
    outcome = result.session.outcome
    assert outcome["winner"] == "agent-1" and outcome["method"] == "vote"
    assert outcome["vote"]["method"] == "borda", "six voters pick Borda"
    assert outcome["explanation"].startswith("The function returns a + b")

    turns = store.turns(result.session.id)
    kinds = Counter(t.metadata["kind"] for t in turns)
    assert kinds["draft"] == 3 and kinds["refine-1"] == 2 and kinds["contrast"] == 1 and kinds["vote"] == 6
    assert [t.seq for t in turns] == list(range(1, len(turns) + 1))
    assert all(t.test_results is not None for t in turns if t.code is not None)

    # The exchanged test from agent-1 exposed agent-2's b == 0 hack, which visible tests missed.
    contrast = next(t for t in turns if t.metadata["kind"] == "contrast")
    assert contrast.agent_id == "agent-2" and contrast.metadata["against"] == "agent-1"
    assert any(row["call"] == "add(5, 0)" for row in contrast.metadata["disagreements"])
    attack = next(t for t in turns if t.metadata["kind"] == "attack-agent-2")
    assert {c["call"] for c in attack.tool_calls} == {"add(5, 0)", "add(0, 0)", "add(-7, 0)"}
    suites = Counter(case["suite"] for case in contrast.test_results["cases"])
    assert suites["exchanged"] == 6 and suites["visible"] == 4

    report = result.report_path.read_text()
    for section in (
        "## Final code",
        "## Chosen approach",
        "## Rejected alternatives",
        "## Dissents",
        "## Risk register",
        "## Confidence",
    ):
        assert section in report
    assert "**contrarian**" in report and "ruled invalid by Blue" in report
    assert "test_red_1_1" in report, "accepted Red attacks join the regression suite"

    subjects = _git_subjects(config.out, result.session.id)
    assert subjects[0].startswith("report:") and subjects[1].startswith("final: agent-1")
    versions = store.versions(result.session.id)
    assert len({v.version_number for v in versions}) == len(versions) >= 8
    assert any(isinstance(e, VoteCast) for e in harness.events)


async def test_candidates_tied_on_tests_are_ranked_by_behaviour_on_generated_inputs_without_a_vote(
    harness: Harness,
) -> None:
    config = harness.config(f"scripted:{ADD_REPLIES}")
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))

    assert result.status == "completed" and result.all_passed, result.error
    outcome = result.session.outcome
    assert outcome["method"] == "behaviour" and "generated inputs" in outcome["reason"], outcome
    turns = store.turns(result.session.id)
    kinds = Counter(t.metadata["kind"] for t in turns)
    assert kinds["vote"] == 0 and kinds["behaviour-1"] == 1
    probe = next(t for t in turns if t.metadata["kind"] == "behaviour-1")
    assert probe.phase == "convergence" and len(probe.metadata["inputs"]) > 0
    assert all(call.startswith("add(") for call in probe.metadata["inputs"])
    # Every distinct tied code ran on every input; the winner is one of the tied candidates.
    codes = {row["code"] for row in probe.tool_calls}
    assert len(probe.tool_calls) == len(codes) * len(probe.metadata["inputs"])
    assert outcome["winner"] in {row["agent"] for row in outcome["ranking"]}


async def test_skeleton_most_tests_wins_without_a_vote(harness: Harness) -> None:
    model = harness.scripted(
        "most",
        [
            reply(GOOD, agent="agent-1"),
            reply(BAD, agent="agent-2"),
            reply(BAD, kind="refine-1"),
            reply(BAD, kind="refine-2"),
        ],
    )
    engine, store = harness.engine(harness.config(model, skeleton=True, agents=2))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.session.outcome["winner"] == "agent-1"
    assert result.session.outcome["method"] == "most_tests"
    assert not any(t.metadata["kind"] == "vote" for t in store.turns(result.session.id))


async def test_a_refinement_that_passes_fewer_tests_is_not_adopted(harness: Harness) -> None:
    model = harness.scripted("regress", [reply(PARTIAL, kind="draft"), reply(WORSE, kind="refine-1")])
    engine, store = harness.engine(
        harness.config(model, skeleton=True, agents=1, **{"self_evolvement.max_iterations": 1})
    )
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    assert result.passed == 3, "the 3/4 draft is kept over the 0/4 refinement"
    assert "a > 0" in (result.code or "")
    assert [v.tests_passed for v in store.versions(result.session.id)] == [3, 0]


async def test_agents_with_no_code_end_with_no_solution(harness: Harness) -> None:
    model = harness.scripted("silent", [], default="I would rather discuss the requirements first.")
    config = harness.config(model, skeleton=True, agents=2, **{"self_evolvement.max_iterations": 1})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    assert result.code is None and result.solution_path is None
    assert not (config.out / "solution.py").exists()
    turns = [t for t in store.turns(result.session.id) if t.provider != "tool"]
    assert len(turns) == 4 and {t.status for t in turns} == {"no_code"}
    assert "No candidate produced code" in result.report_path.read_text()
    assert store.versions(result.session.id) == []


async def test_unreachable_model_fails_the_session_and_keeps_its_turns(harness: Harness) -> None:
    # Both drafts tie at 3/4 with different code, so the agents vote; agent-1's vote finds the server gone.
    partial_documented = PARTIAL.replace("-> int:\n", '-> int:\n    """Almost."""\n')
    model = harness.scripted(
        "flaky",
        [
            reply(PARTIAL, kind="draft", agent="agent-1"),
            reply(partial_documented, kind="draft", agent="agent-2"),
            reply("", kind="vote", agent="agent-1", raise_error="unreachable"),
        ],
        default="Vote: Candidate 1",
    )
    config = harness.config(
        model, skeleton=True, agents=2, convergence__ranking="vote", **{"self_evolvement.max_iterations": 0}
    )
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "failed"
    assert "ModelUnreachable" in (result.error or "")
    stored = store.get_session(result.session.id)
    assert stored.status == "failed" and "ModelUnreachable" in (stored.error or "")
    drafts = [t for t in store.turns(result.session.id) if t.metadata["kind"] == "draft"]
    assert len(drafts) == 2, "turns completed before the failure are kept"
    assert result.solution_path is not None and "a > 0" in result.solution_path.read_text(), "best code so far is saved"
    assert "What went wrong" in result.report_path.read_text()


async def test_budget_exhaustion_stops_cleanly_with_partial_results(harness: Harness) -> None:
    model = harness.scripted("spendy", [reply(BAD, kind="draft")], default=GOOD)
    config = harness.config(model, skeleton=True, agents=1, token_budget=60)
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "budget_exceeded"
    assert "token budget" in (result.error or "")
    stored = store.get_session(result.session.id)
    assert stored.status == "budget_exceeded"
    assert stored.prompt_tokens + stored.completion_tokens >= 1
    assert result.solution_path is not None and result.solution_path.exists()


async def test_resume_replays_stored_turns_without_asking_again(harness: Harness) -> None:
    task = load_task(ADD_TASK)
    partial_documented = PARTIAL.replace("-> int:\n", '-> int:\n    """Almost."""\n')
    # One call at a time: agent-1's vote fails first, so agent-2 never gets to vote before the crash.
    first = harness.scripted(
        "crashy",
        [
            reply(PARTIAL, agent="agent-1", kind="draft"),
            reply(partial_documented, agent="agent-2", kind="draft"),
            reply("", agent="agent-1", kind="vote", raise_error="unreachable"),
        ],
    )
    config = harness.config(
        first,
        skeleton=True,
        agents=2,
        max_concurrency=1,
        convergence__ranking="vote",
        **{"self_evolvement.max_iterations": 0},
    )
    engine, store = harness.engine(config)
    failed = await engine.solve(task)
    assert failed.status == "failed"
    stored_before = store.turns(failed.session.id)
    assert [t.metadata["kind"] for t in stored_before if t.provider != "tool"] == ["draft", "draft"]

    calls: list[dict[str, str]] = []

    def answer(messages: object, tags: dict[str, str]) -> str:
        calls.append(tags)
        return "The first is right because both pass the same tests and it is shorter.\nVote: Candidate 1"

    second = harness.scripted("recovered", [], fn=answer)
    engine2, store2 = harness.engine(config.model_copy(update={"model": second}))
    harness.events.clear()
    resumed = await engine2.resume(failed.session.id, task)

    assert resumed.status == "completed"
    assert sorted(c["kind"] for c in calls) == ["vote", "vote"], "only the missing turns are asked"
    # The resume gave another model: that is journaled as a settings note (issue 33), not a model turn.
    [note] = [t for t in store2.turns(failed.session.id) if t.phase == "resume"]
    assert note.content == f"resumed with: model {first} → {second}"
    turns = [t for t in store2.turns(failed.session.id) if t.provider != "tool" and t.phase != "resume"]
    assert len(turns) == 4 and len({t.key for t in turns}) == 4
    assert [t.id for t in turns[:2]] == [t.id for t in stored_before if t.provider != "tool"]
    started = next(e for e in harness.events if isinstance(e, SessionStarted))
    assert started.resumed and started.reused_turns == len(stored_before)
    new_turns = [
        e
        for e in harness.events
        if isinstance(e, TurnCompleted) and not e.reused and e.turn.provider != "tool" and e.turn.phase != "resume"
    ]
    assert len(new_turns) == 2
    assert len(store2.versions(failed.session.id)) == 2, "versions are not committed twice"


async def test_rounds_stop_when_converged(harness: Harness) -> None:
    from tests.support.debaters import add_debater

    model = harness.scripted("converging", [], fn=add_debater())
    engine, _ = harness.engine(
        harness.config(model, rounds=4, **{"phases.optimization": False, "phases.adversarial": False})
    )
    result = await engine.solve(load_task(ADD_TASK))
    rounds = harness.of(RoundCompleted)
    assert len(rounds) == 1 and rounds[0].stop_reason and rounds[0].stop_reason.startswith("converged")
    assert result.session.total_rounds == 1


async def test_a_vote_at_its_threshold_ends_the_loop_early(harness: Harness) -> None:
    from tests.support.debaters import add_debater

    model = harness.scripted("voting-loop", [], fn=add_debater(satisfaction=60))
    config = harness.config(
        model,
        agents=3,
        rounds=4,
        **{
            "phases.optimization": False,
            "phases.adversarial": False,
            "review.reviewers": ["judge"],
            "convergence.patience": 9,
        },
    )
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    rounds = harness.of(RoundCompleted)
    assert len(rounds) == 1 and (rounds[0].stop_reason or "").startswith("converged: the vote reached its threshold")
    round_votes = [t for t in store.turns(result.session.id) if t.metadata["kind"] == "vote" and t.round == 1]
    assert round_votes, "the agents voted at the end of round 1"


async def test_round_token_budget_makes_an_agent_sit_out(harness: Harness) -> None:
    model = harness.scripted("allowance", [], default="Subtracting is close enough, I think, for now.\n" + BAD)
    config = harness.config(model, skeleton=True, agents=1, **{"llm.round_token_budget": 20})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    turns = {t.metadata["kind"]: t for t in store.turns(result.session.id) if t.phase == "self_evolvement"}
    assert turns["draft"].completion_tokens > 20, "the draft spends the agent's allowance for the phase"
    assert turns["refine-1"].metadata.get("sat_out") == "round token budget spent"
    assert turns["refine-1"].completion_tokens == 0 and turns["refine-1"].status == "no_code"
    assert len(engine.llm.calls) == 1, "the model is not called for a turn the agent sits out"
