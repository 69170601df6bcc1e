"""``DebateRun``: one session's live state and the services its phases use.

Phases never call the model, the sandbox, git or the store directly. They
ask the run, which journals every turn: a turn whose key is already stored
(a resumed session) is replayed from the store instead of calling the
model again, so a resume neither loses nor duplicates turns.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import Prompt
from debatecode.config import DebateConfig
from debatecode.execution.runner import TestRunner
from debatecode.llm.client import LLMClient
from debatecode.llm.parsing import extract_code
from debatecode.protocol.events import (
    AgentStatusChanged,
    CodeVersionCommitted,
    EventBus,
    TestsRun,
    TurnCompleted,
)
from debatecode.protocol.state import CodeVersionRecord, SessionRecord, TestReport, TurnRecord, TurnStatus
from debatecode.task import Task
from debatecode.vcs.worktree import SessionWorktree

__all__ = ["Candidate", "DebateRun", "gather_all", "turn_key"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def turn_key(round_no: int, phase: str, agent_id: str, kind: str) -> str:
    """The deterministic identity of a turn, stable across a crash and resume."""
    return f"r{round_no}/{phase}/{agent_id}/{kind}"


@dataclass
class Candidate:
    """An agent's current code and what running it showed."""

    agent_id: str
    code: str | None
    report: TestReport
    turn_id: str | None = None
    version_id: str | None = None
    phase: str = ""
    round: int = 0

    @property
    def passed(self) -> int:
        return self.report.passed


