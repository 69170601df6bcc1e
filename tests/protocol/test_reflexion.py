"""Reflexion through the real engine: fail, reflect, retry, pass; memory across sessions."""

from __future__ import annotations

from typing import Any

from tests.protocol.conftest import ADD_TASK, REPO, Harness

from debatecode.memory import EpisodicMemory, WisdomStore, create_embedder
from debatecode.protocol.events import PhaseStarted
from debatecode.task import load_task, parse_task

SUM_TASK = REPO / "examples" / "tasks" / "sum_range.md"
OFF_BY_ONE = "Summing a range.\n```python\ndef sum_range(a: int, b: int) -> int:\n    return sum(range(a, b))\n```"
STILL_WRONG = "Maybe the start.\n```python\ndef sum_range(a: int, b: int) -> int:\n    return sum(range(a + 1, b))\n```"
RIGHT = "Include b.\n```python\ndef sum_range(a: int, b: int) -> int:\n    return sum(range(a, b + 1))\n```"
REFLECTION = (
    "Root cause: off-by-one error in the range end: range(a, b) never reaches b.\n"
    "What went wrong: sum_range(1, 4) gave 6 instead of 10.\n"
    "What to change next: use range(a, b + 1).\n"
    "Lesson: range excludes its stop value; add one for inclusive upper bounds.\n"
    "Confidence: 0.8"
)
LESSONS = "- Python's range excludes its stop value, so add one for an inclusive upper bound.\n- Check loop boundaries on equal and empty ranges."

REFLEXION_ONLY = {
    "strategy": "reflexion",
    "agents": 1,
    "memory.embedder": "hashing",
    "memory.similarity_threshold": 0.0,
}


def _recorder(replies: dict[str, str | list[str]], prompts: list[tuple[dict[str, str], str]]) -> Any:
    queues = {k: list(v) if isinstance(v, list) else [v] for k, v in replies.items()}

    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        prompts.append((tags, messages[-1]["content"]))
        for key, queue in queues.items():
            if tags["kind"] == key or tags["kind"].startswith(key + "-"):
                return queue.pop(0) if len(queue) > 1 else queue[0]
        raise AssertionError(f"no reply for {tags}")

    return reply


async def test_reflexion_fails_reflects_retries_and_passes(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    model = harness.scripted(
        "rx",
        [],
        fn=_recorder({"draft": OFF_BY_ONE, "reflect": REFLECTION, "retry": RIGHT, "lessons": LESSONS}, prompts),
    )
    config = harness.config(model, **REFLEXION_ONLY)
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(SUM_TASK))
    assert result.status == "completed" and result.all_passed
    kinds = [t.metadata["kind"] for t in store.turns(result.session.id) if t.provider not in ("tool",)]
    assert kinds[:3] == ["draft", "reflect-1", "retry-1"]
    retry_prompt = next(text for tags, text in prompts if tags["kind"] == "retry-1")
    assert "off-by-one error in the range end" in retry_prompt, "the retry sees the reflection"
    reflect_turn = next(t for t in store.turns(result.session.id) if t.metadata["kind"] == "reflect-1")
    assert reflect_turn.confidence == 0.8 and reflect_turn.reflections[0]["what_to_change"] == "use range(a, b + 1)."
    memory = EpisodicMemory(config.store_url, config.memory, create_embedder("hashing", config.memory))
    try:
        [episode] = memory.list(session_id=result.session.id)
        assert episode.root_cause.startswith("off-by-one") and episode.attempt == 1
        assert episode.test_results["passed"] < episode.test_results["total"]
        assert "range(a, b)" in episode.code
    finally:
        memory.close()
    assert [e.phase for e in harness.of(PhaseStarted)] == ["proposal", "reflexion", "convergence"]


