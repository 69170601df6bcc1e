"""Hook points inside a debate: validations run, feed back to the author, and block convergence."""

from __future__ import annotations

from tests.protocol.conftest import ADD_TASK, AUTHORS_ONLY, GOOD, LATE_PHASES_OFF, Harness

from debatecode.task import load_task

EVAL = '```python\ndef add(a: int, b: int) -> int:\n    return eval(f"{a} + {b}")\n```'


def _debater(prompts: list[tuple[dict[str, str], str]], *, revise: str) -> object:
    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        prompts.append((tags, messages[-1]["content"]))
        kind, agent = tags["kind"], tags["agent"]
        if kind == "draft":
            return "Short and general.\n" + (EVAL if agent == "agent-1" else GOOD)
        if kind == "review":
            return "Satisfaction: 60\nRationale: works, but eval is dangerous because it runs strings as code.\nBlocking concerns:\n1. eval"
        if kind == "address_review":
            return "Fair: eval is unsafe, so plain addition it is.\n" + revise
        if kind.startswith("vote"):
            return "The first is fine because it is simple.\nRanking: 1 > 2\nVote: Candidate 1"
        raise AssertionError(tags)

    return reply


CONFIG = {
    "phases.critique": False,
    **LATE_PHASES_OFF,
    "phases.dehallucination": False,
    **AUTHORS_ONLY,
    "participants.teacher": False,
    "review.reviewers": ["judge"],
}


async def test_blocking_finding_is_fed_back_and_the_fixed_version_wins(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    model = harness.scripted("hooks-fix", [], fn=_debater(prompts, revise=GOOD))
    engine, store = harness.engine(harness.config(model, agents=2, **CONFIG))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed", result.error
    turns = store.turns(result.session.id)
    proposal_check = next(t for t in turns if t.metadata.get("kind") == "post_proposal-agent-1")
    assert proposal_check.metadata["hooks"]["point"] == "post_proposal"
    assert any(c["tool"] == "security" and not c["passed"] and c["blocking"] for c in proposal_check.tool_calls)
    assert "B307" in proposal_check.content, "bandit's finding id reaches the feedback"
    clean = next(t for t in turns if t.metadata.get("kind") == "post_proposal-agent-2")
    assert all(c["passed"] for c in clean.tool_calls if c["blocking"])
    address_prompt = next(text for tags, text in prompts if tags["kind"] == "address_review")
    assert "B307" in address_prompt and "cannot be chosen as the final answer" in address_prompt
    assert "eval" not in (result.code or "")
    versions = store.versions(result.session.id)
    assert all(v.quality_score is not None and 0 <= v.quality_score <= 1 for v in versions)
    eval_version = next(v for v in versions if "eval" in v.code)
    assert eval_version.quality_score < max(v.quality_score for v in versions if "eval" not in v.code)
    assert any(t.metadata.get("kind") == "post_convergence-agent-1" for t in turns)


async def test_a_blocked_version_is_passed_over_at_convergence(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    model = harness.scripted("hooks-keep", [], fn=_debater(prompts, revise=EVAL))
    engine, _ = harness.engine(harness.config(model, agents=2, **CONFIG))
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    assert result.session.outcome["winner"] == "agent-2", "agent-1 kept eval, so the debate converges on agent-2"
    assert "eval" not in (result.code or "")
    assert result.all_passed
