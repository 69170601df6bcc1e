"""Self-evolvement: each author drafts, tests its own code on the visible tests and refines it.

Runs before the debate, so the candidates that enter it have already met the
sandbox once. All authors draft first; when a quorum of the drafts already
pass every visible test and agree on probe inputs (``early_stop``), nobody
refines and the debate is skipped. Otherwise each author refines up to
``self_evolvement.max_iterations`` times while a visible test fails, from the
actual failures; a refinement is kept only if it passes at least as many tests.
When a refinement was not kept, the next one would repeat the same prompt, so it
is sampled afresh (the configured temperature and another seed) instead of
paying for the same reply twice.

When no candidate passes every visible test after that, up to
``self_evolvement.redraws`` rounds of fresh drafts follow: a failing author's
new sample may be right where refining a wrong one is not, and the tokens go
only to the problems that are not solved yet.
"""

from __future__ import annotations

from dataclasses import replace

from debatecode.agents.agent import Agent
from debatecode.protocol.early_stop import early_agreement
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.phases.proposal import draft_candidates, ensure_plan
from debatecode.protocol.run import DebateRun, gather_all
from debatecode.protocol.settings import ConvergenceSettings, SelfEvolvementSettings

__all__ = ["SelfEvolvementPhase"]


class SelfEvolvementPhase(Phase):
    name = "self_evolvement"

    def __init__(
        self,
        settings: SelfEvolvementSettings | None = None,
        *,
        convergence: ConvergenceSettings | None = None,
        resample_temperature: float = 0.7,
    ) -> None:
        self.settings = settings or SelfEvolvementSettings()
        self.convergence = convergence or ConvergenceSettings()
        """``[convergence]``: whether (and on how many probes) the drafts may already settle the debate."""
        self.resample_temperature = resample_temperature
        """``llm.temperature``: the least temperature a refinement asked twice is sampled at."""

    async def execute(self, run: DebateRun, round_no: int) -> str:
        await ensure_plan(run)
        authors = run.authors()
        for candidate in await draft_candidates(run, authors, self.name):
            run.state.adopt(candidate)
        early = await early_agreement(run, self.convergence)
        if early is not None:
            run.state.stop_reason = early
            refinements = [0] * len(authors)
        else:
            refinements = await gather_all(*(self._evolve(run, agent) for agent in authors))
        redrawn = 0 if early is not None else await self._redraw(run, authors)
        passing = sum(1 for c in run.state.candidates.values() if c.all_visible_pass())
        more = f", {redrawn} fresh drafts" if redrawn else ""
        return f"{len(authors)} drafts, {sum(refinements)} refinements{more}; {passing} pass every visible test"

    async def _redraw(self, run: DebateRun, authors: list[Agent]) -> int:
        """Fresh drafts for the failing authors, round after round, until some candidate passes every visible test."""
        drawn = 0
        for attempt in range(1, self.settings.redraws + 1):
            current = run.state.candidates
            if any(c.all_visible_pass() for c in current.values()):
                break
            failing = [a for a in authors if a.id not in current or not current[a.id].all_visible_pass()]
            fresh = [
                replace(a, temperature=max(a.temperature, self.resample_temperature), seed=a.seed + 7919 * attempt)
                for a in failing
            ]
            for candidate in await draft_candidates(run, fresh, self.name, kind=f"redraw-{attempt}"):
                run.state.adopt(candidate)
            drawn += len(fresh)
        return drawn

    async def _evolve(self, run: DebateRun, agent: Agent) -> int:
        refinements = 0
        asked: set[str] = set()
        for iteration in range(1, self.settings.max_iterations + 1):
            current = run.state.candidates[agent.id]
            if current.all_visible_pass():
                break
            report = current.report.visible() if current.code is not None else None
            prompt = agent.prompt(
                "refine", run.task, len(run.authors()), code=current.code or "", report=report, **run.context(agent.id)
            )
            speaker = agent
            if prompt.text in asked:
                # The last refinement was not kept, so this prompt was asked already: the same seed (or greedy
                # decoding) would repeat the same reply. Sample afresh instead.
                speaker = replace(
                    agent,
                    temperature=max(agent.temperature, self.resample_temperature),
                    seed=agent.seed + 1000 * iteration,
                )
            asked.add(prompt.text)
            turn = await run.ask(
                speaker, prompt, phase=self.name, round_no=0, kind=f"refine-{iteration}", want_code=True
            )
            run.state.adopt(await run.evaluate(agent, turn))
            refinements += 1
        return refinements
