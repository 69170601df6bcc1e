"""``CodeWorkspace``: the code side of a debate — candidates, test suites, versions.

Every candidate is judged by running it: the task's visible checks, the tests
agents exchanged in critique (when their author's code is credible) and the
Red team's accepted attacks. A revision replaces an agent's code only if it
passes at least as many of the tests both were run against.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from debatecode.agents.agent import Agent
from debatecode.execution.generated import (
    AdjudicatedTest,
    ExchangedTest,
    GeneratedSuite,
    RedTest,
    adjudicated_suite,
    exchanged_suite,
    red_suite,
)
from debatecode.execution.probes import ProbeRunner
from debatecode.execution.runner import TestRunner
from debatecode.hooks import HookRunner
from debatecode.protocol.events import AgentStatusChanged, CodeVersionCommitted, EventBus, TestsRun
from debatecode.protocol.journal import Journal
from debatecode.protocol.state import CodeVersionRecord, TestReport, TurnRecord
from debatecode.quality import QualitySettings, analyze_async
from debatecode.task import Task
from debatecode.vcs import version_message
from debatecode.vcs.worktree import SessionWorktree

__all__ = ["Candidate", "CodeWorkspace"]

logger = logging.getLogger(__name__)


@dataclass
class Candidate:
    """One agent's code and what running it showed."""

    agent_id: str
    code: str | None
    report: TestReport
    turn_id: str | None = None
    version_id: str | None = None
    phase: str = ""
    round: int = 0
    label: str = ""
    """What the candidate is, when not a plain revision (e.g. ``moonshot`` or ``stepping stone``)."""
    blocked: bool = False
    """A blocking validation at a hook point failed: the debate does not converge on this version."""

    @property
    def passed(self) -> int:
        return self.report.passed

    @property
    def visible_passed(self) -> int:
        return self.report.passed_in("visible")

    def score(self) -> tuple[int, int, int, int]:
        """Ranking key: visible tests first, then adjudicated, then exchanged, then Red-team tests."""
        report = self.report
        return (
            report.passed_in("visible"),
            report.passed_in("adjudicated"),
            report.passed_in("exchanged"),
            report.passed_in("red"),
        )

    def all_visible_pass(self) -> bool:
        """No visible test fails (vacuously true for a task without visible tests, as HumanEval prompts can be)."""
        return self.code is not None and self.report.passed_in("visible") == self.report.total_in("visible")


