"""Self-evolvement: each author drafts, tests its own code on the visible tests and refines it.

Runs before the debate, so the candidates that enter it have already met the
sandbox once. Each author refines up to ``self_evolvement.max_iterations``
times while a visible test fails; a refinement is kept only if it passes at
least as many tests.
"""

from __future__ import annotations

from debatecode.agents.agent import Agent
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.phases.proposal import draft_candidate, ensure_plan
from debatecode.protocol.run import DebateRun, gather_all

__all__ = ["SelfEvolvementPhase"]


class SelfEvolvementPhase(Phase):
    name = "self_evolvement"

    async def execute(self, run: DebateRun, round_no: int) -> str:
        await ensure_plan(run)
        refinements = await gather_all(*(self._evolve(run, agent) for agent in run.authors()))
        passing = sum(1 for c in run.ws.candidates.values() if c.all_visible_pass())
        return f"{len(refinements)} drafts, {sum(refinements)} refinements; {passing} pass every visible test"

    async def _evolve(self, run: DebateRun, agent: Agent) -> int:
        run.ws.adopt(await draft_candidate(run, agent, self.name))
        refinements = 0
        for iteration in range(1, run.config.self_evolvement.max_iterations + 1):
            current = run.ws.candidates[agent.id]
            if current.all_visible_pass():
                break
            report = current.report.visible() if current.code is not None else None
            prompt = agent.prompt(
                "refine", run.task, len(run.authors()), code=current.code or "", report=report, **run.context(agent.id)
            )
            turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind=f"refine-{iteration}", want_code=True)
            run.ws.adopt(await run.ws.evaluate(agent, turn))
            refinements += 1
        return refinements
