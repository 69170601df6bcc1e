"""Protocol phases, one module each, in the order they run."""

from debatecode.protocol.phases.base import Phase
from debatecode.protocol.phases.convergence import ConvergencePhase
from debatecode.protocol.phases.critique import CritiquePhase
from debatecode.protocol.phases.proposal import ProposalPhase

__all__ = ["PHASE_ORDER", "ConvergencePhase", "CritiquePhase", "Phase", "ProposalPhase"]

PHASE_ORDER: list[type[Phase]] = [ProposalPhase, CritiquePhase, ConvergencePhase]
"""The phases of this release, in protocol order."""
