"""``CodeWorkspace``: the services a code debate judges code with — the tester, the prober, the worktree, hooks.

Every candidate is judged by running it: the task's visible checks, the tests
agents exchanged in critique (when their author's code is credible) and the
Red team's accepted attacks. The workspace holds no debate state: the
candidates, the generated tests and the committed versions are the session's
:class:`~debatecode.protocol.state.DebateState`, which every method that
reads or extends them is given.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from debatecode.agents.agent import Agent
from debatecode.execution.generated import ExchangedTest, GeneratedSuite
from debatecode.execution.probes import Prober
from debatecode.execution.results import TestReport
from debatecode.execution.tester import CandidateTester
from debatecode.hooks import HookValidator
from debatecode.protocol.events import AgentStatusChanged, CodeVersionCommitted, EventBus, TestsRun
from debatecode.protocol.journal import Journal
from debatecode.protocol.state import Candidate, DebateState
from debatecode.quality import QualitySettings, analyze_async
from debatecode.store.records import CodeVersionRecord, TurnRecord
from debatecode.task import Task
from debatecode.vcs import version_message

__all__ = ["CodeWorkspace", "VersionWriter"]

logger = logging.getLogger(__name__)


class VersionWriter(Protocol):
    """Where code versions are committed: the session's git worktree (``vcs.worktree.SessionWorktree``), or a fake.

    Each method may raise ``VersionControlError``.
    """

    def commit_version(self, relpath: str, content: str, message: str, trailers: dict[str, str] | None = None) -> str:
        """Write ``content`` to ``relpath`` and commit it; the commit's sha."""
        ...

    def diff_from_previous(self, relpath: str, content: str) -> str:
        """The unified diff of ``content`` against the last committed ``relpath``."""
        ...

    def close(self, remove_worktree: bool = True) -> None:
        """Release the worktree (and remove its folder when ``remove_worktree``)."""
        ...


