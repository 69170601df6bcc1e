"""The debate engine: runs the enabled phases over one session, persisting as it goes.

The engine knows sessions, phases, events and outcomes, not code: everything
code-specific lives in the phases and the roles. A session either finishes
(``completed``), stops on its budget (``budget_exceeded``), fails on a model,
sandbox or git error (``failed``), or is interrupted (``cancelled``); in every
case the turns so far are kept and the best code so far is written out.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatecode.agents.agent import Agent
from debatecode.agents.roles import get_role
from debatecode.config import DebateConfig
from debatecode.errors import (
    BudgetExceeded,
    ConfigError,
    ModelError,
    SandboxError,
    StoreError,
    TaskError,
    VersionControlError,
)
from debatecode.execution.runner import TestRunner
from debatecode.llm.client import LLMClient
from debatecode.protocol.events import EventBus, PhaseCompleted, PhaseStarted, SessionFinished, SessionStarted
from debatecode.protocol.phases import PHASE_ORDER, Phase
from debatecode.protocol.report import write_outputs
from debatecode.protocol.run import DebateRun
from debatecode.protocol.state import SessionRecord, SessionStatus
from debatecode.sandbox.base import Sandbox
from debatecode.store.recorder import StoreRecorder
from debatecode.store.repository import SessionStore
from debatecode.task import Task
from debatecode.vcs.worktree import VersionRepository

__all__ = ["DebateEngine", "DebateResult", "new_session_id"]

logger = logging.getLogger(__name__)


def new_session_id() -> str:
    """A short, unique, branch-safe session id."""
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class DebateResult:
    """What a finished (or stopped) session produced."""

    session: SessionRecord
    status: SessionStatus
    code: str | None
    passed: int
    total: int
    solution_path: Path | None
    report_path: Path
    error: str | None = None

    @property
    def all_passed(self) -> bool:
        return self.code is not None and self.total > 0 and self.passed == self.total


class DebateEngine:
    """Runs debate sessions with injected services (model client, sandbox, store)."""

    def __init__(
        self,
        config: DebateConfig,
        *,
        llm: LLMClient,
        sandbox: Sandbox,
        store: SessionStore,
        bus: EventBus | None = None,
    ) -> None:
        if not config.phases.proposal:
            raise ConfigError(
                "phases.proposal cannot be switched off: every later phase works on the proposals",
                key="phases.proposal",
            )
        self.config = config
        self.llm = llm
        self.sandbox = sandbox
        self.store = store
        self.bus = bus or EventBus()
        self.bus.subscribe(StoreRecorder(store), critical=True)

    def phases(self) -> list[Phase]:
        enabled = self.config.phases.model_dump()
        return [phase_cls() for phase_cls in PHASE_ORDER if enabled.get(phase_cls.name, True)]

    def agents(self) -> list[Agent]:
        style = self.llm.prompt_style(self.config.model)
        role = get_role("generator")
        return [
            Agent(
                id=f"agent-{i + 1}",
                role=role,
                model=self.config.model,
                prompt_style=style,
                temperature=0.0 if i == 0 else self.config.llm.temperature,
                seed=i + 1,
            )
            for i in range(self.config.agents)
        ]

    async def solve(self, task: Task, *, session_id: str | None = None) -> DebateResult:
        """Start a new session on ``task`` and run it to the end.

        Raises:
            StoreError: the session could not be created (nothing else is lost).
        """
        out_dir = self.config.out.resolve()
        session = SessionRecord(
            id=session_id or new_session_id(),
            task_title=task.title,
            task_path=os.path.abspath(task.path) if task.path != "<string>" else task.path,  # noqa: ASYNC240 - no I/O beyond getcwd
            task_hash=task.text_hash,
            topic=task.description,
            status="pending",
            model=self.config.model,
            config=self.config.model_dump(mode="json"),
            initiated_by=_user(),
            out_dir=str(out_dir),
            repo_path=str(out_dir),
        )
        session = session.model_copy(update={"branch": f"debate/{session.id}"})
        self.store.create_session(session)
        return await self._run(session, task)

    async def resume(self, session_id: str, task: Task) -> DebateResult:
        """Continue a stored session from its last completed turn.

        Raises:
            SessionNotFound: no such session.
            TaskError: the task file changed since the session started.
        """
        session = self.store.get_session(session_id)
        if session.task_hash != task.text_hash:
            raise TaskError(
                task.path,
                f"the task file changed since session {session.id} started",
                fix="restore the original task file, or start a new session",
            )
        return await self._run(session, task, resumed=True)

    async def _run(self, session: SessionRecord, task: Task, *, resumed: bool = False) -> DebateResult:
        started = time.monotonic()
        prior_tokens = session.prompt_tokens + session.completion_tokens if resumed else 0
        self.llm.token_budget = max(0, self.config.token_budget - prior_tokens)
        try:
            versions = await asyncio.to_thread(VersionRepository, Path(session.out_dir))
        except VersionControlError as exc:
            self.store.update_session(session.id, status="failed", error=f"VersionControlError: {exc}")
            raise
        try:
            return await self._run_with(session, task, versions, started, prior_tokens, resumed)
        finally:
            versions.close()

    async def _run_with(
        self,
        session: SessionRecord,
        task: Task,
        versions: VersionRepository,
        started: float,
        prior_tokens: int,
        resumed: bool,
    ) -> DebateResult:
        try:
            worktree = await asyncio.to_thread(versions.open_session, session.id)
        except VersionControlError as exc:
            self.store.update_session(session.id, status="failed", error=f"VersionControlError: {exc}")
            raise
        stored_turns = self.store.turns(session.id) if resumed else []
        stored_versions = self.store.versions(session.id) if resumed else []
        run = DebateRun(
            session=session,
            task=task,
            config=self.config,
            agents=self.agents(),
            llm=self.llm,
            tests=TestRunner(task, self.sandbox, self.config.sandbox),
            worktree=worktree,
            bus=self.bus,
            journal={t.key: t for t in stored_turns},
            stored_versions={v.turn_id: v for v in stored_versions if v.turn_id},
            next_seq=max((t.seq for t in stored_turns), default=0) + 1,
            next_version=max((v.version_number for v in stored_versions), default=0) + 1,
        )
        self.bus.emit(
            SessionStarted(
                session.id, session, [a.id for a in run.agents], self.sandbox.name, resumed, len(stored_turns)
            )
        )
        status: SessionStatus = "completed"
        error: str | None = None
        try:
            for phase in self.phases():
                self.bus.emit(PhaseStarted(session.id, phase.name, 0 if phase.name != "critique" else 1))
                summary = await phase.run(run)
                self.bus.emit(PhaseCompleted(session.id, phase.name, run.rounds_done, summary))
        except BudgetExceeded as exc:
            status, error = "budget_exceeded", str(exc)
            logger.warning("session %s stopped: %s", session.id, exc)
        except (ModelError, SandboxError, VersionControlError) as exc:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            logger.error("session %s failed: %s", session.id, exc)
        except (asyncio.CancelledError, KeyboardInterrupt):
            status, error = "cancelled", "interrupted by the user"
            await self._finish(run, status, error, started, prior_tokens)
            raise
        return await self._finish(run, status, error, started, prior_tokens)

    async def _finish(
        self,
        run: DebateRun,
        status: SessionStatus,
        error: str | None,
        started: float,
        prior_tokens: int,
    ) -> DebateResult:
        if run.outcome.get("winner") is None:
            best = run.best()
            if best is not None:
                run.outcome = {
                    "winner": best.agent_id,
                    "version_id": best.version_id,
                    "turn_id": best.turn_id,
                    "passed": best.passed,
                    "total": best.report.total,
                    "method": "best_so_far",
                    "reason": "the candidate passing the most tests when the session ended",
                }
        winner = run.candidates.get(run.outcome.get("winner") or "")
        session = run.session
        fields: dict[str, Any] = {
            "total_rounds": run.rounds_done,
            "prompt_tokens": (session.prompt_tokens if prior_tokens else 0) + self.llm.usage.prompt_tokens,
            "completion_tokens": (session.completion_tokens if prior_tokens else 0) + self.llm.usage.completion_tokens,
            "cost_usd": (session.cost_usd if prior_tokens else 0.0) + self.llm.usage.cost_usd,
            "duration_s": session.duration_s + (time.monotonic() - started),
            "final_version_id": winner.version_id if winner else None,
            "final_consensus_score": winner.report.pass_rate if winner else None,
        }
        final = session.model_copy(update={**fields, "status": status, "outcome": run.outcome, "error": error})
        solution_path, report_path = await asyncio.to_thread(write_outputs, run, final, winner)
        try:
            self.bus.emit(SessionFinished(session.id, status, run.outcome, error, fields))
        except StoreError:
            logger.exception("could not record the end of session %s", session.id)
            raise
        try:
            await asyncio.to_thread(run.worktree.close, status == "completed")
        except VersionControlError as exc:
            logger.warning("could not clean up the worktree of session %s: %s", session.id, exc)
        final = self.store.get_session(session.id)
        return DebateResult(
            session=final,
            status=status,
            code=winner.code if winner else None,
            passed=winner.passed if winner else 0,
            total=winner.report.total if winner else len(run.task.test_names),
            solution_path=solution_path,
            report_path=report_path,
            error=error,
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
