"""Proposal: every agent writes a candidate, and each is run against the task."""

from __future__ import annotations

from debatecode.agents.agent import Agent
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.run import Candidate, DebateRun, gather_all

__all__ = ["ProposalPhase"]


class ProposalPhase(Phase):
    """Independent proposals: no agent sees another's code in this phase."""

    name = "proposal"

    async def run(self, run: DebateRun) -> str:
        results = await gather_all(*(self._propose(run, agent) for agent in run.agents))
        for candidate in results:
            run.adopt(candidate)
        passing = sum(1 for c in results if c.report.all_passed)
        return f"{len(results)} candidates, {passing} passing every test"

    async def _propose(self, run: DebateRun, agent: Agent) -> Candidate:
        prompt = agent.prompt("propose", run.task, len(run.agents))
        turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind="propose")
        return await run.evaluate(agent, turn)
