"""The synthesis review: every debater checks how the record states its view; one correction round at most.

A debater that answers ``MISREPRESENTED: <its view>`` has its own words
replace what the record said of it (``apply_corrections``); the record notes
the correction, and its confidence cannot stay HIGH without saying why
(``confidence.settled_confidence``).
"""

from __future__ import annotations

from collections.abc import Sequence

from debatecode._concurrency import gather_all
from debatecode.agents.agent import Agent
from debatecode.protocol.design.confidence import settled_confidence
from debatecode.protocol.design.records import DecisionRecord, Dissent
from debatecode.protocol.design.replies import parse_review_answer
from debatecode.protocol.design.run import MODERATOR, DesignRun
from debatecode.protocol.design.sections import dedupe_dissents
from debatecode.protocol.design.steps import DesignStep
from debatecode.store.records import TurnRecord

__all__ = ["SynthesisReviewStep", "apply_corrections"]


class SynthesisReviewStep(DesignStep):
    """Every debater checks how the record states its view; a misrepresented one gets one correction round."""

    name = "synthesis_review"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        record = run.state.record
        if record is None:
            return "no record to review"
        names = run.state.names()
        debaters = run.debaters()

        async def review(agent: Agent) -> TurnRecord:
            return await run.say(
                agent,
                "review",
                phase=self.name,
                round_no=0,
                stage="synthesis",
                max_tokens=120,
                represented=_represented(record, names[agent.id]),
            )

        turns = await gather_all(*(review(agent) for agent in debaters))
        corrections: list[tuple[str, str]] = []
        for agent, turn in zip(debaters, turns, strict=True):
            await run.record(turn)
            accurate, corrected = parse_review_answer(turn.content)
            if not accurate and corrected:
                corrections.append((names[agent.id], corrected))
        if not corrections:
            return "every perspective accepts how it is represented"
        turn = await run.record(
            run.tool_turn(
                round_no=0,
                phase="correction",
                agent_id=MODERATOR,
                role="moderator",
                kind="apply",
                content="\n".join(f"{name}: {text}" for name, text in corrections),
                metadata={"corrections": [list(c) for c in corrections]},
            )
        )
        revised = apply_corrections(record, [(str(a), str(b)) for a, b in turn.metadata["corrections"]])
        run.state.record = settled_confidence(revised)
        return f"one correction round: {', '.join(name for name, _ in corrections)}"


def _represented(record: DecisionRecord, name: str) -> str:
    lines = []
    summary = next((p for p in record.perspectives if p.name == name), None)
    if summary is not None and summary.key_arguments:
        lines.append("Key arguments: " + "; ".join(summary.key_arguments))
    for dissent in record.dissents:
        if name in dissent.perspectives:
            lines.append("Dissent: " + dissent.text)
    return "\n".join(lines) or "(nothing: the record does not mention your view)"


def apply_corrections(record: DecisionRecord, corrections: Sequence[tuple[str, str]]) -> DecisionRecord:
    """``record`` with each named perspective's corrected view replacing its dissent (or added as one)."""
    dissents = list(record.dissents)
    notes = list(record.corrections)
    for name, text in corrections:
        dissents = [
            d.model_copy(update={"perspectives": [p for p in d.perspectives if p != name]})
            for d in dissents
            if d.perspectives != [name]
        ]
        dissents.append(Dissent(perspectives=[name], text=text))
        notes.append(f"{name} said its view was misrepresented; its own correction replaces it: {text}")
    return record.model_copy(update={"dissents": dedupe_dissents(dissents), "corrections": notes})
