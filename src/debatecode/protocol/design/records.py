"""Typed records of a design debate: perspectives, positions, rounds, gate flags, polls and the decision record.

A design debate argues over a question (not code) and ends in an architecture
decision record (ADR). Everything a design debate decides is one of these
models; the engine journals the turns that produced them, so a resumed debate
rebuilds them from its stored turns.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from debatecode.agents.perspectives import Perspective

__all__ = [
    "Clarification",
    "Confidence",
    "DecisionRecord",
    "DesignMode",
    "Dissent",
    "Escalation",
    "EscalationOption",
    "GateFlag",
    "GateFlagKind",
    "PatchItem",
    "PatchSeverity",
    "Perspective",
    "PerspectiveSummary",
    "PollResult",
    "Position",
    "QuestionAnalysis",
    "Recommendation",
    "RejectedAlternative",
    "RiskEntry",
    "RoundRecord",
    "RoundSummary",
    "SpeechKind",
]

DesignMode = Literal["deliberative", "patchlist"]
Confidence = Literal["HIGH", "MEDIUM", "LOW", "HUMAN"]
"""HIGH, MEDIUM and LOW are measured from how the debate ended; HUMAN: a person decided at an escalation."""
SpeechKind = Literal["position", "argument", "rebuttal"]
GateFlagKind = Literal["repetition", "circular", "stalemate", "converged", "poll", "off_topic", "scope_creep", "muted"]
PatchSeverity = Literal["BLOCKING", "HIGH", "MEDIUM-LOW"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QuestionAnalysis(_Record):
    """The moderator's reading of the question: what it is about and how long to debate it."""

    domain: str
    """architecture, data, security, performance, ux, operations, process or general."""
    constraints: list[str] = Field(default_factory=list)
    """Implicit constraints found in the question ("ship fast" → simplicity weighs more)."""
    complexity: Literal["low", "medium", "high"] = "medium"
    rounds: int
    """Response rounds planned (within min and max rounds)."""
    perspectives: list[str]
    """Keys of the chosen perspectives, the always-present ones included."""
    reason: str = ""
    """Why these perspectives (one line per choice)."""


class Position(_Record):
    """One debater's speech: a phase-1 position, a round argument or a rebuttal."""

    perspective: str
    """Perspective key."""
    agent: str
    round: int
    """0 for the phase-1 position; response rounds count from 1."""
    kind: SpeechKind
    text: str
    stance: str = ""
    """The recommendation in one line, as the debater stated it (or its first sentence)."""
    satisfaction: int | None = None
    """0-100: how satisfied the debater is with where the debate stands; None in phase 1."""
    challenges: list[str] = Field(default_factory=list)
    """Perspectives this speech challenges by name."""
    risks: list[str] = Field(default_factory=list)
    """Risks raised in this speech."""
    calls_poll: bool = False
    """The debater asked to move to synthesis (a convergence poll)."""
    rejected_as_rubber_stamp: bool = False
    """The first reply challenged nobody or gave no score and was re-asked; this is the second."""
    turn_id: str | None = None


class GateFlag(_Record):
    """Something the gate reviewer noticed after a round."""

    kind: GateFlagKind
    round: int
    detail: str
    agents: list[str] = Field(default_factory=list)
    value: float | None = None
    """The measured number behind the flag (overlap share, score gain, yes share...)."""
    speech: SpeechKind | None = None
    """For a flag on one speech (``off_topic``): which of the perspective's speeches of the round."""


class PollResult(_Record):
    """A convergence poll: every debater answers yes or no to moving on to synthesis."""

    round: int
    called_by: str
    votes: dict[str, bool]
    """Perspective key → yes."""
    share: float
    passed: bool
    """At least two thirds said yes."""


class RoundRecord(_Record):
    """One response round: arguments, rebuttals, the moderator's summary and what the gate reviewer flagged."""

    round: int
    arguments: list[Position] = Field(default_factory=list)
    rebuttals: list[Position] = Field(default_factory=list)
    summary: str = ""
    flags: list[GateFlag] = Field(default_factory=list)
    poll: PollResult | None = None
    guidance: str | None = None
    """Human guidance given at the checkpoint after this round."""

    def scores(self) -> dict[str, int]:
        """Each perspective's latest satisfaction in this round (rebuttals override arguments)."""
        found: dict[str, int] = {}
        for speech in [*self.arguments, *self.rebuttals]:
            if speech.satisfaction is not None:
                found[speech.perspective] = speech.satisfaction
        return found


class EscalationOption(_Record):
    label: str
    """A, B, C..."""
    text: str
    kind: Literal["position", "guidance"] = "position"
    """``position``: one of the positions the debaters hold; ``guidance``: continue with the human's guidance."""
    stance: str = ""
    """The position itself (``position`` options), without the names of who holds it."""
    holders: list[str] = Field(default_factory=list)
    """Display names of the perspectives holding the position."""


