"""Live progress of a design debate in the terminal: who is speaking, each speech's stance and satisfaction, and
the moderator's and the gate reviewer's verdicts, round by round."""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from debatecode.cli.console import display_paused
from debatecode.protocol.design.replies import parse_speech
from debatecode.protocol.events import (
    AgentStatusChanged,
    Event,
    PhaseCompleted,
    PhaseStarted,
    RoundCompleted,
    SessionStarted,
    TurnCompleted,
)

__all__ = ["DebateRenderer"]

_PHASE_TITLES = {
    "analysis": "Moderator: reading the question",
    "positions": "Phase 1: independent positions",
    "arguments": "arguments",
    "rebuttals": "rebuttals",
    "moderation": "moderator and gate reviewer",
    "escalation": "Escalation",
    "synthesis": "Synthesis",
    "synthesis_review": "Review of the synthesis",
}


class DebateRenderer:
    """An event-bus subscriber that prints the debate as it happens, with a spinner for who is thinking."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.status: Status | None = None
        self.thinking: set[str] = set()

    def __enter__(self) -> DebateRenderer:
        if self.console.is_terminal:
            self.status = self.console.status("starting…", spinner="dots")
            self.status.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def paused(self) -> AbstractContextManager[None]:
        """Stop the spinner while the terminal asks the human something."""
        return display_paused(self.status)

    def _set(self, text: str) -> None:
        if self.status is not None:
            self.status.update(escape(text))

    def __call__(self, event: Event) -> None:
        if isinstance(event, SessionStarted):
            word = "resuming" if event.resumed else "debate"
            self.console.print(f"[bold]{word} {event.session_id}[/]: {escape(event.session.task_title)}")
        elif isinstance(event, PhaseStarted):
            title = _PHASE_TITLES.get(event.phase, event.phase)
            prefix = f"Round {event.round} · " if event.round else ""
            self.console.rule(f"{prefix}{title}", style="dim")
        elif isinstance(event, AgentStatusChanged):
            if event.status == "thinking":
                self.thinking.add(event.agent_id)
            else:
                self.thinking.discard(event.agent_id)
            self._set(f"{event.phase}: {', '.join(sorted(self.thinking)) or '…'} thinking")
        elif isinstance(event, TurnCompleted) and event.turn.status != "rejected":
            self._turn(event)
        elif isinstance(event, TurnCompleted):
            self.console.print(
                f"  [yellow]{escape(event.turn.agent_id)}: reply rejected (no challenge or no score); asked again[/]"
            )
        elif isinstance(event, PhaseCompleted) and event.phase in (
            "moderation",
            "synthesis",
            "escalation",
            "synthesis_review",
        ):
            self.console.print(f"  [bold]→ {escape(event.summary)}[/]")
        elif isinstance(event, RoundCompleted) and event.scores:
            scores = ", ".join(f"{k} {v}" for k, v in event.scores.items())
            self.console.print(f"  satisfaction: {escape(scores)}")

    def _turn(self, event: TurnCompleted) -> None:
        turn = event.turn
        reused = " [dim](from the journal)[/]" if event.reused else ""
        if turn.phase in ("positions", "arguments", "rebuttals"):
            speech = parse_speech(turn.content, {}, own=turn.agent_id)
            score = f" [cyan]{speech.satisfaction}[/]" if speech.satisfaction is not None else ""
            self.console.print(f"  [bold]{escape(turn.agent_id)}[/]{score}: {escape(speech.stance[:160])}{reused}")
        elif turn.phase == "moderation":
            self.console.print(f"  [magenta]moderator[/]: {escape(' '.join(turn.content.split())[:300])}{reused}")
        elif turn.phase == "poll":
            first = next((line for line in turn.content.splitlines() if line.strip()), "")
            self.console.print(f"  poll · {escape(turn.agent_id)}: {escape(first[:80])}{reused}")
        elif turn.phase == "analysis" and turn.agent_role == "moderator" and turn.provider == "tool":
            self.console.print(f"  {escape(turn.content)}")
        elif turn.phase == "gate":
            for flag in turn.metadata.get("flags") or []:
                if flag.get("kind") in ("off_topic", "muted", "scope_creep"):
                    self.console.print(f"  [yellow]gate reviewer · {escape(str(flag.get('detail', '')))}[/]")
