"""The terminal human: checkpoints, clarifying answers and gate approvals at the prompt.

Used only when stdin and stdout are a terminal and checkpoints are on. The
live progress display pauses while a question is on screen.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

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
        # A daemon thread: when nobody answers and the session pauses, the process can still exit.
        return await _in_daemon_thread(self._checkpoint, round_no, summary)

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

    async def choose(self, title: str, summary: str, options: list[tuple[str, str]]) -> tuple[str, str | None] | None:
        """An escalated design debate: the human picks option A/B/C (with optional guidance), or skips."""
        return await _in_daemon_thread(self._choose, title, summary, options)

    def _choose(self, title: str, summary: str, options: list[tuple[str, str]]) -> tuple[str, str | None] | None:
        with self.pause():
            self.console.rule(f"[bold]{title}[/]")
            self.console.print(summary)
            for label, text in options:
                self.console.print(f"  [bold]{label})[/] {text}")
            labels = [label.lower() for label, _ in options]
            choice = Prompt.ask(
                "Your decision (Enter to leave it open)", choices=[*labels, ""], default="", console=self.console
            )
            if not choice:
                return None
            last = labels[-1] == choice and "guidance" in options[-1][1].lower()
            question = (
                "Your guidance for the next round (optional)"
                if last
                else "Anything the record should say about it (optional)"
            )
            guidance = Prompt.ask(question, default="", console=self.console)
            return choice.upper(), guidance.strip() or None

    async def approve(self, phase: str, summary: str) -> bool | None:
        return await asyncio.to_thread(self._approve, phase, summary)

    def _approve(self, phase: str, summary: str) -> bool | None:
        with self.pause():
            self.console.rule(f"[bold]Approval gate: {phase}[/]")
            self.console.print(summary)
            return Confirm.ask("Approve and continue?", default=True, console=self.console)


T = TypeVar("T")


async def _in_daemon_thread(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a daemon thread: a question left unanswered never keeps the process alive."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def target() -> None:
        try:
            result = func(*args)
        except BaseException as exc:
            loop.call_soon_threadsafe(_settle, future, None, exc)
        else:
            loop.call_soon_threadsafe(_settle, future, result, None)

    threading.Thread(target=target, name="debatecode-human", daemon=True).start()
    return await future


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
