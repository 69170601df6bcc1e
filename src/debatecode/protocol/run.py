"""``DebateRun``: what one code debate's phases are given — who debates, what is known, and the services.

A run is three things side by side:

- ``state`` (:class:`~debatecode.protocol.debate_state.DebateState`): typed
  reviews, risks, dissents, the outcome, clarifications, guidance...;
- ``deps`` (:class:`~debatecode.protocol.deps.DebateDeps`): the model client,
  the event bus, the journal, the code workspace, the topology, ordering and
  budgets, memory and wisdom;
- ``journal`` (:class:`~debatecode.protocol.journal.Journal`): every turn by a
  key that survives a crash and resume.

Turn-taking (``ask``, ``tool_turn``, ``record``) is the generic
:class:`~debatecode.protocol.turns.SessionRun`'s; this class adds the code: the
workspace, candidates, the leader, and pulling code out of replies.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debatecode.agents.prompts import Prompt
from debatecode.execution.cleaning import clean_solution
from debatecode.llm.parsing import extract_code
from debatecode.protocol.debate_state import DebateState, DroppedAgent
from debatecode.protocol.deps import DebateDeps
from debatecode.protocol.journal import turn_key
from debatecode.protocol.roster import AUTHOR_ROLES
from debatecode.protocol.turns import SessionRun, gather_all

if TYPE_CHECKING:
    from debatecode.agents.agent import Agent
    from debatecode.protocol.workspace import Candidate, CodeWorkspace
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
    def ws(self) -> CodeWorkspace:
        return self.deps.workspace

    @property
    def task(self) -> Task:
        return self.deps.workspace.task

    # -- participants -----------------------------------------------------

    def authors(self) -> list[Agent]:
        """The agents that write candidates (generators or implementers)."""
        return [a for a in self.agents if a.role.name in AUTHOR_ROLES]

    def leader(self) -> Candidate | None:
        """The candidate passing the most tests (ties: roster order)."""
        return self.ws.leader(self.order())

    def drop_agent(self, agent_id: str, reason: str) -> None:
        """Take a failed agent out of the debate; its topology subtree is rebalanced to its siblings."""
        topology = self.deps.topology
        if topology is not None and agent_id in topology and len(topology) > 1:
            topology.remove(agent_id)
        self.agents = [a for a in self.agents if a.id != agent_id]
        self.ws.candidates.pop(agent_id, None)
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
