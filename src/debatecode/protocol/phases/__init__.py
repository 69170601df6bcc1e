"""Protocol phases, one module each, and the plan that orders them.

Order: dehallucination → self-evolvement → proposal → adjudication → [critique → review]×rounds
→ optimization → adversarial → convergence. The bracketed phases form the
debate loop; the engine checks convergence after each loop round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debatecode.protocol.driver import ProtocolPlan
from debatecode.protocol.phases.adjudication import AdjudicationPhase
from debatecode.protocol.phases.adversarial import AdversarialPhase
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.phases.convergence import ConvergencePhase, check_convergence, round_vote
from debatecode.protocol.phases.critique import CritiquePhase
from debatecode.protocol.phases.dehallucination import DehallucinationPhase
from debatecode.protocol.phases.optimization import OptimizationPhase
from debatecode.protocol.phases.proposal import ProposalPhase
from debatecode.protocol.phases.review import ReviewPhase
from debatecode.protocol.phases.self_evolvement import SelfEvolvementPhase

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.protocol.run import DebateRun

__all__ = [
    "PHASE_ORDER",
    "AdjudicationPhase",
    "AdversarialPhase",
    "ConvergencePhase",
    "CritiquePhase",
    "DehallucinationPhase",
    "OptimizationPhase",
    "Phase",
    "ProposalPhase",
    "ProtocolPlan",
    "ReviewPhase",
    "SelfEvolvementPhase",
    "check_convergence",
    "code_debate_plan",
    "code_round_check",
]

PHASE_ORDER: list[type[Phase]] = [
    DehallucinationPhase,
    SelfEvolvementPhase,
    ProposalPhase,
    AdjudicationPhase,
    CritiquePhase,
    ReviewPhase,
    OptimizationPhase,
    AdversarialPhase,
    ConvergencePhase,
]
"""Every phase, in protocol order."""

_LOOP = ("critique", "review")


async def code_round_check(run: DebateRun, round_no: int, history: list[Any]) -> str | None:
    """Why the code debate's loop stops after ``round_no`` (tests, progress, stalemate, then a vote), or None."""
    reason = check_convergence(run, round_no, history)
    if reason is None and run.config.phases.convergence:
        reason = await round_vote(run, round_no)
    return reason


_SKIPPED_ON_EARLY_STOP = frozenset({"optimization", "adversarial"})
"""After-loop phases an early stop skips: the final vote still runs."""


def code_debate_plan(config: DebateConfig) -> ProtocolPlan[DebateRun]:
    """The plan of ``config.strategy``: the code debate with the phases ``config.phases`` switches on, or Reflexion alone."""
    from debatecode.protocol.reflexion import ReflexionPhase

    if config.strategy == "reflexion":
        return ProtocolPlan(
            before=[ProposalPhase()], after=[ReflexionPhase(), ConvergencePhase()], check=code_round_check, rounds=0
        )
    switches = config.phases.model_dump()
    plan: ProtocolPlan[DebateRun] = ProtocolPlan(
        check=code_round_check, rounds=config.rounds, skipped_on_early_stop=_SKIPPED_ON_EARLY_STOP
    )
    if config.reflexion.enabled and config.reflexion.in_debate and (switches["critique"] or switches["review"]):
        plan.loop.append(ReflexionPhase())
    seen_loop = False
    for phase_cls in PHASE_ORDER:
        if not switches.get(phase_cls.name, True):
            continue
        phase = phase_cls()
        if phase.name in _LOOP:
            plan.loop.append(phase)
            seen_loop = True
        elif seen_loop or phase.name in ("optimization", "adversarial", "convergence"):
            plan.after.append(phase)
        else:
            plan.before.append(phase)
    return plan
