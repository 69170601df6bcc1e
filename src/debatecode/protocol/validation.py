"""Hook points inside a debate: PostProposal, PostOptimization, PostAdversarial, PostConvergence.

At each point the configured validations (tests, lint, static analysis,
security scan, benchmark) run on the relevant versions, locally and in the
sandbox where code executes. Results are persisted as a tool turn, shown to
the version's author in its next prompts, and a failing *blocking* validation
marks the version blocked: the debate does not converge on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode.hooks import HookOutcome, HookPoint
from debatecode.protocol.journal import turn_key
from debatecode.quality import QualityReport
from debatecode.store.records import TurnRecord

if TYPE_CHECKING:
    from debatecode.protocol.run import DebateRun
    from debatecode.protocol.state import Candidate

__all__ = ["validate"]


async def validate(
    run: DebateRun, point: HookPoint, candidates: list[Candidate], round_no: int = 0
) -> list[HookOutcome]:
    """Run ``point``'s validations on each candidate's code (once per session: a resume re-uses the stored result).

    Raises:
        SandboxError: the sandbox failed while running tests or a benchmark.
    """
    hooks = run.workspace.hooks
    if hooks is None or not hooks.validations(point):
        return []
    outcomes = []
    fresh: dict[str, HookOutcome] = {}
    for candidate in candidates:
        if candidate.code is None:
            continue
        kind = f"{point.value}-{candidate.agent_id}"

        async def check(candidate: Candidate = candidate, kind: str = kind) -> TurnRecord:
            version = run.state.version_of(candidate)
            quality = (
                QualityReport.from_metrics(version.metrics)
                if version is not None and "quality" in version.metrics
                else None
            )
            assert candidate.code is not None
            outcome = fresh[kind] = await hooks.run(point, candidate.code, candidate.report.visible(), quality=quality)
            return run.tool_turn(
                round_no=round_no,
                phase="hooks",
                agent_id="executor",
                role="executor",
                kind=kind,
                content=outcome.feedback() or f"{point.value}: every validation passed",
                tool_calls=[
                    {"tool": r.name, "passed": r.passed, "blocking": r.blocking, "summary": r.summary}
                    for r in outcome.results
                ],
                metadata={
                    "hooks": outcome.to_metadata(),
                    "point": point.value,
                    "target": candidate.agent_id,
                    "version": candidate.version_id,
                },
            )

        turn = await run.journal.replay_or_do(turn_key(round_no, "hooks", "executor", kind), check)
        await run.record(turn)
        outcome = fresh.pop(kind, None) or HookOutcome.from_metadata(turn.metadata["hooks"])
        candidate.blocked = outcome.blocked
        text = outcome.feedback()
        if text:
            run.state.feedback[candidate.agent_id] = f"{point.value}: {text}"
        else:
            run.state.feedback.pop(candidate.agent_id, None)
        outcomes.append(outcome)
    return outcomes
