"""Optimization: performance and refactoring agents improve the leader, under a no-regression rule.

Each optimizer (``optimization.roles``, in order) proposes a faster or cleaner
version of the current leader. The change is kept only if every test the
leader passed still passes; otherwise it is recorded as a rejected
alternative. A leader that fails a visible test is not optimized at all.
"""

from __future__ import annotations

from debatecode.hooks import HookPoint
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.run import DebateRun
from debatecode.protocol.settings import OptimizationSettings
from debatecode.protocol.state import Candidate
from debatecode.protocol.validation import validate

__all__ = ["OptimizationPhase"]


def keeps_every_pass(before: Candidate, after: Candidate) -> bool:
    """True when ``after`` passes every test ``before`` passed (and has code)."""
    return after.code is not None and before.report.passed_names() <= after.report.passed_names()


class OptimizationPhase(Phase):
    name = "optimization"

    def __init__(self, settings: OptimizationSettings | None = None) -> None:
        self.settings = settings or OptimizationSettings()

    async def execute(self, run: DebateRun, round_no: int) -> str:
        notes: list[str] = []
        first = run.leader()
        if first is not None and not first.all_visible_pass():
            # Optimizing code that is still wrong spends tokens on the wrong problem; repair is the debate's job.
            return f"skipped: the leader {first.agent_id} fails a visible test"
        for role in self.settings.roles:
            agent = run.first_with_role(role)
            leader = run.leader()
            if agent is None or leader is None:
                continue
            prompt = agent.prompt(
                "optimize",
                run.task,
                code=leader.code,
                report=leader.report,
                quality=run.state.quality_summary(leader),
                **run.context(leader.agent_id),
            )
            turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind=f"optimize-{role}", want_code=True)
            attempt = await run.evaluate(agent, turn, label=f"optimized by {agent.role.title}")
            if attempt.code is not None and attempt.code.strip() == (leader.code or "").strip():
                notes.append(f"{agent.id}: no change")
                continue
            if keeps_every_pass(leader, attempt):
                attempt.agent_id = leader.agent_id
                run.state.candidates[leader.agent_id] = attempt
                run.state.history.setdefault(leader.agent_id, []).append(attempt)
                notes.append(f"{agent.id}: kept ({attempt.report.passed}/{attempt.report.total})")
            else:
                run.state.alternatives.append(attempt)
                notes.append(f"{agent.id}: discarded, a test regressed")
        leader = run.leader()
        if leader is not None:
            outcomes = await validate(run, HookPoint.POST_OPTIMIZATION, [leader])
            if outcomes:
                notes.append("validations " + ("blocked" if outcomes[0].blocked else "clear"))
        return "; ".join(notes) or "no optimizer available"
