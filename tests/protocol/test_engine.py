"""The engine end to end on scripted models, the dummy sandbox, a real store and real git."""

from __future__ import annotations

import subprocess
from collections import Counter

from tests.protocol.conftest import ADD_REPLIES, ADD_TASK, BAD, GOOD, PARTIAL, WORSE, Harness, reply

from debatecode.protocol.events import PhaseStarted, SessionStarted, TurnCompleted, VoteCast
from debatecode.task import load_task


async def test_full_session_revises_votes_and_persists(harness: Harness) -> None:
    config = harness.config(f"scripted:{ADD_REPLIES}")
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))

    assert result.status == "completed"
    assert result.all_passed and (result.passed, result.total) == (4, 4)
    outcome = result.session.outcome
    assert outcome["winner"] == "agent-1" and outcome["method"] == "vote"
    assert outcome["vote"]["tallies"] == {"agent-1": 2.0, "agent-3": 1.0}

    turns = store.turns(result.session.id)
    kinds = Counter(t.metadata["kind"] for t in turns)
    assert kinds == {"propose": 3, "revise": 2, "vote": 3}
    assert [t.seq for t in turns] == list(range(1, 9))
    assert {t.status for t in turns if t.agent_id == "agent-3" and t.metadata["kind"] == "propose"} == {"no_code"}
    assert all(t.test_results is not None for t in turns if t.metadata["kind"] != "vote")

    versions = store.versions(result.session.id)
    assert Counter((v.agent_id, v.tests_passed) for v in versions) == Counter(
        [("agent-1", 4), ("agent-2", 0), ("agent-2", 4), ("agent-3", 4)]
    )
    assert [v.version_number for v in versions] == [1, 2, 3, 4] and all(v.commit_sha for v in versions)

    out = config.out
    assert result.solution_path == out / "solution.py"
    assert "return a + b" in (out / "solution.py").read_text()
    report = (out / "report.md").read_text()
    for section in ("## Outcome", "## Candidates", "## Turns", "## Transcript", result.session.id):
        assert section in report
    log = subprocess.run(
        ["git", "-C", str(out), "log", "--format=%s", f"debate/{result.session.id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert log[0].startswith("report:") and log[1].startswith("final: agent-1")
    assert sum(1 for line in log if line.startswith(("proposal:", "critique:"))) == 4

    stored = store.get_session(result.session.id)
    assert stored.status == "completed" and stored.completed_at is not None
    assert stored.prompt_tokens > 0 and stored.completion_tokens > 0
    assert any(isinstance(e, VoteCast) for e in harness.events)
    assert [e.phase for e in harness.events if isinstance(e, PhaseStarted)] == ["proposal", "critique", "convergence"]


async def test_most_tests_wins_without_a_vote(harness: Harness) -> None:
    model = harness.scripted(
        "most", [reply(GOOD, agent="agent-1"), reply(BAD, agent="agent-2"), reply(BAD, kind="revise")]
    )
    engine, store = harness.engine(harness.config(model, agents=2))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.session.outcome["winner"] == "agent-1"
    assert result.session.outcome["method"] == "most_tests"
    assert not any(t.metadata["kind"] == "vote" for t in store.turns(result.session.id))


async def test_a_revision_that_passes_fewer_tests_is_not_adopted(harness: Harness) -> None:
    model = harness.scripted("regress", [reply(PARTIAL, kind="propose"), reply(WORSE, kind="revise")])
    engine, store = harness.engine(harness.config(model, agents=1, rounds=1))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    assert result.passed == 3, "the 3/4 proposal is kept over the 0/4 revision"
    assert "a > 0" in (result.code or "")
    assert [v.tests_passed for v in store.versions(result.session.id)] == [3, 0]


async def test_agents_with_no_code_end_with_no_solution(harness: Harness) -> None:
    model = harness.scripted("silent", [], default="I would rather discuss the requirements first.")
    engine, store = harness.engine(harness.config(model, agents=2, rounds=1))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    assert result.code is None and result.solution_path is None
    assert not (harness.config(model).out / "solution.py").exists()
    turns = store.turns(result.session.id)
    assert len(turns) == 4 and {t.status for t in turns} == {"no_code"}
    assert "No candidate was chosen" in result.report_path.read_text()
    assert store.versions(result.session.id) == []


async def test_unreachable_model_fails_the_session_and_keeps_its_turns(harness: Harness) -> None:
    model = harness.scripted(
        "flaky",
        [
            reply(PARTIAL, kind="propose"),
            reply(BAD, kind="propose"),
            reply("", kind="revise", agent="agent-1", raise_error="unreachable"),
        ],
        default=GOOD,
    )
    engine, store = harness.engine(harness.config(model, agents=2, rounds=1))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "failed"
    assert "ModelUnreachable" in (result.error or "")
    stored = store.get_session(result.session.id)
    assert stored.status == "failed" and "ModelUnreachable" in (stored.error or "")
    proposals = [t for t in store.turns(result.session.id) if t.phase == "proposal"]
    assert len(proposals) == 2, "turns completed before the failure are kept"
    assert result.solution_path is not None and "a > 0" in result.solution_path.read_text(), "best code so far is saved"
    assert "What went wrong" in result.report_path.read_text()


async def test_budget_exhaustion_stops_cleanly_with_partial_results(harness: Harness) -> None:
    model = harness.scripted("spendy", [reply(BAD, kind="propose")], default=GOOD)
    config = harness.config(model, agents=1, rounds=3, token_budget=60)
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
    first = harness.scripted(
        "crashy",
        [
            reply(BAD, agent="agent-1", kind="propose"),
            reply(GOOD, agent="agent-2", kind="propose"),
            reply("", agent="agent-1", kind="revise", raise_error="unreachable"),
        ],
    )
    config = harness.config(first, agents=2, rounds=1)
    engine, store = harness.engine(config)
    failed = await engine.solve(task)
    assert failed.status == "failed"
    stored_before = store.turns(failed.session.id)
    assert len(stored_before) == 2

    calls: list[dict[str, str]] = []

    def answer(messages: object, tags: dict[str, str]) -> str:
        calls.append(tags)
        return GOOD

    second = harness.scripted("recovered", [], fn=answer)
    config2 = config.model_copy(update={"model": second})
    engine2, store2 = harness.engine(config2)
    harness.events.clear()
    resumed = await engine2.resume(failed.session.id, task)

    assert resumed.status == "completed" and resumed.all_passed
    assert [c["kind"] for c in calls] == ["revise"], "only the missing turn is asked"
    turns = store2.turns(failed.session.id)
    assert len(turns) == 3 and len({t.key for t in turns}) == 3
    assert [t.id for t in turns[:2]] == [t.id for t in stored_before]
    started = next(e for e in harness.events if isinstance(e, SessionStarted))
    assert started.resumed and started.reused_turns == 2
    assert sum(1 for e in harness.events if isinstance(e, TurnCompleted) and not e.reused) == 1
    assert len(store2.versions(failed.session.id)) == 3
