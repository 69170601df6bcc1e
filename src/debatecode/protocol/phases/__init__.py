"""Protocol phases, one module each, and the plan that orders them.

Order: dehallucination → self-evolvement → proposal → adjudication → [critique → review]×rounds
→ optimization → adversarial → convergence. The bracketed phases form the
debate loop; the engine checks convergence after each loop round.

Each phase is built with its own settings section (``CritiquePhase(config.critique, ...)``)
and reads ``self.settings``; the run it is given carries the session's state and services.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from debatecode.protocol.driver import ProtocolPlan
from debatecode.protocol.phases.adjudication import AdjudicationPhase
from debatecode.protocol.phases.adversarial import AdversarialPhase
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.phases.convergence import CodeRoundCheck, ConvergencePhase, check_convergence, round_vote
from debatecode.protocol.phases.critique import CritiquePhase
from debatecode.protocol.phases.dehallucination import DehallucinationPhase
from debatecode.protocol.phases.optimization import OptimizationPhase
from debatecode.protocol.phases.proposal import ProposalPhase
from debatecode.protocol.phases.reflexion import ReflexionPhase
from debatecode.protocol.phases.review import ReviewPhase
from debatecode.protocol.phases.self_evolvement import SelfEvolvementPhase

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.protocol.run import DebateRun

__all__ = [
    "PHASE_BUILDERS",
    "AdjudicationPhase",
    "AdversarialPhase",
    "CodeRoundCheck",
    "ConvergencePhase",
    "CritiquePhase",
    "DehallucinationPhase",
    "OptimizationPhase",
    "Phase",
    "ProposalPhase",
    "ProtocolPlan",
    "ReflexionPhase",
    "ReviewPhase",
    "SelfEvolvementPhase",
    "check_convergence",
    "code_debate_plan",
    "code_round_check",
    "round_vote",
]

PHASE_BUILDERS: dict[str, Callable[[DebateConfig], Phase]] = {
    "dehallucination": lambda config: DehallucinationPhase(config.dehallucination),
    "self_evolvement": lambda config: SelfEvolvementPhase(
        config.self_evolvement, convergence=config.convergence, resample_temperature=config.llm.temperature
    ),
    "proposal": lambda config: ProposalPhase(),
    "adjudication": lambda config: AdjudicationPhase(config.adjudication),
    "critique": lambda config: CritiquePhase(config.critique, tolerate_failures=config.participants.tolerate_failures),
    "review": lambda config: ReviewPhase(
        config.review,
        tolerate_failures=config.participants.tolerate_failures,
        reply_max_tokens=config.llm.max_tokens,
    ),
    "optimization": lambda config: OptimizationPhase(config.optimization),
    "adversarial": lambda config: AdversarialPhase(config.adversarial),
    "convergence": lambda config: ConvergencePhase(config.convergence),
}
"""Every phase, in protocol order, built from its settings section of the config."""

_LOOP = ("critique", "review")

_SKIPPED_ON_EARLY_STOP = frozenset({"optimization", "adversarial"})
"""After-loop phases an early stop skips: the final vote still runs."""


def code_round_check(config: DebateConfig) -> CodeRoundCheck:
    """The check after each loop round of ``config``'s debate: tests, progress, stalemate, then a vote."""
    return CodeRoundCheck(
        config.convergence,
        satisfaction_target=config.review.satisfaction_target if config.phases.review else None,
        rounds=config.rounds,
        vote=config.phases.convergence,
    )


def code_debate_plan(config: DebateConfig) -> ProtocolPlan[DebateRun]:
    """The plan of ``config.strategy``: the code debate with the phases ``config.phases`` switches on, or Reflexion alone."""
    check = code_round_check(config)
    if config.strategy == "reflexion":
        return ProtocolPlan(
            before=[ProposalPhase()],
            after=[ReflexionPhase(), ConvergencePhase(config.convergence)],
            check=check,
            rounds=0,
        )
    switches = config.phases.model_dump()
    plan: ProtocolPlan[DebateRun] = ProtocolPlan(
        check=check, rounds=config.rounds, skipped_on_early_stop=_SKIPPED_ON_EARLY_STOP
    )
    if config.reflexion.enabled and config.reflexion.in_debate and (switches["critique"] or switches["review"]):
        plan.loop.append(ReflexionPhase())
    seen_loop = False
    for name, build in PHASE_BUILDERS.items():
        if not switches.get(name, True):
            continue
        phase = build(config)
        if phase.name in _LOOP:
            plan.loop.append(phase)
            seen_loop = True
        elif seen_loop or phase.name in ("optimization", "adversarial", "convergence"):
            plan.after.append(phase)
        else:
            plan.before.append(phase)
    return plan