@dataclass
class DebateRun:
    """Everything one session's phases share."""

    session: SessionRecord
    task: Task
    config: DebateConfig
    agents: list[Agent]
    llm: LLMClient
    tests: TestRunner
    worktree: SessionWorktree
    bus: EventBus
    journal: dict[str, TurnRecord] = field(default_factory=dict)
    """Stored turns by key: the turns a resumed session replays."""
    stored_versions: dict[str, CodeVersionRecord] = field(default_factory=dict)
    """Stored code versions by turn id."""
    next_seq: int = 1
    next_version: int = 1
    candidates: dict[str, Candidate] = field(default_factory=dict)
    history: dict[str, list[Candidate]] = field(default_factory=dict)
    outcome: dict[str, Any] = field(default_factory=dict)
    rounds_done: int = 0
    reused_turns: int = 0

    def __post_init__(self) -> None:
        self._semaphore = asyncio.Semaphore(self.config.max_concurrency)
        self._lock = asyncio.Lock()

    @property
    def session_id(self) -> str:
        return self.session.id

    def agent(self, agent_id: str) -> Agent:
        return next(a for a in self.agents if a.id == agent_id)

    def status(self, agent: Agent, status: str, phase: str = "") -> None:
        self.bus.emit(AgentStatusChanged(self.session_id, agent.id, status, phase))

    async def ask(
        self, agent: Agent, prompt: Prompt, *, phase: str, round_no: int, kind: str, want_code: bool = True
    ) -> TurnRecord:
        """One model turn: the reply and the code in it, not yet persisted.

        A stored turn with the same key is returned instead of calling the model.

        Raises:
            ModelError: the model call failed for good.
            BudgetExceeded: the session's token budget is spent.
        """
        key = turn_key(round_no, phase, agent.id, kind)
        stored = self.journal.get(key)
        if stored is not None:
            self.reused_turns += 1
            return stored
        async with self._semaphore:
            self.status(agent, "thinking", phase)
            temperature = agent.temperature
            completion = await self.llm.complete(
                agent.model,
                prompt.messages,
                max_tokens=prompt.max_tokens
                or (
                    self.config.llm.completion_max_tokens
                    if prompt.style == "completion"
                    else self.config.llm.max_tokens
                ),
                temperature=temperature,
                seed=agent.seed,
                stop=prompt.stop or None,
                tags={"phase": phase, "agent": agent.id, "round": str(round_no), "kind": kind, "role": agent.role.name},
            )
        code = (
            extract_code(completion.text, entry_point=self.task.entry_point, prompt_prefix=prompt.prefix)
            if want_code
            else None
        )
        status: TurnStatus = "no_code" if want_code and code is None else "ok"
        if status == "no_code":
            logger.debug("%s's %s reply has no Python code; it counts as failing every test", agent.id, kind)
        return TurnRecord(
            id=uuid.uuid4().hex,
            session_id=self.session_id,
            seq=0,
            key=key,
            round=round_no,
            phase=phase,
            agent_id=agent.id,
            agent_role=agent.role.name,
            provider=completion.provider,
            model=completion.model,
            prompt=prompt.text,
            content=completion.text,
            code=code,
            status=status,
            metadata={
                "kind": kind,
                "temperature": temperature,
                "seed": agent.seed,
                "usage_estimated": completion.usage_estimated,
            },
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=completion.cost_usd,
            response_time_ms=int(completion.latency_s * 1000),
        )

    async def record(self, turn: TurnRecord) -> TurnRecord:
        """Persist a completed turn (once), giving it the next sequence number."""
        if turn.key in self.journal:
            self.bus.emit(TurnCompleted(self.session_id, turn, reused=True))
            return turn
        async with self._lock:
            turn = turn.model_copy(update={"seq": self.next_seq})
            self.next_seq += 1
            self.journal[turn.key] = turn
        self.bus.emit(TurnCompleted(self.session_id, turn))
        return turn

    async def evaluate(self, agent: Agent, turn: TurnRecord) -> Candidate:
        """Run the turn's code against the task, persist the turn and commit its version.

        Raises:
            SandboxError: the sandbox failed (the code's own failures are in the report).
            VersionControlError: the version could not be committed.
        """
        reused = turn.key in self.journal
        if turn.code is None:
            report = self.tests.no_code_report("the reply contained no Python code")
        elif reused and turn.test_results is not None:
            report = TestReport.model_validate(turn.test_results)
        else:
            self.status(agent, "testing", turn.phase)
            async with self._semaphore:
                report = await self.tests.run(turn.code)
        if not reused:
            turn = turn.model_copy(update={"test_results": report.model_dump(mode="json")})
        self.bus.emit(TestsRun(self.session_id, agent.id, report, turn.phase))
        turn = await self.record(turn)
        version_id = None
        if turn.code is not None:
            version_id = await self._commit_version(agent, turn, report)
        self.status(agent, "idle", turn.phase)
        return Candidate(agent.id, turn.code, report, turn.id, version_id, turn.phase, turn.round)

    async def _commit_version(self, agent: Agent, turn: TurnRecord, report: TestReport) -> str:
        stored = self.stored_versions.get(turn.id)
        if stored is not None:
            self.bus.emit(CodeVersionCommitted(self.session_id, stored, reused=True))
            return stored.id
        assert turn.code is not None
        relpath = f"candidates/{agent.id}.py"
        async with self._lock:
            diff = await asyncio.to_thread(self.worktree.diff_from_previous, relpath, turn.code)
            sha = await asyncio.to_thread(
                self.worktree.commit_version,
                relpath,
                turn.code,
                f"{turn.phase}: {agent.id} round {turn.round} ({report.passed}/{report.total} tests)",
                {
                    "Debate-Session": self.session_id,
                    "Agent": agent.id,
                    "Phase": turn.phase,
                    "Round": str(turn.round),
                    "Tests": f"{report.passed}/{report.total}",
                    "Turn": turn.id,
                },
            )
            version = CodeVersionRecord(
                id=uuid.uuid4().hex,
                session_id=self.session_id,
                turn_id=turn.id,
                agent_id=agent.id,
                language=self.task.language,
                code=turn.code,
                version_number=self.next_version,
                commit_sha=sha,
                tests_passed=report.passed,
                tests_total=report.total,
                test_pass_rate=report.pass_rate,
                diff_from_previous=diff,
            )
            self.next_version += 1
            self.stored_versions[turn.id] = version
        self.bus.emit(CodeVersionCommitted(self.session_id, version))
        return version.id

    def adopt(self, candidate: Candidate) -> bool:
        """Make ``candidate`` its agent's current code unless it passes fewer tests.

        Returns whether it was adopted. Every candidate is kept in ``history``.
        """
        self.history.setdefault(candidate.agent_id, []).append(candidate)
        current = self.candidates.get(candidate.agent_id)
        if current is not None and candidate.passed < current.passed:
            logger.info(
                "%s's revision passes %d tests, fewer than its current %d; keeping the current code",
                candidate.agent_id,
                candidate.passed,
                current.passed,
            )
            return False
        self.candidates[candidate.agent_id] = candidate
        return True

    def best(self) -> Candidate | None:
        """The candidate with the most passing tests (earliest agent on ties), if any has code."""
        with_code = [c for c in self.candidates.values() if c.code is not None]
        if not with_code:
            return None
        order = {a.id: i for i, a in enumerate(self.agents)}
        return sorted(with_code, key=lambda c: (-c.passed, order.get(c.agent_id, 0)))[0]


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Run ``aws`` concurrently; on the first failure cancel the rest and raise that failure.

    Unlike ``asyncio.gather``, no sibling keeps running (and writing) after
    the session has already been marked failed.
    """
    tasks: list[asyncio.Task[T]] = []
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_as_coroutine(aw)) for aw in aws]
    except BaseExceptionGroup as failures:
        errors = _flatten(failures)
        for extra in errors[1:]:
            logger.debug("further failure in the same step: %r", extra)
        raise errors[0] from None
    return [task.result() for task in tasks]


async def _as_coroutine(aw: Awaitable[T]) -> T:
    return await aw


def _flatten(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found.extend(_flatten(exc))
        elif not isinstance(exc, asyncio.CancelledError):
            found.append(exc)
    return found or list(group.exceptions)
