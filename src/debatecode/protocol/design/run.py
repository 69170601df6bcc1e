"""``DesignRun`` and ``DesignState``: one design debate as its steps see it.

The run takes journaled turns exactly as a code debate does (it is a
:class:`~debatecode.protocol.session_run.SessionRun`); its state holds the typed
records of the debate (``protocol.design.records``), rebuilt from the journal
when a debate is resumed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from debatecode.agents.agent import Agent
from debatecode.agents.design_prompts import DesignKind, design_prompt
from debatecode.agents.perspectives import Perspective
from debatecode.protocol.deps import SessionDeps
from debatecode.protocol.design.files import DebateFiles
from debatecode.protocol.design.question import DesignQuestion
from debatecode.protocol.design.records import (
    Clarification,
    DecisionRecord,
    Escalation,
    Position,
    QuestionAnalysis,
    RoundRecord,
)
from debatecode.protocol.design.replies import parse_speech
from debatecode.protocol.design.settings import DesignSettings
from debatecode.protocol.events import Event
from debatecode.protocol.session_run import SessionRun
from debatecode.protocol.transcript import ContextWindow
from debatecode.store.records import TurnRecord

__all__ = ["MODERATOR", "DesignRun", "DesignState"]

MODERATOR = "moderator"
"""The moderator's agent id."""


@dataclass
class DesignState:
    """What a design debate has produced so far."""

    question: DesignQuestion
    mode: str = "deliberative"
    analysis: QuestionAnalysis | None = None
    decision_text: str = ""
    """The moderator's one-sentence reading of the decision to make."""
    perspectives: dict[str, Perspective] = field(default_factory=dict)
    """The debaters' perspectives by key, in speaking order."""
    positions: list[Position] = field(default_factory=list)
    """Phase 1: independent positions."""
    rounds: list[RoundRecord] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    """The gate reviewer's decision after each round (action, reason)."""
    escalation: Escalation | None = None
    """The escalation that stands: the last one, unless a person chose to continue the debate after it."""
    continued: list[Escalation] = field(default_factory=list)
    """Escalations at which a person chose to continue with guidance, each with the round it ran."""
    guided_round: int | None = None
    """The round a person's guidance at an escalation asked for, not run yet (``engine._after_loop`` runs it)."""
    record: DecisionRecord | None = None
    adr_path: str | None = None
    stop_reason: str = ""
    rounds_done: int = 0
    ended_by_human: bool = False
    guidance: list[str] = field(default_factory=list)
    clarification: Clarification | None = None
    """The clarifying question asked about a vague question, and its answer or the assumption made instead."""

    def round(self, round_no: int) -> RoundRecord:
        """The record of response round ``round_no``, created on first use."""
        while len(self.rounds) < round_no:
            self.rounds.append(RoundRecord(round=len(self.rounds) + 1))
        return self.rounds[round_no - 1]

    def latest(self) -> dict[str, Position]:
        """Each perspective's latest speech (positions, then arguments and rebuttals in order)."""
        found: dict[str, Position] = {p.perspective: p for p in self.positions}
        for record in self.rounds:
            for speech in [*record.arguments, *record.rebuttals]:
                found[speech.perspective] = speech
        return found

    def scores(self) -> dict[str, int]:
        """Each perspective's latest satisfaction score."""
        found: dict[str, int] = {}
        for record in self.rounds:
            found.update(record.scores())
        return found

    def names(self) -> dict[str, str]:
        return {key: p.name for key, p in self.perspectives.items()}


