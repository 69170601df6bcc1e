"""``DebateState``: what a session has learned so far — candidates, generated tests and typed records.

Phases read and extend it; the engine turns it into the stored outcome and the
report. It holds no services (the tester, the prober, the worktree and the hooks are
in :class:`~debatecode.protocol.deps.DebateDeps`) and no turns (those are in
the :class:`~debatecode.protocol.journal.Journal`), so a test can build one by
hand and give it to a phase.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from debatecode.execution.generated import (
    AdjudicatedTest,
    ExchangedTest,
    GeneratedSuite,
    RedTest,
    adjudicated_suite,
    exchanged_suite,
    red_suite,
)
from debatecode.execution.results import TestReport
from debatecode.store.records import CodeVersionRecord

__all__ = [
    "Candidate",
    "DebateState",
    "Dissent",
    "DroppedAgent",
    "Outcome",
    "RankedCandidate",
    "ReviewItem",
    "Risk",
    "VoteSummary",
]

logger = logging.getLogger(__name__)


@dataclass
class Candidate:
    """One agent's code and what running it showed."""

    agent_id: str
    code: str | None
    report: TestReport
    turn_id: str | None = None
    version_id: str | None = None
    phase: str = ""
    round: int = 0
    label: str = ""
    """What the candidate is, when not a plain revision (e.g. ``moonshot`` or ``stepping stone``)."""
    blocked: bool = False
    """A blocking validation at a hook point failed: the debate does not converge on this version."""

    @property
    def passed(self) -> int:
        return self.report.passed

    @property
    def visible_passed(self) -> int:
        return self.report.passed_in("visible")

    def score(self) -> tuple[int, int, int, int]:
        """Ranking key: visible tests first, then adjudicated, then exchanged, then Red-team tests."""
        report = self.report
        return (
            report.passed_in("visible"),
            report.passed_in("adjudicated"),
            report.passed_in("exchanged"),
            report.passed_in("red"),
        )

    def all_visible_pass(self) -> bool:
        """No visible test fails (vacuously true for a task without visible tests, as HumanEval prompts can be)."""
        return self.code is not None and self.report.passed_in("visible") == self.report.total_in("visible")


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

    # -- the code side: candidates, generated tests, committed versions ------------------------

    candidates: dict[str, Candidate] = field(default_factory=dict)
    """Each agent's current code."""
    history: dict[str, list[Candidate]] = field(default_factory=dict)
    """Every candidate an agent produced, adopted or not, oldest first."""
    alternatives: list[Candidate] = field(default_factory=list)
    """Tested code that is not an agent's current candidate (the Moonshot's second version, rejected changes)."""
    exchanged: list[ExchangedTest] = field(default_factory=list)
    retracted: set[str] = field(default_factory=set)
    """Exchanged tests no longer counted: their author changed its mind, or agents dispute the behaviour."""
    red_tests: list[RedTest] = field(default_factory=list)
    adjudicated: list[AdjudicatedTest] = field(default_factory=list)
    """Answers a majority of debaters gave, apart, for inputs the leading candidates disagreed on."""
    versions: dict[str, CodeVersionRecord] = field(default_factory=dict)
    """Committed code versions by turn id (a resumed session starts with the stored ones and re-uses them)."""
    next_version: int = 1

    def scores(self, round_no: int) -> dict[str, int]:
        """Each reviewer's satisfaction in ``round_no``."""
        return {r.reviewer: r.satisfaction for r in self.reviews if r.round == round_no}

    def add_risk(self, source: str, description: str, *, severity: str = "medium", status: str = "open") -> None:
        self.risks.append(
            Risk.model_validate({"source": source, "severity": severity, "description": description, "status": status})
        )

    # -- suites -------------------------------------------------------------

    def active_exchanged(self) -> list[ExchangedTest]:
        """Exchanged tests that count: trusted, not retracted by their author, not disputed."""
        return [t for t in self.exchanged if t.trusted and t.name not in self.retracted]

    def suites(self) -> tuple[GeneratedSuite, ...]:
        """The generated suites every candidate now runs against: adjudicated answers, active exchanged tests, accepted attacks."""
        suites: list[GeneratedSuite] = []
        if self.adjudicated:
            suites.append(adjudicated_suite(self.adjudicated))
        trusted = self.active_exchanged()
        if trusted:
            suites.append(exchanged_suite(trusted))
        if self.red_tests:
            suites.append(red_suite(self.red_tests))
        return tuple(suites)

    # -- candidates ---------------------------------------------------------

    def adopt(self, candidate: Candidate) -> bool:
        """Make ``candidate`` its agent's current code unless it passes fewer of the tests both ran.

        Returns whether it was adopted. Every candidate is kept in ``history``.
        """
        self.history.setdefault(candidate.agent_id, []).append(candidate)
        current = self.candidates.get(candidate.agent_id)
        if current is not None and not _no_regression(current, candidate):
            logger.info(
                "%s's new code passes fewer tests than its current code; keeping the current code", candidate.agent_id
            )
            self.alternatives.append(candidate)
            return False
        self.candidates[candidate.agent_id] = candidate
        return True

    def ranking(self, order: list[str], *, unblocked: bool = False) -> list[Candidate]:
        """Candidates with code, best first: by visible, exchanged, Red-team tests, then agent order.

        With ``unblocked``, versions a blocking validation rejected are left out (unless every one is blocked).
        """
        position = {agent_id: i for i, agent_id in enumerate(order)}
        with_code = [c for c in self.candidates.values() if c.code is not None]
        if unblocked and any(not c.blocked for c in with_code):
            with_code = [c for c in with_code if not c.blocked]
        return sorted(with_code, key=lambda c: (tuple(-x for x in c.score()), position.get(c.agent_id, len(position))))

    def leader(self, order: list[str]) -> Candidate | None:
        ranked = self.ranking(order)
        return ranked[0] if ranked else None

    # -- versions -----------------------------------------------------------

    def version_of(self, candidate: Candidate) -> CodeVersionRecord | None:
        return next((v for v in self.versions.values() if v.id == candidate.version_id), None)

    def quality_summary(self, candidate: Candidate) -> str | None:
        """A one-line quality summary of ``candidate``'s committed version, when one was measured."""
        version = self.version_of(candidate)
        if version is None or version.quality_score is None:
            return None
        return str(version.metrics.get("summary") or f"quality {version.quality_score:.2f}")


def _no_regression(current: Candidate, new: Candidate) -> bool:
    """True when ``new`` passes at least as many visible tests, and no fewer of the tests both reports share."""
    if new.code is None:
        return current.code is None
    if new.report.passed_in("visible") < current.report.passed_in("visible"):
        return False
    shared = {c.name for c in current.report.cases} & {c.name for c in new.report.cases}
    current_passed = len(shared & current.report.passed_names())
    new_passed = len(shared & new.report.passed_names())
    return new_passed >= current_passed
