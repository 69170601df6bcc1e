"""Critique: failing candidates are revised, fed with their real failure output.

In this first protocol the critic is execution itself: each agent sees its
own code and the verbatim test failures from the sandbox, explains the bug
and revises. A revision replaces the agent's code only if it passes at least
as many tests.
"""

from __future__ import annotations

from debatecode.agents.agent import Agent
from debatecode.protocol.events import PhaseStarted
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.run import Candidate, DebateRun, gather_all

__all__ = ["CritiquePhase"]


class CritiquePhase(Phase):
    """Up to ``config.rounds`` critique-and-revise rounds for failing candidates."""

    name = "critique"

    async def run(self, run: DebateRun) -> str:
        revised = 0
        for round_no in range(1, run.config.rounds + 1):
            failing = [a for a in run.agents if not run.candidates[a.id].report.all_passed]
            if not failing:
                break
            if round_no > 1:
                run.bus.emit(PhaseStarted(run.session_id, self.name, round_no))
            results = await gather_all(*(self._revise(run, agent, round_no) for agent in failing))
            for candidate in results:
                run.adopt(candidate)
            revised += len(results)
            run.rounds_done = round_no
        passing = sum(1 for c in run.candidates.values() if c.report.all_passed)
        return f"{revised} revisions over {run.rounds_done} rounds, {passing} candidates passing every test"

    async def _revise(self, run: DebateRun, agent: Agent, round_no: int) -> Candidate:
        current = run.candidates[agent.id]
        report = current.report if current.code is not None else None
        prompt = agent.prompt("revise", run.task, len(run.agents), code=current.code or "", report=report)
        turn = await run.ask(agent, prompt, phase=self.name, round_no=round_no, kind="revise")
        return await run.evaluate(agent, turn)