class Escalation(_Record):
    """A debate the debaters could not settle, put to a human."""

    reason: str
    """``max rounds``, ``stalemate``, ``circular`` or ``fundamental disagreement``, with detail."""
    positions: dict[str, str]
    """Perspective name → its final stance."""
    options: list[EscalationOption]
    choice: str | None = None
    """The chosen option's label, or None when nobody answered (a non-interactive run)."""
    guidance: str | None = None
    decided_by: Literal["human", "nobody"] = "nobody"
    continued_in_round: int | None = None
    """The person chose to continue with guidance: the debate ran this round with it, then decided again."""


class PerspectiveSummary(_Record):
    name: str
    key_arguments: list[str]
    trade_offs: str = ""
    final_satisfaction: int | None = None
    responsibilities: list[str] = Field(default_factory=list)
    """What this perspective owns in the design (seed 000's per-agent responsibilities)."""
    interfaces: list[str] = Field(default_factory=list)
    """The interfaces it needs or defines."""


class RoundSummary(_Record):
    """One response round in the record: what the moderator said, the scores and the gate's verdict."""

    round: int
    summary: str = ""
    scores: dict[str, int] = Field(default_factory=dict)
    """Satisfaction by perspective name."""
    decision: str = ""
    """The gate reviewer's action and reason (``continue: min rounds (2) not reached``)."""
    guidance: str | None = None
    notes: list[str] = Field(default_factory=list)
    """Off-topic speeches and mutings of the round."""


class Recommendation(_Record):
    text: str
    confidence: Confidence
    confidence_reason: str
    caveats: list[str] = Field(default_factory=list)


class RejectedAlternative(_Record):
    option: str
    reason: str


class Dissent(_Record):
    perspectives: list[str]
    """Display names of every perspective holding it (de-duplicated dissents merge their holders)."""
    text: str


class RiskEntry(_Record):
    risk: str
    likelihood: Literal["low", "medium", "high"] = "medium"
    impact: Literal["low", "medium", "high"] = "medium"
    mitigation: str = ""
    owner: str = ""
    """The perspective that raised it."""


class PatchItem(_Record):
    """One item of a patchlist review against the given context."""

    id: str
    """B1, H2, M3..."""
    severity: PatchSeverity
    issue: str
    change: str = ""
    """The proposed change."""
    raised_by: list[str] = Field(default_factory=list)


class DecisionRecord(_Record):
    """The synthesis: an ADR (deliberative mode) or a patchlist, and how the debate got there."""

    number: int
    slug: str
    title: str
    date: str
    """ISO date of the synthesis."""
    debate_id: str
    mode: DesignMode = "deliberative"
    status: Literal["accepted", "proposed", "escalated"] = "proposed"
    question: str
    context: str = ""
    """The context files and the moderator's reading of the question, short."""
    perspectives: list[PerspectiveSummary]
    agreement: list[str] = Field(default_factory=list)
    tensions: list[str] = Field(default_factory=list)
    recommendation: Recommendation
    rejected: list[RejectedAlternative] = Field(default_factory=list)
    dissents: list[Dissent] = Field(default_factory=list)
    risks: list[RiskEntry] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    patches: list[PatchItem] = Field(default_factory=list)
    """Patchlist mode: the items against the context."""
    escalation: Escalation | None = None
    continued: list[Escalation] = Field(default_factory=list)
    """Earlier escalations at which a person chose to continue with guidance (each ran one more round)."""
    rounds: int = 0
    stop_reason: str = ""
    scores: dict[str, int] = Field(default_factory=dict)
    """Final satisfaction by perspective name."""
    corrections: list[str] = Field(default_factory=list)
    """Dissents a participant said were misrepresented, and corrected in the correction round."""
    round_summaries: list[RoundSummary] = Field(default_factory=list)
    implementation_notes: list[str] = Field(default_factory=list)
    moderator_draft: str = ""
    """The moderator's recommendation when a person decided instead: kept as context, not as the decision."""
    participation: list[str] = Field(default_factory=list)
    """Who did not take part or was muted, and why (the Contrarian and the Moonshot when absent)."""


class Clarification(BaseModel):
    """A clarifying question the moderator asked about a vague design question, and how it was settled."""

    model_config = ConfigDict(extra="forbid")

    question: str
    """What the moderator asked."""
    reasons: list[str]
    """Why the design question was found vague."""
    assumption: str
    """What the debate assumes when nobody answers."""
    answer: str | None = None
    """The human's answer, or None when nobody answered."""
    answered_by: Literal["human", "nobody"] = "nobody"

    @property
    def settled(self) -> str:
        """What the debate goes on: the answer, else the assumption."""
        return self.answer if self.answer else self.assumption

    def line(self) -> str:
        """One paragraph for prompts and the decision record's context."""
        if self.answer:
            return f'Clarification: the moderator asked "{self.question}"; the human answered: {self.answer}'
        return (
            f'Assumption: the moderator asked "{self.question}" and nobody answered, '
            f"so the debate assumes: {self.assumption}"
        )