@dataclass(frozen=True)
class CodeWorkspace:
    """The code services of one session: the task, its tester and prober, the worktree, hooks and quality.

    It records the turns it evaluates in the session's ``journal`` and
    announces test runs and versions on its ``bus``.
    """

    task: Task
    tests: CandidateTester
    probes: Prober
    worktree: VersionWriter
    journal: Journal
    bus: EventBus
    quality: QualitySettings | None = None
    """Quality analysis of every committed version; None switches it off."""
    hooks: HookValidator | None = None
    """Validations at the hook points (PostProposal, ...); None switches them off."""
    _commit_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False, compare=False)

    @property
    def session_id(self) -> str:
        return self.journal.session_id

    # -- suites -------------------------------------------------------------

    async def revalidate_exchanged(self, state: DebateState) -> list[str]:
        """Retract exchanged tests whose author no longer stands by them; return the disputed calls.

        An author stands by a test while its *current* code still passes every
        visible test and still gives the expected output. When two standing
        tests expect different things of the same call, both are retracted as
        disputed (and the dispute goes to the risk register).
        """
        by_author: dict[str, list[ExchangedTest]] = {}
        for test in state.exchanged:
            if test.trusted and test.name not in state.retracted:
                by_author.setdefault(test.author, []).append(test)
        for author, tests in by_author.items():
            current = state.candidates.get(author)
            if current is None or current.code is None or not current.all_visible_pass():
                state.retracted.update(t.name for t in tests)
                continue
            results = await self.probes.run(current.code, [t.call for t in tests])
            for test, result in zip(tests, results, strict=True):
                if (result.outcome, result.expected) != (test.outcome, test.expected):
                    state.retracted.add(test.name)
        standing: dict[str, set[tuple[str, str]]] = {}
        for test in state.active_exchanged():
            standing.setdefault(test.call, set()).add((test.outcome, test.expected))
        disputed = sorted(call for call, expectations in standing.items() if len(expectations) > 1)
        for test in state.exchanged:
            if test.call in disputed:
                state.retracted.add(test.name)
        return disputed

    async def run_tests(self, code: str | None, suites: tuple[GeneratedSuite, ...]) -> TestReport:
        """Run ``code`` against the visible checks and ``suites``.

        Raises:
            SandboxError: the sandbox itself failed.
        """
        if code is None:
            return self.tests.no_code_report("the reply contained no Python code")
        return await self.tests.run(code, suites)

    async def refresh(self, state: DebateState) -> None:
        """Re-run every current candidate after the generated suites changed, so reports compare like with like."""
        suites = state.suites()

        async def one(candidate: Candidate) -> None:
            if candidate.code is None:
                return
            candidate.report = await self.run_tests(candidate.code, suites)
            self.bus.emit(TestsRun(self.session_id, candidate.agent_id, candidate.report, "refresh"))

        await asyncio.gather(*(one(c) for c in state.candidates.values()))

    # -- candidates ---------------------------------------------------------

    async def evaluate(self, state: DebateState, agent: Agent, turn: TurnRecord, *, label: str = "") -> Candidate:
        """Run the turn's code, persist the turn with its test results and commit its version.

        A replayed turn re-uses its stored results and version.

        Raises:
            SandboxError: the sandbox failed (the code's own failures are in the report).
            VersionControlError: the version could not be committed.
        """
        reused = turn.key in self.journal
        if reused and turn.test_results is not None:
            report = TestReport.model_validate(turn.test_results)
        else:
            self.bus.emit(AgentStatusChanged(self.session_id, agent.id, "testing", turn.phase))
            report = await self.run_tests(turn.code, state.suites())
            turn = turn.model_copy(update={"test_results": report.model_dump(mode="json")})
        self.bus.emit(TestsRun(self.session_id, agent.id, report, turn.phase))
        turn = await self.journal.record(turn)
        version_id = await self.commit(state, agent.id, turn, report) if turn.code is not None else None
        self.bus.emit(AgentStatusChanged(self.session_id, agent.id, "idle", turn.phase))
        return Candidate(agent.id, turn.code, report, turn.id, version_id, turn.phase, turn.round, label)

    async def evaluate_code(
        self, state: DebateState, agent: Agent, turn: TurnRecord, code: str, *, label: str
    ) -> Candidate:
        """Test and commit a second piece of code from an already recorded turn (e.g. a stepping stone)."""
        report = await self.run_tests(code, state.suites())
        self.bus.emit(TestsRun(self.session_id, agent.id, report, turn.phase))
        pseudo = turn.model_copy(update={"id": f"{turn.id}:{label}", "code": code})
        version_id = await self.commit(
            state, agent.id, pseudo, report, relpath=f"candidates/{agent.id}-{label.replace(' ', '-')}.py"
        )
        return Candidate(agent.id, code, report, turn.id, version_id, turn.phase, turn.round, label)

    async def commit(
        self, state: DebateState, agent_id: str, turn: TurnRecord, report: TestReport, *, relpath: str | None = None
    ) -> str:
        """Commit a version of ``agent_id``'s code to the session branch and record it in ``state`` (once per turn)."""
        stored = state.versions.get(turn.id)
        if stored is not None:
            self.bus.emit(CodeVersionCommitted(self.session_id, stored, reused=True))
            return stored.id
        assert turn.code is not None
        path = relpath or f"candidates/{agent_id}.py"
        quality = None
        if self.quality is not None and self.quality.enabled:
            quality = await analyze_async(
                turn.code, test_pass_rate=report.pass_rate if report.total else None, settings=self.quality
            )
        message = version_message(
            phase=turn.phase,
            agent=agent_id,
            round_no=turn.round,
            tests_passed=report.passed,
            tests_total=report.total,
            score=quality.score if quality else None,
            session_id=self.session_id,
            turn_id=turn.id,
        )
        metrics: dict[str, Any] = {"suites": _suite_counts(report), "turn": turn.id}
        if quality is not None:
            metrics.update(quality.to_metrics())
            metrics["summary"] = quality.summary()
        async with self._commit_lock:
            diff = await asyncio.to_thread(self.worktree.diff_from_previous, path, turn.code)
            sha = await asyncio.to_thread(
                self.worktree.commit_version, path, turn.code, message.subject, message.trailers
            )
            version = CodeVersionRecord(
                id=uuid.uuid4().hex,
                session_id=self.session_id,
                turn_id=turn.id if self.journal.has_turn_id(turn.id) else None,
                agent_id=agent_id,
                language=self.task.language,
                code=turn.code,
                version_number=state.next_version,
                commit_sha=sha,
                tests_passed=report.passed,
                tests_total=report.total,
                test_pass_rate=report.pass_rate,
                quality_score=quality.score if quality else None,
                diff_from_previous=diff,
                metrics=metrics,
            )
            state.next_version += 1
            state.versions[turn.id] = version
        self.bus.emit(CodeVersionCommitted(self.session_id, version))
        return version.id


def _suite_counts(report: TestReport) -> dict[str, Any]:
    return {
        suite: {"passed": report.passed_in(suite), "total": report.total_in(suite)}
        for suite in ("visible", "exchanged", "red")
        if report.total_in(suite)
    }
