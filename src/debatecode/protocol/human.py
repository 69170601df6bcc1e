"""The human in the loop: checkpoints after rounds, answers to clarifying questions.

The engine talks to a ``HumanInterface``; the CLI supplies a terminal one when
it runs interactively. Without one (tests, CI, ``--no-checkpoints``) every
checkpoint continues and questions go to the Moderator.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

__all__ = ["CheckpointDecision", "HumanInterface"]


class CheckpointDecision(BaseModel):
    """What the human chose at the end of a round."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["continue", "guide", "end"] = "continue"
    guidance: str | None = None
    """With ``guide``: text every later prompt shows."""


class HumanInterface(Protocol):
    """A person overseeing a debate."""

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        """Answers to clarifying questions, in order, or None to let the Moderator answer."""
        ...

    async def checkpoint(self, round_no: int, summary: str) -> CheckpointDecision:
        """Continue, guide or end the debate after ``round_no``."""
        ...

    async def approve(self, phase: str, summary: str) -> bool | None:
        """Approve (True) or reject (False) the gate after ``phase``; None to wait for a decision elsewhere."""
        ...
