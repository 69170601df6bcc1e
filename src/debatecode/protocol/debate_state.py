"""``DebateState``: what a session has learned so far, as typed records.

Phases read and extend it; the engine turns it into the stored outcome and the
report. It holds no services (those are in :class:`~debatecode.protocol.deps.DebateDeps`)
and no turns (those are in the :class:`~debatecode.protocol.journal.Journal`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "DebateState",
    "Dissent",
    "DroppedAgent",
    "Outcome",
    "RankedCandidate",
    "ReviewItem",
    "Risk",
    "VoteSummary",
]


class ReviewItem(BaseModel):
    """One reviewer's verdict on the leading candidate in one round."""

    model_config = ConfigDict(extra="forbid")

    round: int
    reviewer: str
    role: str
    target: str
    satisfaction: int
    scored: bool
    """False when the reply gave no score and the neutral score stands in."""
    concerns: list[str]
    summary: str


class Dissent(BaseModel):
    """A position that disagrees with the outcome, attributed to a role."""

    model_config = ConfigDict(extra="forbid")

    role: str
    agent: str
    phase: str
    text: str


class Risk(BaseModel):
    """An entry of the risk register."""

    model_config = ConfigDict(extra="forbid")

    source: str
    severity: Literal["info", "low", "medium", "high"] = "medium"
    description: str
    status: Literal["open", "mitigated", "rejected"] = "open"


class DroppedAgent(BaseModel):
    """An agent taken out of the debate after its model failed."""

    agent: str
    reason: str


class RankedCandidate(BaseModel):
    """One row of the final ranking: tests passed, and the score vector that ordered it."""

    agent: str
    passed: int
    total: int
    score: list[int]


class VoteSummary(BaseModel):
    """How a vote went: the method's count, the winner's first-choice share and whether it reached the threshold."""

    model_config = ConfigDict(extra="allow")
    """Further fields of the voting method's result (``tie_broken``, ``fallback_used``...) are kept as they are."""

    method: str
    tallies: dict[str, float]
    share: float
    threshold_reached: bool


class Outcome(BaseModel):
    """The session's result as stored with it: the winner, how it was chosen and why the debate stopped.

    Only the fields a session actually set are stored (``to_record``), so
    sessions stored before this model existed read and compare the same.
    """

    model_config = ConfigDict(validate_assignment=True)

    winner: str | None = None
    version_id: str | None = None
    turn_id: str | None = None
    passed: int | None = None
    total: int | None = None
    method: str = "none"
    reason: str = ""
    ranking: list[RankedCandidate] = []
    label: str = ""
    vote: VoteSummary | None = None
    blocked: bool = False
    explanation: str = ""
    stop_reason: str = ""
    escalation: str | None = None
    planning_style: str = ""
    topology: str = ""

    def to_record(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


@dataclass
class DebateState:
    """Everything a session has decided or been told so far (phases read and extend it)."""

    planning_style: str = "dpde"
    planning_reason: str = ""
    clarifications: list[dict[str, str]] = field(default_factory=list)
    """Questions and answers from dehallucination."""
    plan: str | None = None
    """The Designer's plan (CPDE), shown to implementers."""
    guidance: list[str] = field(default_factory=list)
    """Human guidance from checkpoints, shown to every later prompt."""
    lessons: list[str] = field(default_factory=list)
    """Wisdom from earlier sessions, retrieved for this task and shown to every prompt."""
    feedback: dict[str, str] = field(default_factory=dict)
    """Validation feedback from the hook points, by the agent whose code it is about."""
    reflections: dict[str, list[Any]] = field(default_factory=dict)
    """Reflexion reflections by agent, oldest first (``protocol.reflexion.Reflection``)."""
    reviews: list[ReviewItem] = field(default_factory=list)
    dissents: list[Dissent] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    dropped: list[DroppedAgent] = field(default_factory=list)
    outcome: Outcome = field(default_factory=Outcome)
    rounds_done: int = 0
    agreement_checks: int = 0
    """Early-stop agreement checks taken so far: numbers their journal keys, so a resume replays each in turn."""
    stop_reason: str = ""
    escalation: str | None = None
    ended_by_human: bool = False

    def scores(self, round_no: int) -> dict[str, int]:
        """Each reviewer's satisfaction in ``round_no``."""
        return {r.reviewer: r.satisfaction for r in self.reviews if r.round == round_no}

    def add_risk(self, source: str, description: str, *, severity: str = "medium", status: str = "open") -> None:
        self.risks.append(
            Risk.model_validate({"source": source, "severity": severity, "description": description, "status": status})
        )
