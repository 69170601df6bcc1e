"""Live progress of a debate in the terminal, and the final summary.

On a terminal a live table shows each agent's phase, status and tests; phase
summaries scroll above it. Without a terminal (CI, pipes) the same events are
printed as plain lines.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from debatecode.cli.console import display_paused
from debatecode.config import DebateConfig
from debatecode.protocol.events import (
    AgentStatusChanged,
    CheckpointDecided,
    Escalated,
    Event,
    GateDecided,
    GateRequested,
    PhaseCompleted,
    PhaseStarted,
    RoundCompleted,
    SessionFinished,
    SessionStarted,
    TestsRun,
    TurnCompleted,
    VoteCast,
)
from debatecode.task import Task

__all__ = ["LiveRenderer", "print_summary"]


@dataclass
class _AgentView:
    status: str = "waiting"
    phase: str = ""
    tests: str = "-"
    turns: int = 0
    tokens: int = 0


@dataclass
class _State:
    session_id: str = ""
    phase: str = "starting"
    round: int = 0
    agents: dict[str, _AgentView] = field(default_factory=dict)
    tokens: int = 0
    sandbox: str = ""


class LiveRenderer:
    """An event-bus subscriber that draws the debate as it happens."""

    def __init__(self, console: Console, task: Task, config: DebateConfig) -> None:
        self.console = console
        self.task = task
        self.config = config
        self.state = _State()
        self.started = time.monotonic()
        self.live: Live | None = None

    def __enter__(self) -> LiveRenderer:
        if self.console.is_terminal:
            self.live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
            self.live.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.live is not None:
            self.live.update(self._render(), refresh=True)
            self.live.__exit__(exc_type, exc, tb)
            self.live = None

    def paused(self) -> AbstractContextManager[None]:
        """Stop the live display while the terminal asks the human something."""
        return display_paused(self.live)

    def _line(self, text: str, style: str = "") -> None:
        self.console.print(Text(text, style=style), soft_wrap=True)

    def __call__(self, event: Event) -> None:
        state = self.state
        if isinstance(event, SessionStarted):
            state.session_id = event.session_id
            state.sandbox = event.sandbox
            state.agents = {agent_id: _AgentView() for agent_id in event.agents}
            note = f" (resumed: {event.reused_turns} stored turns replayed)" if event.resumed else ""
            self._line(
                f"session {event.session_id} · {self.task.title} · model {self.config.model} · "
                f"{len(event.agents)} agents · sandbox {event.sandbox}{note}",
                "bold",
            )
        elif isinstance(event, PhaseStarted):
            state.phase, state.round = event.phase, event.round
            self._line(f"▶ {event.phase}" + (f" (round {event.round})" if event.round else ""), "cyan")
        elif isinstance(event, PhaseCompleted):
            self._line(f"  ✓ {event.phase}: {event.summary}", "green")
        elif isinstance(event, AgentStatusChanged):
            view = state.agents.setdefault(event.agent_id, _AgentView())
            view.status, view.phase = event.status, event.phase or view.phase
        elif isinstance(event, TurnCompleted):
            view = state.agents.setdefault(event.turn.agent_id, _AgentView())
            view.turns += 1
            tokens = event.turn.prompt_tokens + event.turn.completion_tokens
            view.tokens += tokens
            state.tokens += tokens
            if event.turn.status == "no_code":
                self._line(f"  ! {event.turn.agent_id}: reply had no code", "yellow")
        elif isinstance(event, TestsRun):
            view = state.agents.setdefault(event.agent_id, _AgentView())
            view.tests = f"{event.report.passed}/{event.report.total}"
            if event.report.status == "skipped" or event.phase == "refresh":
                return self._refresh()
            mark = "✅" if event.report.all_passed else "❌"
            self._line(
                f"  {mark} {event.agent_id} [{event.phase}] {view.tests} tests pass ({event.report.duration_s:.2f}s in {event.report.backend or 'sandbox'})"
            )
        elif isinstance(event, VoteCast):
            self._line(f"  🗳 {event.voter} votes for {event.choice or 'nobody (abstains)'}")
        elif isinstance(event, RoundCompleted):
            scores = ", ".join(f"{k} {v}" for k, v in event.scores.items())
            stop = f" → stop: {event.stop_reason}" if event.stop_reason else ""
            self._line(
                f"■ round {event.round} done: leader {event.leader or '-'}"
                + (f"; satisfaction {scores}" if scores else "")
                + stop,
                "bold",
            )
        elif isinstance(event, CheckpointDecided):
            self._line(
                f"  ✋ checkpoint after round {event.round}: {event.action}"
                + (f" ({event.guidance})" if event.guidance else ""),
                "magenta",
            )
        elif isinstance(event, GateRequested):
            self._line(f"  ⛔ approval gate after {event.phase}: {event.summary}", "magenta")
        elif isinstance(event, GateDecided):
            self._line(
                f"  ✋ gate {event.phase}: {event.decision}" + (f" by {event.reviewer}" if event.reviewer else ""),
                "magenta",
            )
        elif isinstance(event, Escalated):
            self._line(f"  ⚠ escalation: {event.reason}", "yellow")
        elif isinstance(event, SessionFinished):
            state.phase = event.status
            for view in state.agents.values():
                view.status = "done"
        self._refresh()

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self._render(), refresh=True)

    def _render(self) -> Group:
        state = self.state
        elapsed = time.monotonic() - self.started
        header = Text.assemble(
            ("phase ", "dim"),
            (state.phase + (f" r{state.round}" if state.round else ""), "bold cyan"),
            ("  elapsed ", "dim"),
            (f"{elapsed:.1f}s", "bold"),
            ("  tokens ", "dim"),
            (str(state.tokens), "bold"),
        )
        table = Table(box=None, pad_edge=False, header_style="bold dim")
        for column in ("agent", "phase", "status", "tests", "turns", "tokens"):
            table.add_column(column)
        for agent_id, view in state.agents.items():
            style = "green" if view.tests.split("/")[0] == view.tests.split("/")[-1] and view.tests != "-" else ""
            table.add_row(
                agent_id, view.phase, view.status, Text(view.tests, style=style), str(view.turns), str(view.tokens)
            )
        return Group(header, table)


def print_summary(console: Console, result: Any) -> None:
    """The final summary table of a session."""
    session = result.session
    table = Table(title=f"debatecode · session {session.id}", show_header=False, title_style="bold")
    table.add_column(style="dim")
    table.add_column()
    colour = {"completed": "green", "failed": "red", "budget_exceeded": "yellow", "cancelled": "yellow"}.get(
        result.status, ""
    )
    table.add_row("status", Text(result.status, style=f"bold {colour}"))
    verdict = f"{result.passed}/{result.total} tests pass" if result.code is not None else "no code produced"
    table.add_row("final code", Text(verdict, style="green" if result.all_passed else "red"))
    outcome = session.outcome or {}
    if outcome.get("winner"):
        table.add_row("winner", f"{outcome['winner']} ({outcome.get('method')}: {outcome.get('reason', '')})")
    table.add_row("tokens", f"{session.prompt_tokens} prompt + {session.completion_tokens} completion")
    table.add_row("cost", f"${session.cost_usd:.4f}")
    table.add_row("time", f"{session.duration_s:.1f} s")
    if result.solution_path:
        table.add_row("solution", str(result.solution_path))
    table.add_row("report", str(result.report_path))
    table.add_row("versions", f"git -C {session.repo_path} log {session.branch}")
    console.print(table)