@dataclass
class CodeWorkspace:
    """Candidates, generated tests and code versions of one session.

    It records the turns it evaluates in the session's ``journal`` and
    announces test runs and versions on its ``bus``.
    """

    task: Task
    tests: TestRunner
    probes: ProbeRunner
    worktree: SessionWorktree
    journal: Journal
    bus: EventBus
    quality: QualitySettings | None = None
    """Quality analysis of every committed version; None switches it off."""
    stored_versions: dict[str, CodeVersionRecord] = field(default_factory=dict)
    """Stored code versions by turn id (a resumed session re-uses them)."""
    next_version: int = 1
    candidates: dict[str, Candidate] = field(default_factory=dict)
    history: dict[str, list[Candidate]] = field(default_factory=dict)
    exchanged: list[ExchangedTest] = field(default_factory=list)
    retracted: set[str] = field(default_factory=set)
    """Exchanged tests no longer counted: their author changed its mind, or agents dispute the behaviour."""
    red_tests: list[RedTest] = field(default_factory=list)
    adjudicated: list[AdjudicatedTest] = field(default_factory=list)
    """Answers a majority of debaters gave, apart, for inputs the leading candidates disagreed on."""
    alternatives: list[Candidate] = field(default_factory=list)
    hooks: HookRunner | None = None
    """Validations at the hook points (PostProposal, ...); None switches them off."""
    """Tested code that is not an agent's current candidate (the Moonshot's second version, rejected changes)."""

    def __post_init__(self) -> None:
        self._lock = asyncio.Lock()

    # -- suites -------------------------------------------------------------

    def active_exchanged(self) -> list[ExchangedTest]:
        """Exchanged tests that count: trusted, not retracted by their author, not disputed."""
        return [t for t in self.exchanged if t.trusted and t.name not in self.retracted]

    @property
    def session_id(self) -> str:
        return self.journal.session_id

    async def revalidate_exchanged(self) -> list[str]:
        """Retract exchanged tests whose author no longer stands by them; return the disputed calls.

        An author stands by a test while its *current* code still passes every
        visible test and still gives the expected output. When two standing
        tests expect different things of the same call, both are retracted as
        disputed (and the dispute goes to the risk register).
        """
        by_author: dict[str, list[ExchangedTest]] = {}
        for test in self.exchanged:
            if test.trusted and test.name not in self.retracted:
                by_author.setdefault(test.author, []).append(test)
        for author, tests in by_author.items():
            current = self.candidates.get(author)
            if current is None or current.code is None or not current.all_visible_pass():
                self.retracted.update(t.name for t in tests)
                continue
            results = await self.probes.run(current.code, [t.call for t in tests])
            for test, result in zip(tests, results, strict=True):
                if (result.outcome, result.expected) != (test.outcome, test.expected):
                    self.retracted.add(test.name)
        standing: dict[str, set[tuple[str, str]]] = {}
        for test in self.active_exchanged():
            standing.setdefault(test.call, set()).add((test.outcome, test.expected))
        disputed = sorted(call for call, expectations in standing.items() if len(expectations) > 1)
        for test in self.exchanged:
            if test.call in disputed:
                self.retracted.add(test.name)
        return disputed

    def suites(self) -> tuple[GeneratedSuite, ...]:
        """The generated suites every candidate now runs against: adjudicated answers, active exchanged tests, accepted attacks."""
        suites: list[GeneratedSuite] = []
        if self.adjudicated:
            suites.append(adjudicated_suite(self.adjudicated))
        trusted = self.active_exchanged()
        if trusted:
            suites.append(exchanged_suite(trusted))
        if self.red_tests:
            suites.append(red_suite(self.red_tests))
        return tuple(suites)

    async def run_tests(self, code: str | None, *, suites: tuple[GeneratedSuite, ...] | None = None) -> TestReport:
        """Run ``code`` against the visible checks and the current generated suites.

        Raises:
            SandboxError: the sandbox itself failed.
        """
        if code is None:
            return self.tests.no_code_report("the reply contained no Python code")
        return await self.tests.run(code, self.suites() if suites is None else suites)

    async def refresh(self) -> None:
        """Re-run every current candidate after the generated suites changed, so reports compare like with like."""
        suites = self.suites()

        async def one(candidate: Candidate) -> None:
            if candidate.code is None:
                return
            candidate.report = await self.run_tests(candidate.code, suites=suites)
            self.bus.emit(TestsRun(self.session_id, candidate.agent_id, candidate.report, "refresh"))

        await asyncio.gather(*(one(c) for c in self.candidates.values()))

    # -- candidates ---------------------------------------------------------

    async def evaluate(self, agent: Agent, turn: TurnRecord, *, label: str = "") -> Candidate:
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
            report = await self.run_tests(turn.code)
            turn = turn.model_copy(update={"test_results": report.model_dump(mode="json")})
        self.bus.emit(TestsRun(self.session_id, agent.id, report, turn.phase))
        turn = await self.journal.record(turn)
        version_id = await self.commit(agent.id, turn, report) if turn.code is not None else None
        self.bus.emit(AgentStatusChanged(self.session_id, agent.id, "idle", turn.phase))
        return Candidate(agent.id, turn.code, report, turn.id, version_id, turn.phase, turn.round, label)

    async def evaluate_code(self, agent: Agent, turn: TurnRecord, code: str, *, label: str) -> Candidate:
        """Test and commit a second piece of code from an already recorded turn (e.g. a stepping stone)."""
        report = await self.run_tests(code)
        self.bus.emit(TestsRun(self.session_id, agent.id, report, turn.phase))
        pseudo = turn.model_copy(update={"id": f"{turn.id}:{label}", "code": code})
        version_id = await self.commit(
            agent.id, pseudo, report, relpath=f"candidates/{agent.id}-{label.replace(' ', '-')}.py"
        )
        return Candidate(agent.id, code, report, turn.id, version_id, turn.phase, turn.round, label)

    async def commit(self, agent_id: str, turn: TurnRecord, report: TestReport, *, relpath: str | None = None) -> str:
        """Commit a version of ``agent_id``'s code to the session branch and record it (once per turn)."""
        stored = self.stored_versions.get(turn.id)
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
        async with self._lock:
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
                version_number=self.next_version,
                commit_sha=sha,
                tests_passed=report.passed,
                tests_total=report.total,
                test_pass_rate=report.pass_rate,
                quality_score=quality.score if quality else None,
                diff_from_previous=diff,
                metrics=metrics,
            )
            self.next_version += 1
            self.stored_versions[turn.id] = version
        self.bus.emit(CodeVersionCommitted(self.session_id, version))
        return version.id

    def adopt(self, candidate: Candidate) -> bool:
        """Make ``candidate`` its agent's current code unless it passes fewer of the tests both ran.

        Returns whether it was adopted. Every candidate is kept in ``history``.
        """
        self.history.setdefault(candidate.agent_id, []).append(candidate)
        current = self.candidates.get(candidate.agent_id)
        if current is not None and not _no_regression(current, candidate):
            logger.info(
                "%s's new code passes fewer tests than its current code; keeping the current code", candidate.agent_id
            )
            self.alternatives.append(candidate)
            return False
        self.candidates[candidate.agent_id] = candidate
        return True

    def version_of(self, candidate: Candidate) -> CodeVersionRecord | None:
        return next((v for v in self.stored_versions.values() if v.id == candidate.version_id), None)

    def quality_summary(self, candidate: Candidate) -> str | None:
        """A one-line quality summary of ``candidate``'s committed version, when one was measured."""
        version = self.version_of(candidate)
        if version is None or version.quality_score is None:
            return None
        return str(version.metrics.get("summary") or f"quality {version.quality_score:.2f}")

    def quality_score(self, candidate: Candidate) -> float | None:
        version = self.version_of(candidate)
        return version.quality_score if version is not None else None

    def ranking(self, order: list[str], *, unblocked: bool = False) -> list[Candidate]:
        """Candidates with code, best first: by visible, exchanged, Red-team tests, then agent order.

        With ``unblocked``, versions a blocking validation rejected are left out (unless every one is blocked).
        """
        position = {agent_id: i for i, agent_id in enumerate(order)}
        with_code = [c for c in self.candidates.values() if c.code is not None]
        if unblocked and any(not c.blocked for c in with_code):
            with_code = [c for c in with_code if not c.blocked]
        return sorted(with_code, key=lambda c: (tuple(-x for x in c.score()), position.get(c.agent_id, len(position))))

    def leader(self, order: list[str]) -> Candidate | None:
        ranked = self.ranking(order)
        return ranked[0] if ranked else None


def _no_regression(current: Candidate, new: Candidate) -> bool:
    """True when ``new`` passes at least as many visible tests, and no fewer of the tests both reports share."""
    if new.code is None:
        return current.code is None
    if new.report.passed_in("visible") < current.report.passed_in("visible"):
        return False
    shared = {c.name for c in current.report.cases} & {c.name for c in new.report.cases}
    current_passed = len(shared & current.report.passed_names())
    new_passed = len(shared & new.report.passed_names())
    return new_passed >= current_passed


def _suite_counts(report: TestReport) -> dict[str, Any]:
    return {
        suite: {"passed": report.passed_in(suite), "total": report.total_in(suite)}
        for suite in ("visible", "exchanged", "red")
        if report.total_in(suite)
    }
