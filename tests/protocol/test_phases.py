"""Each phase through the real engine, with scripted models and the dummy sandbox."""

from __future__ import annotations

from typing import Any

from tests.protocol.conftest import ADD_TASK, AUTHORS_ONLY, GOOD, LATE_PHASES_OFF, MERGE_TASK, Harness
from tests.support.debaters import add_debater

from debatecode.protocol.events import Escalated, PhaseCompleted, PhaseStarted
from debatecode.task import load_task

MERGE_GOOD = (
    "```python\ndef merge_intervals(intervals):\n    out = []\n    for a, b in sorted(intervals):\n"
    "        if out and a <= out[-1][1]:\n            out[-1] = (out[-1][0], max(out[-1][1], b))\n"
    "        else:\n            out.append((a, b))\n    return out\n```"
)

ADJUDICATION_ONLY = {"phases.critique": False, "phases.review": False, **LATE_PHASES_OFF, **AUTHORS_ONLY}
"""The debate up to adjudication and convergence: critique, review, optimization and adversarial off, only the authors."""


def _recording(replies: dict[str, str], prompts: list[tuple[dict[str, str], str]]) -> Any:
    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        prompts.append((tags, messages[-1]["content"]))
        kind = tags["kind"]
        for prefix, text in replies.items():
            if kind.startswith(prefix):
                return text
        raise AssertionError(f"no reply for {tags}")

    return reply


async def test_dehallucination_asks_answers_and_informs_later_prompts(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    replies = {
        "ask-1": "[edge_cases] May intervals be given with start greater than end?\n[performance] How many intervals at most?",
        "ask-2": "NONE",
        "answer-1": "1. No: the task guarantees start <= end.\n2. A few thousand.\nConfidence: 0.7",
        "draft": MERGE_GOOD,
        "vote": "Vote: Candidate 1",
    }
    model = harness.scripted("clarify", [], fn=_recording(replies, prompts))
    config = harness.config(model, skeleton=True, agents=1, **{"phases.dehallucination": True})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(MERGE_TASK))
    assert result.status == "completed" and result.all_passed
    turns = store.turns(result.session.id)
    asked = next(t for t in turns if t.metadata["kind"] == "ask-1")
    assert [q["category"] for q in asked.metadata["questions"]] == ["edge_cases", "performance"]
    answered = next(t for t in turns if t.metadata["kind"] == "answer-1")
    assert answered.agent_id == "moderator" and answered.confidence == 0.7
    assert any(t.metadata["kind"] == "ask-2" for t in turns), "confidence 0.7 < 0.9: a second round is asked"
    draft_prompt = next(text for tags, text in prompts if tags["kind"] == "draft")
    assert "start <= end" in draft_prompt, "clarifications reach the authors"


async def test_dehallucination_is_skipped_for_simple_tasks(harness: Harness) -> None:
    model = harness.scripted("simple", [], fn=add_debater())
    engine, store = harness.engine(harness.config(model, skeleton=True, agents=1, **{"phases.dehallucination": True}))
    result = await engine.solve(load_task(ADD_TASK))
    summary = next(e.summary for e in harness.of(PhaseCompleted) if e.phase == "dehallucination")
    assert summary == "skipped: simple task"
    assert not any(t.phase == "dehallucination" for t in store.turns(result.session.id))


class _Human:
    def __init__(self, answers: list[str] | None) -> None:
        self.answers = answers
        self.asked: list[list[dict[str, str]]] = []

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        self.asked.append(questions)
        return self.answers

    async def checkpoint(self, round_no: int, summary: str) -> Any:
        from debatecode.protocol.human import CheckpointDecision

        return CheckpointDecision()

    async def approve(self, phase: str, summary: str) -> bool | None:
        return True


