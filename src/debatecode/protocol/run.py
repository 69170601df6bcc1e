"""``DebateRun``: what one code debate's phases are given — who debates, what is known, and the services.

A run is three things side by side:

- ``state`` (:class:`~debatecode.protocol.state.DebateState`): what the
  session changes as it goes — candidates, exchanged, adjudicated and Red
  tests, committed versions, reviews, risks, dissents, the outcome...;
- ``deps`` (:class:`~debatecode.protocol.deps.DebateDeps`, frozen): the
  services it calls — the model client, the event bus, the journal, the code
  workspace (tester and prober, worktree, hooks), the topology, ordering
  and budgets, memory, wisdom and the Reflexion loop;
- ``journal`` (:class:`~debatecode.protocol.journal.Journal`): every turn by a
  key that survives a crash and resume.

Turn-taking (``ask``, ``tool_turn``, ``record``) is the generic
:class:`~debatecode.protocol.session_run.SessionRun`'s; this class adds the code:
evaluating candidates against the state's suites, the leader, and pulling code
out of replies.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debatecode.agents.prompts import Prompt
from debatecode.execution.cleaning import clean_solution
from debatecode.execution.generated import GeneratedSuite
from debatecode.execution.results import TestReport
from debatecode.llm.parsing import extract_code
from debatecode.protocol.deps import DebateDeps
from debatecode.protocol.journal import turn_key
from debatecode.protocol.roster import AUTHOR_ROLES
from debatecode.protocol.session_run import SessionRun, gather_all
from debatecode.protocol.state import Candidate, DebateState, DroppedAgent
from debatecode.store.records import TurnRecord

if TYPE_CHECKING:
    from debatecode.agents.agent import Agent
    from debatecode.protocol.workspace import CodeWorkspace
    from debatecode.task import Task

__all__ = ["AUTHOR_ROLES", "COMPETITOR_ROLES", "DebateRun", "gather_all", "turn_key"]

logger = logging.getLogger(__name__)

COMPETITOR_ROLES = frozenset({*AUTHOR_ROLES, "moonshot"})
"""Roles whose code competes for the win (authors, and the Moonshot's ambitious versions)."""


@dataclass
class DebateRun(SessionRun):
    """One code-debate session as its phases see it: participants, ``state``, ``deps`` and the journal."""

    state: DebateState
    deps: DebateDeps

    @property
    def workspace(self) -> CodeWorkspace:
        """The code services: tester and prober, the worktree, hooks."""
        return self.deps.workspace

    @property
    def task(self) -> Task:
        return self.deps.workspace.task

    # -- judging code -------------------------------------------------------

    async def evaluate(self, agent: Agent, turn: TurnRecord, *, label: str = "") -> Candidate:
        """Test the turn's code against the current suites, record the turn and commit its version.

        Raises:
            SandboxError, VersionControlError: see ``CodeWorkspace.evaluate``.
        """
        return await self.deps.workspace.evaluate(self.state, agent, turn, label=label)

    async def evaluate_code(self, agent: Agent, turn: TurnRecord, code: str, *, label: str) -> Candidate:
        """Test and commit a second piece of code from an already recorded turn (e.g. a stepping stone)."""
        return await self.deps.workspace.evaluate_code(self.state, agent, turn, code, label=label)

    async def run_tests(self, code: str | None, *, suites: tuple[GeneratedSuite, ...] | None = None) -> TestReport:
        """Run ``code`` against the visible checks and ``suites`` (default: the state's current suites)."""
        return await self.deps.workspace.run_tests(code, self.state.suites() if suites is None else suites)

    async def refresh(self) -> None:
        """Re-run every current candidate against the state's current suites."""
        await self.deps.workspace.refresh(self.state)

    async def revalidate_exchanged(self) -> list[str]:
        """Retract exchanged tests their authors no longer stand by; the disputed calls."""
        return await self.deps.workspace.revalidate_exchanged(self.state)

    def ranking(self, *, unblocked: bool = False) -> list[Candidate]:
        """Candidates with code, best first (ties: roster order)."""
        return self.state.ranking(self.order(), unblocked=unblocked)

    # -- participants -----------------------------------------------------

    def authors(self) -> list[Agent]:
        """The agents that write candidates (generators or implementers)."""
        return [a for a in self.agents if a.role.name in AUTHOR_ROLES]

    def leader(self) -> Candidate | None:
        """The candidate passing the most tests (ties: roster order)."""
        return self.state.leader(self.order())

    def drop_agent(self, agent_id: str, reason: str) -> None:
        """Take a failed agent out of the debate; its topology subtree is rebalanced to its siblings."""
        topology = self.deps.topology
        if topology is not None and agent_id in topology and len(topology) > 1:
            topology.remove(agent_id)
        self.agents = [a for a in self.agents if a.id != agent_id]
        self.state.candidates.pop(agent_id, None)
        self.state.dropped.append(DroppedAgent(agent=agent_id, reason=reason))
        self.state.add_risk(agent_id, f"dropped from the debate: {reason}")
        logger.warning("%s dropped from the debate: %s", agent_id, reason)

    def context(self, agent_id: str | None = None) -> dict[str, Any]:
        """What prompts show: clarifications, the plan, human guidance, and the validation feedback on ``agent_id``'s code."""
        state = self.state
        return {
            "clarifications": state.clarifications,
            "plan": state.plan,
            "guidance": state.guidance,
            "feedback": state.feedback.get(agent_id) if agent_id else None,
            "lessons": state.lessons,
        }

    def gate_view(self, phase: str) -> tuple[str, dict[str, object]]:
        leader = self.leader()
        if leader is None:
            summary = f"after {phase}: no candidate has code"
        else:
            summary = f"after {phase}: {leader.agent_id} leads with {leader.report.passed}/{leader.report.total} tests passing"
        artifacts: dict[str, object] = {
            "leader": leader.agent_id if leader else None,
            "code": leader.code if leader else None,
            "tests": {"passed": leader.report.passed, "total": leader.report.total} if leader else None,
            "scores": {item.reviewer: item.satisfaction for item in self.state.reviews[-6:]},
        }
        return summary, artifacts

    def _code_from(self, text: str, prompt: Prompt) -> tuple[str | None, tuple[str, ...]]:
        code = extract_code(text, entry_point=self.task.entry_point, prompt_prefix=prompt.prefix)
        if code is None:
            return None, ()
        # The one place model code enters: solution.py holds no example calls.
        cleaned = clean_solution(code, self.task.entry_point)
        code = cleaned.code
        if prompt.style == "chat":
            code = self.task.with_prompt_context(code)
        return code, cleaned.removed
