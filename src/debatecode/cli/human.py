"""The terminal human: checkpoints, clarifying answers and gate approvals at the prompt.

Used only when stdin and stdout are a terminal and checkpoints are on. The
live progress display pauses while a question is on screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from rich.console import Console
from rich.prompt import Confirm, Prompt

from debatecode.protocol.human import CheckpointDecision

__all__ = ["TerminalHuman"]


class TerminalHuman:
    """Asks the person at the terminal; every question can be skipped."""

    def __init__(self, console: Console, pause: Callable[[], AbstractContextManager[None]] | None = None) -> None:
        self.console = console
        self.pause = pause or nullcontext

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        return await asyncio.to_thread(self._answers, questions)

    def _answers(self, questions: list[dict[str, str]]) -> list[str] | None:
        with self.pause():
            self.console.rule("[bold]Clarifying questions[/] (Enter on the first to let the Moderator answer them all)")
            answers: list[str] = []
            for index, item in enumerate(questions, start=1):
                answer = Prompt.ask(
                    f"[cyan]{index}. [{item['category']}][/] {item['question']}", default="", console=self.console
                )
                if index == 1 and not answer.strip():
                    return None
                answers.append(answer.strip() or "(no answer: use judgement)")
            return answers

    async def checkpoint(self, round_no: int, summary: str) -> CheckpointDecision:
        return await asyncio.to_thread(self._checkpoint, round_no, summary)

    def _checkpoint(self, round_no: int, summary: str) -> CheckpointDecision:
        with self.pause():
            self.console.rule(f"[bold]Round {round_no} complete[/]")
            self.console.print(summary)
            choice = Prompt.ask(
                "[C]ontinue  [G]uide  [E]nd early", choices=["c", "g", "e"], default="c", console=self.console
            )
            if choice == "g":
                guidance = Prompt.ask("Your guidance", console=self.console).strip()
                return CheckpointDecision(action="guide", guidance=guidance or None)
            return CheckpointDecision(action="end" if choice == "e" else "continue")

    async def approve(self, phase: str, summary: str) -> bool | None:
        return await asyncio.to_thread(self._approve, phase, summary)

    def _approve(self, phase: str, summary: str) -> bool | None:
        with self.pause():
            self.console.rule(f"[bold]Approval gate: {phase}[/]")
            self.console.print(summary)
            return Confirm.ask("Approve and continue?", default=True, console=self.console)
