"""What a session's live page shows, folded from its stored events.

The page is rendered from this fold, so that it is complete on first paint
(and without a script); ``static/dashboard.js`` then applies each newer event
from the stream to the same elements with the same rules. Keep the two in step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debatecode.store.records import EventRecord
    from debatecode.store.repository import SessionStore

__all__ = [
    "AgentCard",
    "Candidate",
    "LiveView",
    "PendingCheckpoint",
    "PendingGate",
    "PhaseStep",
    "RoundResult",
    "count_tests",
    "fold_events",
    "read_view",
    "reply_snippet",
]

SNIPPET_CHARS = 240
"""How much of an agent's latest reply its card shows."""
MAX_EVENTS = 50_000
"""A page folds at most this many events; the stream brings the rest."""
NOT_AGENTS = ("human", "tool")
"""Providers of turns that are not an agent speaking: decisions at gates and checkpoints, hook and tool runs."""

_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)
_FENCE_MARK = re.compile(r"```\w*")
_SPACE = re.compile(r"\s+")


@dataclass
class AgentCard:
    """One agent (or design perspective) as its card shows it."""

    agent_id: str
    status: str = "waiting"
    phase: str = ""
    snippet: str = ""
    tests_passed: int | None = None
    tests_total: int | None = None


@dataclass
class PhaseStep:
    """One phase of one round, in the timeline."""

    phase: str
    round: int
    done: bool = False
    summary: str = ""
    stage: str = ""
    """Where the step falls: ``round N``, or for round 0 ``before the rounds`` / ``after the rounds``."""


@dataclass
class Candidate:
    """An agent's latest committed code version."""

    agent_id: str
    version_number: int
    tests_passed: int
    tests_total: int
    quality_score: float | None
    commit_sha: str | None


@dataclass
class RoundResult:
    round: int
    leader: str | None
    scores: dict[str, int]
    stop_reason: str | None


@dataclass
class PendingCheckpoint:
    round: int
    summary: str


@dataclass
class PendingGate:
    phase: str
    summary: str
    gate_id: str


@dataclass
class LiveView:
    """The live state of a session as of event ``last_event_id``."""

    agents: dict[str, AgentCard] = field(default_factory=dict)
    phases: list[PhaseStep] = field(default_factory=list)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    rounds: list[RoundResult] = field(default_factory=list)
    votes: dict[str, str | None] = field(default_factory=dict)
    """Voter to the agent it voted for (None: abstained)."""
    checkpoint: PendingCheckpoint | None = None
    gate: PendingGate | None = None
    decisions: list[str] = field(default_factory=list)
    """Checkpoint and gate decisions and escalations, as one line each."""
    turns: int = 0
    tokens: int = 0
    last_event_id: int = 0

    @property
    def leader(self) -> str | None:
        """The leader after the latest round, if a round named one."""
        return self.rounds[-1].leader if self.rounds else None

    def card(self, agent_id: str) -> AgentCard:
        """The card of ``agent_id``, made when first seen."""
        return self.agents.setdefault(agent_id, AgentCard(agent_id))

    def step(self, phase: str, round_no: int) -> PhaseStep:
        """The timeline entry of ``phase`` in ``round_no``, made when first seen."""
        for step in self.phases:
            if (step.phase, step.round) == (phase, round_no):
                return step
        self.phases.append(PhaseStep(phase, round_no, stage=self._stage(round_no)))
        return self.phases[-1]

    def _stage(self, round_no: int) -> str:
        """Round 0 holds the steps before the first round and those after the last: which side this one is on."""
        if round_no > 0:
            return f"round {round_no}"
        return "after the rounds" if any(step.round > 0 for step in self.phases) else "before the rounds"


def count_tests(report: Mapping[str, Any] | None) -> tuple[int, int] | None:
    """(passed, total) of a ``TestReport`` as JSON; None when there is no report."""
    if not isinstance(report, Mapping):
        return None
    passed, total = report.get("passed"), report.get("total")
    if isinstance(passed, int) and isinstance(total, int):
        return passed, total
    cases = report.get("cases")
    if not isinstance(cases, list):
        return None
    return sum(1 for case in cases if isinstance(case, Mapping) and case.get("outcome") == "passed"), len(cases)


def reply_snippet(content: str, limit: int = SNIPPET_CHARS) -> str:
    """The prose of a reply (code blocks left out; the code itself when there is nothing else), on one line, cut."""
    prose = _SPACE.sub(" ", _FENCE.sub(" ", content)).strip() or _SPACE.sub(" ", _FENCE_MARK.sub(" ", content)).strip()
    return prose if len(prose) <= limit else prose[: limit - 1].rstrip() + "…"


def fold_events(events: Iterable[EventRecord], view: LiveView | None = None) -> LiveView:
    """Apply ``events`` (oldest first) to ``view`` (a new one by default) and return it."""
    view = view if view is not None else LiveView()
    for event in events:
        _apply(view, event.type, event.data)
        view.last_event_id = max(view.last_event_id, event.id)
    return view


def read_view(store: SessionStore, session_id: str) -> LiveView:
    """The fold of every stored event of ``session_id`` (up to ``MAX_EVENTS``)."""
    view, read = LiveView(), 0
    while read < MAX_EVENTS:
        batch = store.events(session_id, after=view.last_event_id, limit=500)
        if not batch:
            break
        fold_events(batch, view)
        read += len(batch)
    return view


