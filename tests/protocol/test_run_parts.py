"""The debate run's parts on their own: a phase over hand-built state and deps, the journal, one engine for two sessions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.protocol.conftest import ADD_TASK, Harness
from tests.support.debaters import add_debater
from tests.support.runs import hand_built_run

from debatecode.llm.client import LLMClient
from debatecode.protocol.events import EventBus, TurnCompleted
from debatecode.protocol.journal import Journal, turn_key
from debatecode.protocol.phases import ConvergencePhase, ProposalPhase, round_vote
from debatecode.protocol.state import Dissent
from debatecode.task import load_task


async def test_a_phase_runs_on_hand_built_state_and_deps(harness: Harness, tmp_path: Path) -> None:
    model = harness.scripted("unit-proposal", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(model, agents=3, **{"participants.contrarian": False})
    run = hand_built_run(config, harness.sandbox, ADD_TASK, tmp_path)

    summary = await ProposalPhase().execute(run, 0)

    assert set(run.state.candidates) >= {"agent-1", "agent-2", "agent-3"}, summary
    assert run.state.candidates["agent-2"].report.passed == run.state.candidates["agent-1"].report.passed
    assert [t.seq for t in run.journal.turns()] == list(range(1, len(run.journal) + 1))
    assert run.deps.budget.used == sum(t.prompt_tokens + t.completion_tokens for t in run.journal.turns())


async def test_a_vote_between_rounds_leaves_the_outcome_and_dissents_alone(harness: Harness, tmp_path: Path) -> None:
    model = harness.scripted("unit-vote", [], fn=add_debater())
    config = harness.config(
        model, agents=3, rounds=3, convergence__ranking="vote", **{"participants.contrarian": False}
    )
    run = hand_built_run(config, harness.sandbox, ADD_TASK, tmp_path)
    await ProposalPhase().execute(run, 0)
    run.state.dissents.append(Dissent(role="contrarian", agent="x", phase="proposal", text="keep me"))
    before = (run.state.outcome.model_copy(), list(run.state.dissents))

    reason = await round_vote(run, 1, config.convergence, rounds=config.rounds)

    assert reason is not None and reason.startswith("converged: the vote reached its threshold")
    assert (run.state.outcome, run.state.dissents) == before
    assert [t.metadata["kind"] for t in run.journal.turns(phase="convergence")].count("vote") >= 2

    await ConvergencePhase(config.convergence).execute(run, 0)
    record = run.state.outcome.to_record()
    assert record["method"] in ("vote", "most_tests") and record["winner"] in run.state.candidates
    assert "stop_reason" not in record, "only the fields a session set are stored"


async def test_the_journal_replays_a_stored_turn_instead_of_producing_it(harness: Harness, tmp_path: Path) -> None:
    events: list[object] = []
    bus = EventBus()
    bus.subscribe(events.append)
    journal = Journal("s1", bus)
    calls = 0

    async def produce() -> object:
        nonlocal calls
        calls += 1
        return journal.new_turn(
            key=turn_key(0, "gate", "human", "review"), agent_id="human", role="human", kind="review"
        )

    first = await journal.record(await journal.replay_or_do(turn_key(0, "gate", "human", "review"), produce))  # type: ignore[arg-type]
    again = await journal.replay_or_do(turn_key(0, "gate", "human", "review"), produce)  # type: ignore[arg-type]
    assert calls == 1 and again is first and journal.replayed == 1
    assert (first.seq, first.round, first.phase, first.metadata) == (1, 0, "gate", {"kind": "review"})
    await journal.record(again)
    assert [e.reused for e in events if isinstance(e, TurnCompleted)] == [False, True]


async def test_two_sessions_run_at_once_on_one_engine(harness: Harness) -> None:
    model = harness.scripted("two-at-once", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(model, agents=2, rounds=1, token_budget=60_000)
    engine, store = harness.engine(config)

    first, second = await asyncio.gather(engine.solve(load_task(ADD_TASK)), engine.solve(load_task(ADD_TASK)))

    assert first.session.id != second.session.id
    for result in (first, second):
        assert result.status == "completed", result.error
        assert result.all_passed
        turns = store.turns(result.session.id)
        assert [t.seq for t in turns] == list(range(1, len(turns) + 1)), "each session numbers its own turns"
        assert len({t.key for t in turns}) == len(turns)
        assert result.session.prompt_tokens == sum(t.prompt_tokens for t in turns), "tokens are counted per session"
    assert engine.llm.usage.prompt_tokens == first.session.prompt_tokens + second.session.prompt_tokens
    assert engine.memory is None and engine.wisdom is None, "the engine keeps no session's memory handles"


async def test_a_caller_bus_shared_by_two_engines_records_each_turn_once(harness: Harness) -> None:
    model = harness.scripted("shared-bus", [], fn=add_debater())
    config = harness.config(model, skeleton=True, agents=1)
    shared = EventBus()
    seen: list[TurnCompleted] = []
    shared.subscribe(lambda e: seen.append(e) if isinstance(e, TurnCompleted) else None)
    results = []
    for _ in range(2):
        store = harness.engine(config)[1]
        from debatecode.protocol.engine import DebateEngine

        engine = DebateEngine(config, llm=LLMClient(config.llm), sandbox=harness.sandbox, store=store, bus=shared)
        results.append(await engine.solve(load_task(ADD_TASK)))
    for result in results:
        assert result.status == "completed", result.error
        stored = store.turns(result.session.id)
        heard = [e.turn for e in seen if e.session_id == result.session.id and not e.reused]
        assert [t.key for t in stored] == [t.key for t in heard]


async def test_from_config_builds_and_closes_its_own_services(harness: Harness) -> None:
    from debatecode.errors import SandboxUnavailable
    from debatecode.protocol.engine import DebateEngine

    model = harness.scripted("from-config", [], fn=add_debater())
    config = harness.config(model, skeleton=True, agents=1, **{"sandbox.backend": "local"})
    try:
        engine = DebateEngine.from_config(config)
    except SandboxUnavailable as exc:
        pytest.skip(f"no local sandbox here: {exc}")
    async with engine:
        result = await engine.solve(load_task(ADD_TASK))
        assert result.status == "completed", result.error
        assert engine.store.get_session(result.session.id).status == "completed"
    assert engine.store._closed, "the services the engine built are closed with it"
