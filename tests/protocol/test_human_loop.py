"""Checkpoints, guidance and approval gates through the real engine."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.protocol.conftest import ADD_TASK, Harness
from tests.support.debaters import add_debater

from debatecode.protocol.events import CheckpointDecided, GateDecided, GateRequested, RoundCompleted
from debatecode.protocol.human import CheckpointDecision
from debatecode.task import load_task

LOOP_ONLY = {
    "phases.optimization": False,
    "phases.adversarial": False,
    "participants.moonshot": False,
    "participants.contrarian": False,
    "participants.teacher": False,
    "review.reviewers": ["judge"],
}


class ScriptedHuman:
    """A human who answers checkpoints from a list and approves or rejects gates."""

    def __init__(self, decisions: list[CheckpointDecision], approve: bool | None = True) -> None:
        self.decisions = list(decisions)
        self.approve_with = approve
        self.checkpoints: list[int] = []
        self.gates: list[str] = []

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        return None

    async def checkpoint(self, round_no: int, summary: str) -> CheckpointDecision:
        self.checkpoints.append(round_no)
        return self.decisions.pop(0) if self.decisions else CheckpointDecision()

    async def approve(self, phase: str, summary: str) -> bool | None:
        self.gates.append(phase)
        return self.approve_with


def _prompt_recorder(base: Any, prompts: list[tuple[dict[str, str], str]]) -> Any:
    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        prompts.append((tags, messages[-1]["content"]))
        return base(messages, tags)

    return reply


async def test_guidance_reaches_later_prompts_and_end_stops_the_loop(harness: Harness) -> None:
    prompts: list[tuple[dict[str, str], str]] = []
    model = harness.scripted(
        "guided", [], fn=_prompt_recorder(add_debater(satisfaction=60, style_variants=False), prompts)
    )
    human = ScriptedHuman(
        [CheckpointDecision(action="guide", guidance="Prefer the shortest code."), CheckpointDecision(action="end")]
    )
    engine, store = harness.engine(
        harness.config(model, agents=2, rounds=5, **LOOP_ONLY, **{"convergence.patience": 9}), human=human
    )
    result = await engine.solve(load_task(ADD_TASK))
    assert human.checkpoints == [1, 2]
    assert [e.action for e in harness.of(CheckpointDecided)] == ["guide", "end"]
    assert len(harness.of(RoundCompleted)) == 2, "End after round 2 stops the loop"
    assert result.session.outcome["stop_reason"] == "ended by the human at a checkpoint"
    round2 = [text for tags, text in prompts if tags.get("round") == "2"]
    round1 = [text for tags, text in prompts if tags.get("round") == "1"]
    assert round2 and all("Prefer the shortest code." in text for text in round2)
    assert not any("Prefer the shortest code." in text for text in round1)
    decisions = [t for t in store.turns(result.session.id) if t.phase == "checkpoint"]
    assert [t.metadata["decision"]["action"] for t in decisions] == ["guide", "end"]


async def test_without_a_human_checkpoints_continue(harness: Harness) -> None:
    model = harness.scripted("auto", [], fn=add_debater(satisfaction=60, style_variants=False))
    engine, _ = harness.engine(harness.config(model, agents=2, rounds=2, **LOOP_ONLY, **{"convergence.patience": 9}))
    await engine.solve(load_task(ADD_TASK))
    assert harness.of(CheckpointDecided) == []
    assert len(harness.of(RoundCompleted)) == 2


async def test_gates_are_off_by_default(harness: Harness) -> None:
    model = harness.scripted("nogate", [], fn=add_debater())
    engine, store = harness.engine(harness.config(model, agents=1, skeleton=True))
    result = await engine.solve(load_task(ADD_TASK))
    assert harness.of(GateRequested) == [] and store.gates(result.session.id) == []


async def test_gate_approved_at_the_terminal_is_stored(harness: Harness) -> None:
    model = harness.scripted("gate-ok", [], fn=add_debater())
    human = ScriptedHuman([], approve=True)
    config = harness.config(model, agents=1, skeleton=True, **{"gates.enabled": True, "gates.phases": ["proposal"]})
    engine, store = harness.engine(config, human=human)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed" and human.gates == ["proposal"]
    [gate] = store.gates(result.session.id)
    assert (gate.phase, gate.status, gate.reviewer) == ("proposal", "approved", "terminal")
    assert gate.artifacts["code"] and gate.artifacts["tests"] == {"passed": 4, "total": 4}
    assert [e.decision for e in harness.of(GateDecided)] == ["approved"]


async def test_gate_rejected_elsewhere_cancels_the_session(harness: Harness) -> None:
    model = harness.scripted("gate-no", [], fn=add_debater())
    config = harness.config(
        model, agents=1, skeleton=True, **{"gates.enabled": True, "gates.phases": ["proposal"], "gates.poll_s": 0.05}
    )
    engine, store = harness.engine(config)

    requested = asyncio.Event()
    engine.bus.subscribe(lambda event: requested.set() if isinstance(event, GateRequested) else None)

    async def reviewer() -> None:
        await requested.wait()
        gate_id = harness.of(GateRequested)[0].gate_id
        store.decide_gate(gate_id, "rejected", reviewer="ana", reason="wrong approach")

    result, _ = await asyncio.gather(engine.solve(load_task(ADD_TASK)), reviewer())
    assert result.status == "cancelled" and "rejected at the proposal gate" in (result.error or "")
    [gate] = store.gates(result.session.id)
    assert (gate.status, gate.reviewer, gate.reason) == ("rejected", "ana", "wrong approach")
    assert not any(t.phase == "convergence" for t in store.turns(result.session.id))


async def test_gate_timeout_counts_as_configured(harness: Harness) -> None:
    model = harness.scripted("gate-late", [], fn=add_debater())
    config = harness.config(
        model,
        agents=1,
        skeleton=True,
        **{
            "gates.enabled": True,
            "gates.phases": ["proposal"],
            "gates.timeout_s": 0.2,
            "gates.poll_s": 0.05,
            "gates.on_timeout": "approve",
        },
    )
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
    [gate] = store.gates(result.session.id)
    assert gate.status == "timed_out"