def _apply(view: LiveView, kind: str, data: Mapping[str, Any]) -> None:
    handler = _HANDLERS.get(kind)
    if handler is not None:
        handler(view, data)


def _session_started(view: LiveView, data: Mapping[str, Any]) -> None:
    for agent_id in data.get("agents") or []:
        view.card(str(agent_id))


def _phase_started(view: LiveView, data: Mapping[str, Any]) -> None:
    view.step(str(data.get("phase", "")), _int(data.get("round")))


def _phase_completed(view: LiveView, data: Mapping[str, Any]) -> None:
    step = view.step(str(data.get("phase", "")), _int(data.get("round")))
    step.done, step.summary = True, str(data.get("summary") or "")


def _agent_status(view: LiveView, data: Mapping[str, Any]) -> None:
    card = view.card(str(data.get("agent_id", "")))
    card.status, card.phase = str(data.get("status", "")), str(data.get("phase") or card.phase)


def _turn_completed(view: LiveView, data: Mapping[str, Any]) -> None:
    turn = data.get("turn")
    if not isinstance(turn, Mapping):
        return
    view.turns += 1
    view.tokens += _int(turn.get("prompt_tokens")) + _int(turn.get("completion_tokens"))
    if turn.get("provider") in NOT_AGENTS or turn.get("agent_role") == "human":
        return
    card = view.card(str(turn.get("agent_id", "")))
    card.snippet = reply_snippet(str(turn.get("content") or ""))
    card.phase = str(turn.get("phase") or card.phase)


def _tests_run(view: LiveView, data: Mapping[str, Any]) -> None:
    counts = count_tests(data.get("report"))
    if counts is not None:
        card = view.card(str(data.get("agent_id", "")))
        card.tests_passed, card.tests_total = counts


def _version_committed(view: LiveView, data: Mapping[str, Any]) -> None:
    version = data.get("version")
    if not isinstance(version, Mapping):
        return
    agent_id = str(version.get("agent_id", ""))
    quality = version.get("quality_score")
    view.candidates[agent_id] = Candidate(
        agent_id=agent_id,
        version_number=_int(version.get("version_number")),
        tests_passed=_int(version.get("tests_passed")),
        tests_total=_int(version.get("tests_total")),
        quality_score=float(quality) if isinstance(quality, int | float) else None,
        commit_sha=str(version["commit_sha"]) if version.get("commit_sha") else None,
    )


def _vote_cast(view: LiveView, data: Mapping[str, Any]) -> None:
    choice = data.get("choice")
    view.votes[str(data.get("voter", ""))] = str(choice) if choice is not None else None


def _round_completed(view: LiveView, data: Mapping[str, Any]) -> None:
    scores = data.get("scores") if isinstance(data.get("scores"), Mapping) else {}
    leader, stop = data.get("leader"), data.get("stop_reason")
    view.rounds.append(
        RoundResult(
            round=_int(data.get("round")),
            leader=str(leader) if leader else None,
            scores={str(k): _int(v) for k, v in (scores or {}).items()},
            stop_reason=str(stop) if stop else None,
        )
    )


def _checkpoint_requested(view: LiveView, data: Mapping[str, Any]) -> None:
    view.checkpoint = PendingCheckpoint(_int(data.get("round")), str(data.get("summary") or ""))


def _checkpoint_decided(view: LiveView, data: Mapping[str, Any]) -> None:
    view.checkpoint = None
    guidance = data.get("guidance")
    view.decisions.append(
        f"checkpoint after round {_int(data.get('round'))}: {data.get('action', '')}"
        + (f" ({guidance})" if guidance else "")
    )


def _gate_requested(view: LiveView, data: Mapping[str, Any]) -> None:
    view.gate = PendingGate(str(data.get("phase", "")), str(data.get("summary") or ""), str(data.get("gate_id") or ""))


def _gate_decided(view: LiveView, data: Mapping[str, Any]) -> None:
    view.gate = None
    reviewer, reason = data.get("reviewer"), data.get("reason")
    view.decisions.append(
        f"{data.get('phase', '')} gate: {data.get('decision', '')}"
        + (f" by {reviewer}" if reviewer else "")
        + (f" ({reason})" if reason else "")
    )


def _escalated(view: LiveView, data: Mapping[str, Any]) -> None:
    view.decisions.append(f"escalated: {data.get('reason', '')}")


def _session_finished(view: LiveView, data: Mapping[str, Any]) -> None:
    view.checkpoint, view.gate = None, None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_HANDLERS = {
    "SessionStarted": _session_started,
    "PhaseStarted": _phase_started,
    "PhaseCompleted": _phase_completed,
    "AgentStatusChanged": _agent_status,
    "TurnCompleted": _turn_completed,
    "TestsRun": _tests_run,
    "CodeVersionCommitted": _version_committed,
    "VoteCast": _vote_cast,
    "RoundCompleted": _round_completed,
    "CheckpointRequested": _checkpoint_requested,
    "CheckpointDecided": _checkpoint_decided,
    "GateRequested": _gate_requested,
    "GateDecided": _gate_decided,
    "Escalated": _escalated,
    "SessionFinished": _session_finished,
}