async def test_every_retry_sees_every_earlier_reflection(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    second = REFLECTION.replace("off-by-one error in the range end", "the start moved but the end is still exclusive")
    model = harness.scripted(
        "rx2",
        [],
        fn=_recorder(
            {"draft": OFF_BY_ONE, "reflect": [REFLECTION, second], "retry": [STILL_WRONG, RIGHT], "lessons": LESSONS},
            prompts,
        ),
    )
    engine, store = harness.engine(harness.config(model, **REFLEXION_ONLY))
    result = await engine.solve(load_task(SUM_TASK))
    assert result.all_passed
    retry2 = next(text for tags, text in prompts if tags["kind"] == "retry-2")
    assert "off-by-one error in the range end" in retry2 and "the end is still exclusive" in retry2
    assert sum(1 for t in store.turns(result.session.id) if t.metadata["kind"].startswith("reflect")) == 2


async def test_the_loop_stops_at_max_attempts(harness: Harness) -> None:
    model = harness.scripted(
        "rx3",
        [],
        fn=_recorder({"draft": OFF_BY_ONE, "reflect": REFLECTION, "retry": OFF_BY_ONE, "lessons": LESSONS}, []),
    )
    engine, store = harness.engine(harness.config(model, **REFLEXION_ONLY, **{"reflexion.max_attempts": 2}))
    result = await engine.solve(load_task(SUM_TASK))
    assert not result.all_passed
    assert sum(1 for t in store.turns(result.session.id) if t.metadata["kind"].startswith("reflect")) == 2


async def test_the_confidence_threshold_stops_the_loop(harness: Harness) -> None:
    almost = (
        "```python\ndef sum_range(a: int, b: int) -> int:\n    return sum(range(a, b + 1)) if b < 10**5 else 0\n```"
    )
    model = harness.scripted(
        "rx4", [], fn=_recorder({"draft": almost, "reflect": REFLECTION, "retry": RIGHT, "lessons": LESSONS}, [])
    )
    engine, store = harness.engine(harness.config(model, **REFLEXION_ONLY, **{"reflexion.confidence_threshold": 0.8}))
    result = await engine.solve(load_task(SUM_TASK))
    assert (result.passed, result.total) == (4, 5), "4/5 = 0.8 reaches the threshold"
    assert not any(t.metadata["kind"].startswith("reflect") for t in store.turns(result.session.id))


async def test_a_lesson_from_debate_a_reaches_the_prompts_of_debate_b(harness: Harness) -> None:
    prompts_a: list[tuple[dict[str, str], str]] = []
    model_a = harness.scripted(
        "learn",
        [],
        fn=_recorder({"draft": OFF_BY_ONE, "reflect": REFLECTION, "retry": RIGHT, "lessons": LESSONS}, prompts_a),
    )
    config_a = harness.config(model_a, **REFLEXION_ONLY)
    engine_a, store = harness.engine(config_a)
    first = await engine_a.solve(load_task(SUM_TASK))
    lessons_turn = next(t for t in store.turns(first.session.id) if t.metadata["kind"] == "lessons")
    assert lessons_turn.metadata["lessons"][0].startswith("Python's range excludes its stop value")

    wisdom = WisdomStore(config_a.store_url, config_a.memory, create_embedder("hashing", config_a.memory))
    try:
        assert any("range excludes its stop value" in lesson.text for lesson in wisdom.list())
    finally:
        wisdom.close()

    count_task = parse_task(
        "---\ntitle: Count even numbers in an inclusive range\nentry_point: count_even\n"
        'signature: "def count_even(a: int, b: int) -> int:"\ndifficulty: simple\n---\n'
        "Return how many even integers lie in the inclusive range from a to b (0 when a > b); use a loop over range.\n"
        "## Examples\n>>> count_even(1, 4)\n2\n",
        "count_even.md",
    )
    prompts_b: list[tuple[dict[str, str], str]] = []
    good = "```python\ndef count_even(a: int, b: int) -> int:\n    return sum(1 for x in range(a, b + 1) if x % 2 == 0)\n```"
    model_b = harness.scripted("apply", [], fn=_recorder({"draft": good, "vote": "Vote: Candidate 1"}, prompts_b))
    engine_b, store_b = harness.engine(
        harness.config(
            model_b, skeleton=True, agents=1, **{"memory.embedder": "hashing", "memory.similarity_threshold": 0.0}
        )
    )
    second = await engine_b.solve(count_task)
    recall = next(t for t in store_b.turns(second.session.id) if t.phase == "wisdom" and t.metadata["kind"] == "recall")
    assert any("range excludes its stop value" in lesson for lesson in recall.metadata["lessons"])
    draft_prompt = next(text for tags, text in prompts_b if tags["kind"] == "draft")
    assert "Lessons from earlier debates" in draft_prompt and "range excludes its stop value" in draft_prompt


async def test_reflexion_runs_inside_the_debate_before_critique(harness: Harness) -> None:
    from tests.support.debaters import add_debater

    base = add_debater()
    bad = "```python\ndef add(a: int, b: int) -> int:\n    return a - b\n```"

    def reply(messages: Any, tags: dict[str, str]) -> str:
        if tags["agent"] == "agent-2" and tags["kind"] in ("draft", "refine-1", "refine-2"):
            return "Subtraction.\n" + bad
        if tags["kind"].startswith("reflect"):
            return "Root cause: I subtracted instead of adding.\nWhat to change next: use a + b.\nConfidence: 0.9"
        if tags["kind"].startswith("retry"):
            return "Adding now.\n```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
        if tags["kind"] == "lessons":
            return "- Read the operation the task names before writing it."
        return base(messages, tags)

    model = harness.scripted("rx-debate", [], fn=reply)
    config = harness.config(
        model, agents=2, **{"phases.optimization": False, "phases.adversarial": False, "memory.embedder": "hashing"}
    )
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    phases = [e.phase for e in harness.of(PhaseStarted)]
    assert phases.index("reflexion") < phases.index("critique")
    turns = store.turns(result.session.id)
    assert [t.agent_id for t in turns if t.phase == "reflexion" and t.metadata["kind"] == "reflect-1"] == ["agent-2"]
    assert result.all_passed
