"""The phase contract: one step of the protocol, switchable in config."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from debatecode.protocol.run import DebateRun

__all__ = ["Phase"]


class Phase(abc.ABC):
    """One protocol phase. Phases keep no state of their own: it all lives in the run.

    ``round_no`` is 0 for phases that run once, and the debate round for
    phases inside the debate loop (critique, review).
    """

    name: str = "abstract"

    @abc.abstractmethod
    async def execute(self, run: DebateRun, round_no: int) -> str:
        """Run the phase and return a one-line summary for the transcript.

        Raises:
            ModelError, BudgetExceeded, SandboxError, VersionControlError: the
                engine turns these into a failed or stopped session.
        """