@dataclass
class DesignRun(SessionRun):
    """One design debate: the moderator, the debaters (one per perspective), the state and the services."""

    state: DesignState
    deps: SessionDeps
    design: DesignSettings = field(default_factory=DesignSettings)
    files: DebateFiles | None = None
    """The debate's session folder (``.debatecode/debates/<id>/``), when it writes one."""

    def debaters(self) -> list[Agent]:
        """Every debater in speaking order (the moderator and muted perspectives excluded)."""
        from debatecode.protocol.design.gate import muted_perspectives

        by_id = {a.id: a for a in self.agents}
        muted = muted_perspectives(self.state.rounds)  # went off topic again and again: silent from then on
        return [by_id[key] for key in self.state.perspectives if key in by_id and key not in muted]

    @property
    def moderator(self) -> Agent:
        return self.agent(MODERATOR)

    def announce(self, event: Event) -> None:
        """Emit ``event`` on the session's bus (an escalation and its answer: they are events, not turns)."""
        self.bus.emit(event)

    def window(self, round_no: int) -> str:
        """What a debater sees of earlier rounds: verbatim recent rounds, older ones summarised (seed 000's rules)."""
        names = self.state.names()
        window = ContextWindow(
            target=self.design.target_satisfaction,
            token_limit=_history_tokens(self.config, self.moderator.model),
            model=self.moderator.model,
            label=history_label,
        )
        window.add_round(
            [(names.get(p.perspective, p.perspective), "position", self.compact(p), None) for p in self.state.positions]
        )
        for record in self.state.rounds[: max(0, round_no - 1)]:
            window.add_round(
                [
                    (names.get(p.perspective, p.perspective), p.kind, self.compact(p), p.satisfaction)
                    for p in [*record.arguments, *record.rebuttals]
                ]
            )
        # Window round 1 holds the positions, so response round N looks at window rounds 1..N.
        return window.build(round_no + 1).render()

    def compact(self, speech: Position) -> str:
        """A speech as others are shown it: its stance, its challenge and its first reasons, not every word.

        Small models copy long transcripts instead of answering them; the gist keeps prompts short.
        """
        parsed = parse_speech(speech.text, self.state.names(), own=speech.perspective)
        lines = [f"Stance: {parsed.stance}"] if parsed.stance else []
        if parsed.challenge_text:
            lines.append(f"Challenge: {parsed.challenge_text}")
        lines.extend(f"- {reason}" for reason in parsed.reasons[:2])
        return "\n".join(lines) or speech.text[:400]

    async def say(
        self,
        agent: Agent,
        kind: DesignKind,
        *,
        phase: str,
        round_no: int,
        stage: str,
        key_kind: str | None = None,
        max_tokens: int | None = None,
        acceptable: Callable[[str], str | None] | None = None,
        **values: Any,
    ) -> TurnRecord:
        """One journaled turn of ``agent`` with the design prompt ``kind``, on the model of ``stage`` (tiering)."""
        speaker = agent.role.name
        perspective = self.state.perspectives.get(agent.id)
        model = self.design.model_for(stage, agent.model)
        speaking = replace(agent, model=model) if model != agent.model else agent
        prompt = design_prompt(
            kind,
            style=self.deps.llm.prompt_style(model),
            speaker=MODERATOR if agent.id == MODERATOR else speaker,
            name=perspective.name if perspective else "Moderator",
            focus=perspective.prompt if perspective else "",
            words=self.design.reply_words,
            max_tokens=max_tokens,
            question=self.state.question,
            context=self.state.question.context_text(),
            guidance=self.state.guidance,
            clarification=self.state.clarification.line() if self.state.clarification else "",
            mode=self.state.mode,
            others=[p.name for key, p in self.state.perspectives.items() if key != agent.id],
            **values,
        )
        return await self.ask(
            speaking, prompt, phase=phase, round_no=round_no, kind=key_kind or kind, acceptable=acceptable
        )


def history_label(window_round: int) -> str:
    """The name of a stored history round: the first holds the independent positions, then response rounds 1, 2..."""
    return "Independent positions" if window_round == 1 else f"Round {window_round - 1}"


def _history_tokens(config: Any, model: str) -> int | None:
    """Tokens the verbatim history may take: a quarter of the model's window, at most 3000.

    Older rounds beyond it are summarised. The cap keeps a small local model's prompts short enough to
    evaluate quickly; the question, the context and the reply still fit in what is left.
    """
    from debatecode.llm.tokens import context_window

    window = context_window(model)
    return max(256, min(window // 4, 3000)) if window else None
