"""The debate engine: runs a protocol plan over one session, persisting as it goes.

The engine knows sessions, phases, rounds, checkpoints, gates, events and
outcomes, not code: everything code-specific lives in the phases, the roles
and the workspace. A session either finishes (``completed``), stops on its
budget (``budget_exceeded``), fails on a model, sandbox or git error
(``failed``), or is interrupted or rejected at a gate (``cancelled``); in every
case the turns so far are kept and the best code so far is written out.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from debatecode.config import DebateConfig
from debatecode.errors import (
    ConfigError,
    TaskError,
    VersionControlError,
)
from debatecode.execution.probes import Prober
from debatecode.execution.tester import CandidateTester
from debatecode.hooks import HookValidator
from debatecode.llm.budget import TokenBudget
from debatecode.llm.client import LLMClient
from debatecode.protocol.deps import DebateDeps
from debatecode.protocol.driver import SessionDriver, new_session_id
from debatecode.protocol.early_stop import early_agreement
from debatecode.protocol.events import (
    Escalated,
    EventBus,
    SessionStarted,
)
from debatecode.protocol.human import HumanInterface
from debatecode.protocol.journal import Journal
from debatecode.protocol.lessons import learn_lessons, recall_lessons
from debatecode.protocol.participants import plan_participants
from debatecode.protocol.phases import ProtocolPlan, code_debate_plan
from debatecode.protocol.report import escalation_summary, write_outputs
from debatecode.protocol.run import DebateRun
from debatecode.protocol.state import DebateState, Outcome
from debatecode.protocol.workspace import CodeWorkspace
from debatecode.sandbox.base import Sandbox
from debatecode.store.records import SessionRecord, SessionStatus
from debatecode.store.repository import SessionStore
from debatecode.task import Task
from debatecode.vcs.worktree import SessionWorktree, VersionRepository

if TYPE_CHECKING:
    from debatecode.memory.store import EpisodicMemory
    from debatecode.memory.wisdom import WisdomStore
    from debatecode.protocol.services import Services

__all__ = ["DebateEngine", "DebateResult", "new_session_id"]

logger = logging.getLogger(__name__)

_EARLY_STOP_AFTER = frozenset({"self_evolvement", "proposal"})
"""Phases after which candidates may already pass and agree (``convergence.early_stop``)."""


def _leader_id(run: DebateRun) -> str | None:
    leader = run.leader()
    return leader.agent_id if leader else None


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


class DebateEngine(SessionDriver[DebateRun]):
    """Runs debate sessions with injected services (model client, sandbox, store, human).

    An engine keeps nothing per session: every session gets its own state,
    journal, token budget and (unless injected) memory handles, so one engine
    can run several sessions at once. Build one from config with
    :meth:`from_config`; ``async with`` closes the services it built. The
    round loop, checkpoints and gates are the shared
    :class:`~debatecode.protocol.driver.SessionDriver`'s.
    """

    def __init__(
        self,
        config: DebateConfig,
        *,
        llm: LLMClient,
        sandbox: Sandbox,
        store: SessionStore,
        bus: EventBus | None = None,
        human: HumanInterface | None = None,
        memory: EpisodicMemory | None = None,
        wisdom: WisdomStore | None = None,
    ) -> None:
        if not config.phases.proposal:
            raise ConfigError(
                "phases.proposal cannot be switched off: every later phase works on the proposals",
                key="phases.proposal",
            )
        super().__init__(config, store=store, bus=bus, human=human)
        self.llm = llm
        self.sandbox = sandbox
        self.memory = memory
        self.wisdom = wisdom
        self._owned: Services | None = None
        self._repository_lock = asyncio.Lock()

    @classmethod
    def from_config(
        cls,
        config: DebateConfig,
        *,
        services: Services | None = None,
        sandbox_backend: str | None = None,
        bus: EventBus | None = None,
        human: HumanInterface | None = None,
    ) -> DebateEngine:
        """An engine over ``services``, or over services built from ``config`` (closed with the engine).

        Raises:
            UnknownModelError, SandboxUnavailable, StoreError: see ``build_services``.
        """
        from debatecode.protocol.services import build_services

        owned = None
        if services is None:
            services = owned = build_services(config, sandbox_backend=sandbox_backend)
        engine = cls(config, llm=services.llm, sandbox=services.sandbox, store=services.store, bus=bus, human=human)
        engine._owned = owned
        return engine

    async def aclose(self) -> None:
        """Close the services :meth:`from_config` built (injected ones belong to the caller)."""
        owned, self._owned = self._owned, None
        if owned is not None:
            await owned.aclose()

    async def __aenter__(self) -> DebateEngine:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def plan(self) -> ProtocolPlan[DebateRun]:
        return code_debate_plan(self.config)

    async def solve(self, task: Task, *, session_id: str | None = None) -> DebateResult:
        """Start a new session on ``task`` and run it to the end.

        Raises:
            UnsafeName: ``session_id`` cannot name the session's worktree and branch (nothing is created).
            SessionBusy: another process holds that session's lease.
            StoreError: the session could not be created (nothing else is lost).
        """
        out_dir = self.config.out.resolve()
        session = self._new_session(
            session_id,
            task_title=task.title,
            task_path=os.path.abspath(task.path) if task.path != "<string>" else task.path,  # noqa: ASYNC240 - no I/O beyond getcwd
            task_hash=task.text_hash,
            topic=task.description,
            topology=self.config.topology.type,
            config=self.config.model_dump(mode="json"),
            out_dir=str(out_dir),
            repo_path=str(out_dir),
        )
        session = session.model_copy(update={"branch": f"debate/{session.id}"})
        result: DebateResult = await self._run_new(session, task)
        return result

    async def resume(self, session_id: str, task: Task) -> DebateResult:
        """Continue a stored session from its last completed turn.

        Raises:
            SessionNotFound: no such session.
            SessionBusy: another process runs or resumes it.
            TaskError: the task file changed since the session started.
        """
        session = self.store.get_session(session_id)
        if session.task_hash != task.text_hash:
            raise TaskError(
                task.path,
                f"the task file changed since session {session.id} started",
                fix="restore the original task file, or start a new session",
            )
        result: DebateResult = await self._run_stored(session, task)
        return result

    def _time_limits(self) -> tuple[float | None, float | None]:
        return self.config.timeout_s, self.config.round_timeout_s

    @asynccontextmanager
    async def _open_run(
        self, session: SessionRecord, subject: Any, journal: Journal, budget: TokenBudget, *, resumed: bool
    ) -> AsyncIterator[DebateRun]:
        """The session's run over its git worktree and memory, both closed when the session ends.

        Raises:
            VersionControlError: the output folder's repository or the session's worktree could not be opened
                (the session is stored as failed).
            StoreError: the memory tables could not be opened.
        """
        try:
            async with self._repository_lock:  # sessions sharing an output folder must not init it twice
                versions = await asyncio.to_thread(VersionRepository, Path(session.out_dir))
                worktree = await asyncio.to_thread(versions.open_session, session.id)
        except VersionControlError as exc:
            self.store.update_session(session.id, status="failed", error=f"VersionControlError: {exc}")
            raise
        memory, wisdom, opened = await asyncio.to_thread(self._open_memory)
        try:
            yield self._build_run(session, subject, worktree, journal, budget, memory, wisdom, resumed=resumed)
        finally:
            versions.close()
            for store in opened:
                await asyncio.to_thread(store.close)

    def _started_event(self, run: DebateRun, resumed: bool) -> SessionStarted:
        return SessionStarted(run.session_id, run.session, run.order(), self.sandbox.name, resumed, len(run.journal))

    def _open_memory(self) -> tuple[EpisodicMemory | None, WisdomStore | None, list[EpisodicMemory | WisdomStore]]:
        """This session's episodic memory and wisdom store (same database): the injected ones, else opened here.

        The third item lists what was opened here (the session closes those).

        Raises:
            StoreError: the memory tables could not be opened.
        """
        memory, wisdom = self.memory, self.wisdom
        opened: list[EpisodicMemory | WisdomStore] = []
        if not self.config.memory.enabled or (memory is not None and wisdom is not None):
            return memory, wisdom, opened
        from debatecode.memory import EpisodicMemory, WisdomStore, create_embedder

        embedder = create_embedder(self.config.memory.embedder, self.config.memory)
        if memory is None:
            memory = EpisodicMemory(self.config.store_url, self.config.memory, embedder)
            opened.append(memory)
        if wisdom is None and self.config.memory.wisdom:
            wisdom = WisdomStore(self.config.store_url, self.config.memory, embedder)
            opened.append(wisdom)
        return memory, wisdom, opened

    def _build_run(
        self,
        session: SessionRecord,
        task: Task,
        worktree: SessionWorktree,
        journal: Journal,
        budget: TokenBudget,
        memory: EpisodicMemory | None,
        wisdom: WisdomStore | None,
        *,
        resumed: bool,
    ) -> DebateRun:
        """The session's services (built once, frozen), its state (the stored versions, on a resume) and its agents."""
        stored_versions = self.store.versions(session.id) if resumed else []
        tests = CandidateTester(task, self.sandbox, self.config.sandbox)
        workspace = CodeWorkspace(
            hooks=HookValidator(
                self.config.hooks,
                self.sandbox,
                task,
                quality_settings=self.config.quality,
                sandbox_settings=self.config.sandbox,
            ),
            task=task,
            tests=tests,
            probes=Prober(self.sandbox, tests.limits, per_call_s=min(2.0, tests.per_test_s)),
            worktree=worktree,
            journal=journal,
            bus=self.bus,
            quality=self.config.quality,
        )
        participants = plan_participants(self.config, task, self.llm.prompt_style, self.llm.code_reply)
        deps = DebateDeps(
            llm=self.llm,
            bus=self.bus,
            journal=journal,
            workspace=workspace,
            budget=budget,
            topology=participants.topology,
            ordering=participants.ordering,
            satisfaction=participants.satisfaction,
            allowance=participants.allowance,
            human=self.human,
            memory=memory,
            wisdom=wisdom,
            reflexion=(
                self.config.reflexion if self.config.reflexion.enabled or self.config.strategy == "reflexion" else None
            ),
        )
        state = DebateState(
            planning_style=participants.planning_style,
            planning_reason=participants.planning_reason,
            versions={
                str(v.metrics.get("turn") or v.turn_id): v
                for v in stored_versions
                if v.metrics.get("turn") or v.turn_id
            },
            next_version=max((v.version_number for v in stored_versions), default=0) + 1,
        )
        return DebateRun(session=session, config=self.config, agents=participants.agents, state=state, deps=deps)

    async def _early_stop(self, run: DebateRun, step: str) -> str | None:
        return await early_agreement(run, self.config.convergence) if step in _EARLY_STOP_AFTER else None

    async def _run_steps(self, run: DebateRun, plan: ProtocolPlan[DebateRun]) -> None:
        if run.deps.wisdom is not None:
            run.state.lessons = await recall_lessons(run, run.deps.wisdom)
        await super()._run_steps(run, plan)
        if run.deps.wisdom is not None:
            await learn_lessons(run, run.deps.wisdom)

    def _round_scores(self, run: DebateRun, round_no: int) -> tuple[dict[str, int], str | None]:
        return run.state.scores(round_no) if round_no else {}, _leader_id(run)

    def _checkpoint_summary(self, run: DebateRun, round_no: int) -> str:
        leader = run.leader()
        if leader is None:
            return f"round {round_no}"
        return f"round {round_no}: leader {leader.agent_id} {leader.report.passed}/{leader.report.total}"

    async def _after_loop(self, run: DebateRun) -> None:
        if run.state.stop_reason.startswith(("stalemate", "max rounds", "no improvement")):
            leader = run.leader()
            if leader is None or not leader.report.all_passed:
                run.state.escalation = escalation_summary(run)
                self.bus.emit(Escalated(run.session_id, run.state.stop_reason, run.state.escalation))

    async def _finish(
        self, run: DebateRun, status: SessionStatus, error: str | None, started: float, prior_tokens: int
    ) -> DebateResult:
        state = run.state
        if state.outcome.winner is None:
            best = run.leader()
            if best is not None:
                state.outcome = Outcome(
                    winner=best.agent_id,
                    version_id=best.version_id,
                    turn_id=best.turn_id,
                    passed=best.passed,
                    total=best.report.total,
                    method="best_so_far",
                    reason="the candidate passing the most tests when the session ended",
                )
        state.outcome.stop_reason = state.stop_reason
        state.outcome.escalation = state.escalation
        state.outcome.planning_style = state.planning_style
        state.outcome.topology = self.config.topology.type
        outcome = state.outcome.to_record()
        winner = run.state.candidates.get(state.outcome.winner or "")
        session = run.session
        fields: dict[str, Any] = {
            **self._session_totals(run, started, prior_tokens),
            "final_version_id": winner.version_id if winner else None,
            "final_consensus_score": winner.report.pass_rate if winner else None,
            "coordination_protocol": run.state.planning_style,
        }
        final = session.model_copy(update={**fields, "status": status, "outcome": outcome, "error": error})
        solution_path, report_path = await asyncio.to_thread(write_outputs, run, final, winner)
        final = self._emit_finished(run, status, outcome, error, fields)
        try:
            await asyncio.to_thread(run.workspace.worktree.close, self.config.vcs.removes_worktree(status))
        except VersionControlError as exc:
            logger.warning("could not clean up the worktree of session %s: %s", session.id, exc)
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
