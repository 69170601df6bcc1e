"""Reflexion inside the debate: failing candidates reflect and retry before the round's critique.

The loop itself is ``protocol/reflexion.py``'s ``ReflexionLoop``, built from the
session's Reflexion settings (``run.deps.reflexion``) and episodic memory; this
phase only picks the failing authors and runs it on each.
"""

from __future__ import annotations

from debatecode.errors import ConfigError
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.reflexion import ReflexionLoop
from debatecode.protocol.run import DebateRun, gather_all

__all__ = ["ReflexionPhase"]


class ReflexionPhase(Phase):
    """Every author whose candidate the loop does not call done reflects and retries (in parallel)."""

    name = "reflexion"

    async def execute(self, run: DebateRun, round_no: int) -> str:
        settings = run.deps.reflexion
        if settings is None:
            raise ConfigError("the reflexion phase runs only with reflexion enabled", key="reflexion.enabled")
        loop = ReflexionLoop(settings, run.deps.memory)
        candidates = run.state.candidates
        failing = [a for a in run.authors() if a.id in candidates and not loop.done(candidates[a.id])]
        if not failing:
            return "every candidate passes: nothing to reflect on"
        before = {a.id: candidates[a.id].report.passed for a in failing}
        results = await gather_all(*(loop.improve(run, a, phase=self.name, round_no=round_no) for a in failing))
        improved = sum(1 for a, c in zip(failing, results, strict=True) if c.report.passed > before[a.id])
        reflections = sum(len(run.state.reflections.get(a.id, [])) for a in failing)
        return f"{len(failing)} failing candidates reflected ({reflections} reflections so far), {improved} improved"