async def test_dehallucination_takes_the_humans_answers_when_interactive(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    replies = {"ask-1": "[requirements] Should touching intervals merge?", "ask-2": "NONE", "draft": MERGE_GOOD}
    model = harness.scripted("human-answers", [], fn=_recording(replies, prompts))
    human = _Human(["Yes, touching intervals merge."])
    engine, store = harness.engine(
        harness.config(model, skeleton=True, agents=1, **{"phases.dehallucination": True}), human=human
    )
    result = await engine.solve(load_task(MERGE_TASK))
    answer = next(t for t in store.turns(result.session.id) if t.metadata["kind"] == "answer-1")
    assert answer.agent_id == "human" and answer.metadata["answers"] == ["Yes, touching intervals merge."]
    assert human.asked and not any(tags["kind"].startswith("answer") for tags, _ in prompts), (
        "the Moderator is not asked"
    )


async def test_cpde_designer_plan_reaches_the_implementers(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    replies = {
        "plan": "1. Sort by start. 2. Sweep and merge because sorted order makes overlaps adjacent.",
        "draft": MERGE_GOOD,
        "vote": "Vote: Candidate 1",
    }
    model = harness.scripted("cpde", [], fn=_recording(replies, prompts))
    config = harness.config(model, skeleton=True, agents=2, **{"topology.planning": "cpde", "topology.type": "tree"})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(MERGE_TASK))
    assert result.session.coordination_protocol == "cpde"
    roles = {t.agent_id: t.agent_role for t in store.turns(result.session.id)}
    assert roles["designer"] == "designer" and roles["agent-1"] == "implementer"
    drafts = [text for tags, text in prompts if tags["kind"] == "draft"]
    assert len(drafts) == 2 and all("Sweep and merge" in text for text in drafts)


async def test_rubber_stamp_review_is_rejected_and_asked_again(harness: Harness) -> None:
    answers = iter(
        [
            "Looks good to me!",
            "Satisfaction: 91\nRationale: correct because addition of ints is exact.\nBlocking concerns: none",
        ]
    )
    base = add_debater()

    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "review" and tags["agent"] == "judge":
            return next(answers)
        return base(messages, tags)

    model = harness.scripted("stamp", [], fn=reply)
    config = harness.config(
        model,
        agents=2,
        **{
            "review.reviewers": ["judge"],
            **LATE_PHASES_OFF,
            "participants.moonshot": False,
        },
    )
    _, turns = await harness.solve(config)
    reviews = [t for t in turns if t.phase == "review" and t.agent_id == "judge"]
    assert [t.status for t in reviews] == ["rejected", "ok"]
    assert reviews[1].metadata["rubber_stamp_retry"] is True
    assert reviews[1].metadata["review"]["satisfaction"] == 91


async def test_critique_exchanged_tests_catch_what_visible_tests_miss(harness: Harness) -> None:
    model = harness.scripted("hack", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(
        model,
        agents=2,
        **{
            "phases.adjudication": False,  # it would settle add(0, 0) before the critique: this tests the critique
            "phases.review": False,
            **LATE_PHASES_OFF,
            **AUTHORS_ONLY,
        },
    )
    result, turns = await harness.solve(config)
    hack_draft = next(t for t in turns if t.agent_id == "agent-2" and t.metadata["kind"] == "draft")
    assert hack_draft.test_results["cases"] and all(c["outcome"] == "passed" for c in hack_draft.test_results["cases"])
    contrast = next(t for t in turns if t.agent_id == "agent-2" and t.metadata["kind"] == "contrast")
    assert {
        "call": "add(5, 0)",
        "mine": "returns 6",
        "theirs": "returns 5",
        "expected": "returns 5",
    } in contrast.metadata["disagreements"]
    assert result.all_passed and "a + 1" not in (result.code or "")


async def test_adversarial_keeps_valid_attacks_and_drops_invalid_ones(harness: Harness) -> None:
    base = add_debater()

    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "defend":
            return "INVALID: test_red_1_2 — 2 + 2 is 4, the attack is wrong.\n" + GOOD
        return base(messages, tags)

    model = harness.scripted("redblue", [], fn=reply)
    config = harness.config(model, skeleton=True, agents=1, **{"phases.adversarial": True})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    suites = {case["name"]: case["suite"] for case in _winner_cases(store, result)}
    assert suites.get("test_red_1_1") == "red", "a valid attack joins the regression suite"
    assert "test_red_1_2" not in suites, "an attack Blue ruled invalid is dropped"
    report = result.report_path.read_text()
    assert "test_red_1_2" in report and "rejected" in report


def _winner_cases(store: Any, result: Any) -> list[dict[str, Any]]:
    """The final code's test table, as the report shows it."""
    report = result.report_path.read_text()
    return [
        {"name": line.split("`")[1], "suite": line.split("|")[2].strip()}
        for line in report.splitlines()
        if line.startswith("| `test_")
    ]


async def test_optimization_discards_a_change_that_regresses(harness: Harness) -> None:
    base = add_debater()

    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "optimize-performance_analyzer":
            return "Faster: skip the addition.\n```python\ndef add(a: int, b: int) -> int:\n    return a\n```"
        return base(messages, tags)

    model = harness.scripted("optim", [], fn=reply)
    config = harness.config(model, skeleton=True, agents=1, **{"phases.optimization": True})
    result, _ = await harness.solve(config)
    summary = next(e.summary for e in harness.of(PhaseCompleted) if e.phase == "optimization")
    assert "performance_analyzer: discarded, a test regressed" in summary
    assert "return a + b" in (result.code or "")


async def test_escalation_when_max_rounds_end_without_passing(harness: Harness) -> None:
    wrong = "```python\ndef add(a: int, b: int) -> int:\n    return a * b\n```"

    def reply(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "review":
            return "Satisfaction: 40\nRationale: wrong because multiplication is not addition.\nBlocking concerns:\n1. Uses * instead of +."
        if tags["kind"].startswith("attack"):
            return "```text\nadd(2, 3)\n```"
        return "I keep my approach because it is simple.\n" + wrong

    model = harness.scripted("stuck", [], fn=reply)
    config = harness.config(
        model,
        agents=2,
        rounds=2,
        **{
            **LATE_PHASES_OFF,
            **AUTHORS_ONLY,
            "participants.teacher": False,
            "review.reviewers": ["judge"],
            "convergence.patience": 5,
        },
    )
    result, _ = await harness.solve(config)
    escalations = harness.of(Escalated)
    assert escalations and "max rounds" in escalations[0].reason
    assert "Positions:" in escalations[0].summary and "judge" in escalations[0].summary
    assert "## Escalation" in result.report_path.read_text()
    assert [e.phase for e in harness.of(PhaseStarted)].count("critique") == 2


async def test_an_agent_whose_model_fails_is_dropped_and_its_subtree_rebalanced(harness: Harness) -> None:
    base = add_debater()

    def flaky(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"].startswith("attack-"):
            from debatecode.errors import ModelUnreachable

            raise ModelUnreachable("the moonshot's server went away", model="scripted/flaky-moonshot")
        return base(messages, tags)

    model = harness.scripted("steady", [], fn=base)
    moonshot_model = harness.scripted("flaky-moonshot", [], fn=flaky)
    config = harness.config(
        model,
        agents=3,
        **{
            "models": {"moonshot": moonshot_model},
            "topology.type": "tree",
            **LATE_PHASES_OFF,
        },
    )
    result, turns = await harness.solve(config)
    assert result.status == "completed", result.error
    assert "moonshot | medium | dropped from the debate: ModelUnreachable" in result.report_path.read_text()
    assert not any(t.agent_id == "moonshot" and t.phase in ("review", "convergence") for t in turns)
    assert any(t.agent_id == "moonshot" and t.phase == "proposal" for t in turns), "it took part until it failed"


async def test_adjudication_settles_what_visible_tests_miss_and_the_hack_is_refined_away(harness: Harness) -> None:
    """agent-2 special-cases b == 0 and passes every visible test; the debaters, asked apart, settle add(x, 0)."""
    model = harness.scripted("adjudicated", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(
        model,
        agents=3,
        **ADJUDICATION_ONLY,
    )
    result, turns = await harness.solve(config)
    questions = [t for t in turns if t.metadata["kind"].startswith("adjudicate-")]
    assert questions and all(t.phase == "adjudication" for t in questions)
    assert {t.agent_id for t in questions} == {"agent-1", "agent-2", "agent-3"}, "every author answers"
    assert all(t.metadata["call"].endswith(", 0)") for t in questions), "only the disputed calls are asked"
    refine = next(t for t in turns if t.agent_id == "agent-2" and t.metadata["kind"] == "refine-adjudicated-1")
    assert "test_adjudicated_1" in refine.prompt, "the refinement is shown the adjudicated failure"
    assert result.all_passed and "a + 1" not in (result.code or "")


async def test_the_red_team_s_inputs_that_tell_candidates_apart_are_asked_first(harness: Harness) -> None:
    """With ``participants.red``, Red proposes add(5, 0): it splits the hack from the sum, so it is adjudicated."""
    model = harness.scripted("red-distinguishes", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(
        model,
        agents=3,
        **{
            **ADJUDICATION_ONLY,
            "participants.red": True,
        },
    )
    result, turns = await harness.solve(config)
    red = next(t for t in turns if t.metadata.get("kind") == "distinguish")
    assert red.agent_id == "red" and red.phase == "adjudication"
    assert red.metadata["calls"] == ["add(5, 0)", "add(0, 0)"]
    assert "a + 1" in red.prompt, "Red is shown the different leading codes"
    behaviour = next(t for t in turns if t.metadata.get("kind") == "behaviour-red")
    assert behaviour.metadata["inputs"][:2] == ["add(5, 0)", "add(0, 0)"], "Red's inputs run first"
    first = next(t for t in turns if t.metadata.get("kind") == "adjudicate-1")
    assert first.metadata["call"] == "add(5, 0)", "the most contested inputs, Red's first on a tie"
    assert result.all_passed and "a + 1" not in (result.code or "")


async def test_red_is_not_asked_when_the_leading_candidates_are_one_code(harness: Harness) -> None:
    model = harness.scripted("red-silent", [], fn=add_debater(style_variants=False))
    config = harness.config(
        model,
        agents=2,
        **{
            **ADJUDICATION_ONLY,
            "participants.red": True,
            "convergence.early_stop": False,
        },
    )
    result, turns = await harness.solve(config)
    assert result.status == "completed", result.error
    assert not [t for t in turns if t.metadata.get("kind") == "distinguish"]


async def test_critique_and_review_stay_silent_when_tests_separate_the_candidates(harness: Harness) -> None:
    """agent-2's draft fails the visible tests and its refinement is no better: the tests have chosen agent-1."""

    def debater(messages: object, tags: dict[str, str]) -> str:
        if tags["kind"] == "draft" or tags["kind"].startswith("refine"):
            return "Sum.\n" + (GOOD if tags["agent"] == "agent-1" else GOOD.replace("a + b", "a - b"))
        raise AssertionError(f"nobody should be asked: {tags}")

    model = harness.scripted("separated", [], fn=debater)
    config = harness.config(
        model,
        agents=2,
        **{
            "phases.adjudication": False,
            **LATE_PHASES_OFF,
            "phases.dehallucination": False,
            **AUTHORS_ONLY,
            "participants.teacher": False,
            "convergence.ranking": "behaviour",
            "review.reviewers": ["judge"],
            "reflexion.in_debate": False,
        },
    )
    result, turns = await harness.solve(config)
    assert result.status == "completed", result.error
    assert not [t for t in turns if t.phase in ("critique", "review") and t.provider not in ("tool", "")]
    summaries = " ".join(str(t.content) for t in turns if t.phase in ("critique", "review"))
    assert "agent-1 passes more tests than every other candidate" in summaries or not summaries
    assert "a + b" in (result.code or "")


def test_tests_separate_by_score_and_identical_code_only_for_critique() -> None:
    from debatecode.execution.results import TestReport
    from debatecode.protocol.separation import separated_by_tests
    from debatecode.protocol.state import Candidate
    from debatecode.sandbox.results import TestCaseResult

    def candidate(agent: str, code: str, passed: int) -> Candidate:
        cases = [TestCaseResult(name=f"t{i}", outcome="passed" if i < passed else "failed") for i in range(3)]
        return Candidate(agent, code, TestReport(cases=cases))

    one, two = "def f():\n    return 1\n", "def f():\n    return 2\n"
    assert separated_by_tests([candidate("a", one, 3), candidate("b", two, 2)]) == (
        "a passes more tests than every other candidate"
    )
    assert separated_by_tests([candidate("a", one, 3), candidate("b", two, 3)]) is None
    assert separated_by_tests([candidate("a", one, 3), candidate("b", one + "  \n", 3)]) is not None
    assert separated_by_tests([candidate("a", one, 3), candidate("b", one, 3)], same_code=False) is None
    assert separated_by_tests([candidate("a", one, 3)]) is None
