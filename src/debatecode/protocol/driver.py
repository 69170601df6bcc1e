"""``SessionDriver``: one session from its stored record to its end — setup, plan, time limits, settling.

It is the part of the engine that knows nothing of what is debated: the code
engine (:class:`~debatecode.protocol.engine.DebateEngine`) and the design
engine (:class:`~debatecode.protocol.design.engine.DesignEngine`) both run
their sessions through it, so both get the same setup (the session record and
id, who started it, the lease, the token budget, the journal), the same time
limits per step and per round, journal, events, store recorder, human
checkpoints, approval gates, resume, failure handling and settling: whatever
entry path started the session (the CLI, the Python API, the server, ``bench``),
a session never outlives its run as ``pending`` or ``running``.

The life of a session, in this module's order: ``_run_new`` (store a new
record) or ``_run_stored`` (a resume) holds the session's lease and settles it
if anything unexpected escapes; ``_run_session`` makes the budget and journal
and asks the engine for its run (``_open_run``); ``_drive_plan`` runs the plan
and ends with the engine's ``_finish``.

A plan is steps before the round loop, steps inside it (repeated per round,
with a check after each round that may stop the loop), and steps after it.
Subclasses fill in the hooks: what a round's scores are, what a checkpoint
shows, what happens when the loop ends without agreement, and how the session
is written out.
"""

from __future__ import annotations

import abc
import asyncio
import getpass
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from debatecode.config import DebateConfig
from debatecode.errors import BudgetExceeded, ModelError, SandboxError, StoreError, VersionControlError
from debatecode.llm.budget import TokenBudget
from debatecode.protocol.events import (
    CheckpointDecided,
    CheckpointRequested,
    EventBus,
    PhaseCompleted,
    PhaseStarted,
    RoundCompleted,
    SessionFinished,
    SessionStarted,
)
from debatecode.protocol.gates import GateKeeper
from debatecode.protocol.human import CheckpointDecision, HumanInterface
from debatecode.protocol.journal import Journal, turn_key
from debatecode.protocol.recorder import StoreRecorder
from debatecode.protocol.session_lifetime import session_lease, settle_session
from debatecode.protocol.session_run import SessionRun
from debatecode.safe_paths import check_name
from debatecode.store.records import SETTLED_STATUSES, SessionRecord, SessionStatus, TurnRecord, utcnow
from debatecode.store.repository import SessionStore

__all__ = [
    "CheckpointPaused",
    "GateRejected",
    "ProtocolPlan",
    "RunT",
    "SessionDriver",
    "Step",
    "StepTimedOut",
    "current_user",
    "new_session_id",
]

logger = logging.getLogger(__name__)

RunT = TypeVar("RunT", bound=SessionRun)
RunT_contra = TypeVar("RunT_contra", bound=SessionRun, contravariant=True)


def new_session_id() -> str:
    """A short, unique, branch-safe session id."""
    return uuid.uuid4().hex[:12]


def current_user() -> str:
    """Who starts a session (``initiated_by``): the login name, or ``unknown``."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


class GateRejected(Exception):
    """A human rejected the debate at an approval gate."""


class StepTimedOut(Exception):
    """A step ran past its time limit; the session fails with its turns kept (and can be resumed)."""


class CheckpointPaused(Exception):
    """Nobody answered a checkpoint in time: the session pauses, to be resumed."""


class Step(Protocol[RunT_contra]):
    """One step of a plan: a code phase or a design step. Steps keep no state; it lives in the run."""

    name: str

    async def execute(self, run: RunT_contra, round_no: int) -> str:
        """Run the step and return a one-line summary for the transcript."""
        ...


RoundCheck = Callable[[RunT, int, list[Any]], Awaitable[str | None]]
"""Why the round loop stops after a round, or None; the list is the check's own history across rounds."""


async def _never_stop(run: Any, round_no: int, history: list[Any]) -> str | None:
    return None


@dataclass
class ProtocolPlan(Generic[RunT]):
    """Steps before the round loop, inside it (repeated per round) and after it, and when the loop stops."""

    before: list[Step[RunT]] = field(default_factory=list)
    loop: list[Step[RunT]] = field(default_factory=list)
    after: list[Step[RunT]] = field(default_factory=list)
    check: RoundCheck[RunT] = _never_stop
    rounds: int = 1
    """Rounds of the loop at most."""
    skipped_on_early_stop: frozenset[str] = frozenset()
    """After-loop steps an early stop skips."""

    def names(self) -> list[str]:
        return [p.name for p in (*self.before, *self.loop, *self.after)]


class SessionDriver(abc.ABC, Generic[RunT]):
    """Drives one session's plan: the shared loop of the code and the design engines.

    The driver's own bus carries the store recorder (a critical handler: a lost
    write stops the session); a caller's bus hears every event after it.
    """

    def __init__(
        self,
        config: DebateConfig,
        *,
        store: SessionStore,
        bus: EventBus | None = None,
        human: HumanInterface | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.bus = EventBus()
        self.bus.subscribe(StoreRecorder(store), critical=True)
        if bus is not None:
            self.bus.subscribe(bus.emit, critical=True)
        self.human = human if config.checkpoints.enabled else None
        self.gates = GateKeeper(config.gates, store)
        self._deadlines: dict[str, float] = {}
        self._round_deadlines: dict[str, tuple[int, float]] = {}

    # -- what an engine supplies -------------------------------------------

    @abc.abstractmethod
    def plan(self) -> ProtocolPlan[RunT]:
        """The steps this engine's sessions run."""

    @abc.abstractmethod
    def _open_run(
        self, session: SessionRecord, subject: Any, journal: Journal, budget: TokenBudget, *, resumed: bool
    ) -> AbstractAsyncContextManager[RunT]:
        """The run of ``session`` on ``subject`` (a task, a question), and the resources it holds while it runs."""

    @abc.abstractmethod
    def _started_event(self, run: RunT, resumed: bool) -> SessionStarted:
        """What announces the session on the bus once its run is built."""

    def _time_limits(self) -> tuple[float | None, float | None]:
        """The session's and each loop round's time limit in seconds (None: no limit); checkpoints excluded."""
        return None, None

    def _resume_command(self, run: RunT) -> str:
        """The command that continues ``run``'s session, for the messages of a stopped session."""
        return f"debatecode solve {run.session.task_path} --resume {run.session_id}"

    # -- hooks -------------------------------------------------------------

    async def _early_stop(self, run: RunT, step: str) -> str | None:
        """After a before-loop step: why the loop can be skipped, or None."""
        return None

    def _round_scores(self, run: RunT, round_no: int) -> tuple[dict[str, int], str | None]:
        """Each participant's satisfaction after ``round_no``, and the leader if there is one."""
        return {}, None

    def _checkpoint_summary(self, run: RunT, round_no: int) -> str:
        """What the human sees at the checkpoint after ``round_no``."""
        return f"round {round_no}"

    async def _after_loop(self, run: RunT) -> None:
        """After the round loop ended (by a check, the human or the round cap): escalate if needed."""

    @abc.abstractmethod
    async def _finish(
        self, run: RunT, status: SessionStatus, error: str | None, started: float, prior_tokens: int
    ) -> Any:
        """Write the session's outcome and outputs; return what the caller gets."""

    # -- the session's life -------------------------------------------------

    def _new_session(self, session_id: str | None, **fields: Any) -> SessionRecord:
        """A ``pending`` record for a new session of this driver's config; ``fields`` are the kind's own.

        Raises:
            UnsafeName: ``session_id`` cannot name the session's folders and branch (nothing is created).
        """
        return SessionRecord(
            id=check_name(session_id, "session id") if session_id is not None else new_session_id(),
            status="pending",
            model=self.config.model,
            initiated_by=current_user(),
            **fields,
        )

    async def _run_new(self, session: SessionRecord, subject: Any) -> Any:
        """Store ``session`` and run it to the end, holding its lease; settle it if anything unexpected escapes.

        Raises:
            SessionBusy: another process holds the session's lease.
            StoreError: the session could not be created (nothing else is lost).
        """
        with session_lease(self.store, session.id, resuming=False):
            try:
                self.store.create_session(session)
                return await self._run_session(session, subject, resumed=False)
            except BaseException as exc:
                settle_session(self.store, session.id, exc)
                raise

    async def _run_stored(self, session: SessionRecord, subject: Any) -> Any:
        """Continue the stored ``session`` from its journal, holding its lease; settle it if anything unexpected escapes.

        Raises:
            SessionBusy: another process runs or resumes the session (it is left alone).
        """
        with session_lease(self.store, session.id, resuming=True):
            try:
                return await self._run_session(session, subject, resumed=True)
            except BaseException as exc:
                settle_session(self.store, session.id, exc)
                raise

    async def _run_session(self, session: SessionRecord, subject: Any, *, resumed: bool) -> Any:
        """The setup every session shares: its token budget and journal, its run, then the plan within its time limit."""
        started = time.monotonic()
        prior_tokens = session.prompt_tokens + session.completion_tokens if resumed else 0
        budget = TokenBudget(max(0, self.config.token_budget - prior_tokens))
        journal = Journal(session.id, self.bus, self.store.turns(session.id) if resumed else [])
        async with self._open_run(session, subject, journal, budget, resumed=resumed) as run:
            self.bus.emit(self._started_event(run, resumed))
            if resumed:
                await self._note_resume(run)
            limit, _per_round = self._time_limits()
            self._deadlines[session.id] = asyncio.get_running_loop().time() + limit if limit else math.inf
            try:
                return await self._drive_plan(run, self.plan(), started, prior_tokens)
            finally:
                self._deadlines.pop(session.id, None)
                self._round_deadlines.pop(session.id, None)

    # -- resuming ----------------------------------------------------------

    async def _note_resume(self, run: RunT) -> None:
        """On a resume: journal the settings given now that differ from the stored ones, and store the new ones.

        The turn ``r0/resume/human/settings-N`` reads "resumed with: token_budget 200000 → 5000000"; the
        session's stored config becomes the effective one, so a later resume keeps the new limits.

        Raises:
            StoreError: the session's config could not be written.
        """
        from debatecode.protocol.resume import resume_note, setting_changes

        changes = setting_changes(run.session.config, self.config)
        if not changes:
            return
        number = 1 + len(run.journal.turns(phase="resume"))
        turn = run.tool_turn(
            round_no=0,
            phase="resume",
            agent_id="human",
            role="human",
            kind=f"settings-{number}",
            content=resume_note(changes),
            metadata={"changes": [{"key": c.key, "before": c.before, "after": c.after} for c in changes]},
        )
        await run.record(turn)
        config = {**run.session.config, **self.config.model_dump(mode="json")}
        self.store.update_session(run.session_id, config=config)
        run.session = run.session.model_copy(update={"config": config})
        logger.info("session %s %s", run.session_id, turn.content)

    # -- finishing ---------------------------------------------------------

    def _session_totals(self, run: RunT, started: float, prior_tokens: int) -> dict[str, Any]:
        """The session's rounds, tokens, cost and time so far, for the fields of its ``SessionFinished``.

        The stored session's tokens and cost count only when ``prior_tokens`` says it ran before
        (a resume); its stored duration always counts.
        """
        usage = run.deps.budget.usage
        session = run.session
        return {
            "total_rounds": run.state.rounds_done,
            "prompt_tokens": (session.prompt_tokens if prior_tokens else 0) + usage.prompt_tokens,
            "completion_tokens": (session.completion_tokens if prior_tokens else 0) + usage.completion_tokens,
            "cost_usd": (session.cost_usd if prior_tokens else 0.0) + usage.cost_usd,
            "duration_s": session.duration_s + (time.monotonic() - started),
        }

    def _emit_finished(
        self,
        run: RunT,
        status: SessionStatus,
        outcome: dict[str, Any],
        error: str | None,
        fields: dict[str, Any],
        *,
        noun: str = "session",
    ) -> SessionRecord:
        """Emit ``SessionFinished`` and return the finished session, as the store recorder writes it.

        The record is built here, timestamps included, rather than read back from the store. ``noun`` names
        the session in the log line when the store cannot record it.

        Raises:
            StoreError: the store recorder could not write the end of the session (logged first).
        """
        now = utcnow()
        fields = {**fields, "updated_at": now}
        if status in SETTLED_STATUSES:
            fields.setdefault("completed_at", now)
        try:
            self.bus.emit(SessionFinished(run.session_id, status, outcome, error, fields))
        except StoreError:
            logger.exception("could not record the end of %s %s", noun, run.session_id)
            raise
        return SessionRecord.model_validate(
            run.session.model_dump() | fields | {"status": status, "outcome": outcome, "error": error}
        )

    # -- driving -----------------------------------------------------------

    async def _drive_plan(self, run: RunT, plan: ProtocolPlan[RunT], started: float, prior_tokens: int) -> Any:
        """Run ``plan`` over ``run``; failures the engine expects end the session with a status, not a traceback."""
        status: SessionStatus = "completed"
        error: str | None = None
        try:
            await self._run_steps(run, plan)
        except BudgetExceeded as exc:
            status, error = "budget_exceeded", str(exc)
            logger.warning("session %s stopped: %s", run.session_id, exc)
        except (ModelError, SandboxError, VersionControlError) as exc:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            logger.error("session %s failed: %s", run.session_id, exc)
        except GateRejected as exc:
            status, error = "cancelled", str(exc)
        except StepTimedOut as exc:
            status, error = "failed", f"timed out: {exc}"
            logger.error("session %s timed out: %s", run.session_id, exc)
        except CheckpointPaused as exc:
            status, error = "paused", str(exc)
            logger.warning("session %s paused: %s", run.session_id, exc)
        except (asyncio.CancelledError, KeyboardInterrupt):
            await self._finish(run, "cancelled", "interrupted by the user", started, prior_tokens)
            raise
        return await self._finish(run, status, error, started, prior_tokens)

    async def _run_steps(self, run: RunT, plan: ProtocolPlan[RunT]) -> None:
        early: str | None = None
        for step in plan.before:
            await self._phase(run, step, 0)
            if (early := await self._early_stop(run, step.name)) is not None:
                break
        if early is not None:
            run.state.stop_reason = early
            self.bus.emit(RoundCompleted(run.session_id, 0, {}, self._round_scores(run, 0)[1], early))
        elif plan.loop:
            await self._loop(run, plan)
        for step in plan.after:
            if early is None or step.name not in plan.skipped_on_early_stop:
                await self._phase(run, step, 0)

    async def _phase(self, run: RunT, step: Step[RunT], round_no: int) -> None:
        """Run ``step`` (and its gate) within the session's time limit, and a loop step also within its round's."""
        deadline, what = self._deadline(run, round_no)
        if deadline == math.inf:
            await self._step(run, step, round_no)
            return
        try:
            async with asyncio.timeout_at(deadline) as scope:
                await self._step(run, step, round_no)
        except TimeoutError:
            if not scope.expired():
                raise
            raise StepTimedOut(
                f"{step.name} ran past {what}; the turns so far are saved, `{self._resume_command(run)}` continues"
            ) from None

    def _deadline(self, run: RunT, round_no: int) -> tuple[float, str]:
        """When the current step must end (the loop's clock), and which limit that is, in words."""
        limit, per_round = self._time_limits()
        loop = asyncio.get_running_loop()
        deadline = self._deadlines.get(run.session_id, loop.time() + limit if limit else math.inf)
        what = f"the debate's time limit of {limit:g}s (--timeout)" if limit else ""
        if round_no and per_round:
            started_round, round_deadline = self._round_deadlines.get(run.session_id, (0, 0.0))
            if started_round != round_no:
                round_deadline = loop.time() + per_round
                self._round_deadlines[run.session_id] = (round_no, round_deadline)
            if round_deadline < deadline:
                deadline = round_deadline
                what = f"round {round_no}'s time limit of {per_round:g}s (--round-timeout)"
        return deadline, what

    async def _step(self, run: RunT, step: Step[RunT], round_no: int) -> None:
        self.bus.emit(PhaseStarted(run.session_id, step.name, round_no))
        summary = await step.execute(run, round_no)
        self.bus.emit(PhaseCompleted(run.session_id, step.name, round_no, summary))
        if not await self.gates.check(run, step.name, round_no):
            raise GateRejected(f"rejected at the {step.name} gate")

    async def _loop(self, run: RunT, plan: ProtocolPlan[RunT]) -> None:
        history: list[Any] = []
        for round_no in range(1, plan.rounds + 1):
            for step in plan.loop:
                await self._phase(run, step, round_no)
            run.state.rounds_done = round_no
            stop = await plan.check(run, round_no, history)
            scores, leader = self._round_scores(run, round_no)
            self.bus.emit(RoundCompleted(run.session_id, round_no, scores, leader, stop))
            if stop is not None:
                run.state.stop_reason = stop
                break
            if round_no < plan.rounds and await self._checkpoint(run, round_no) == "end":
                run.state.stop_reason = "ended by the human at a checkpoint"
                run.state.ended_by_human = True
                break
        else:
            run.state.stop_reason = f"max rounds ({plan.rounds})" if plan.rounds else "no debate rounds configured"
        await self._after_loop(run)

    async def _checkpoint(self, run: RunT, round_no: int) -> str:
        """Continue / Guide / End after ``round_no``; journaled so a resume does not ask again."""
        human = run.human
        if human is None:
            return "continue"

        async def ask() -> TurnRecord:
            timeout = self.config.checkpoints.timeout_s
            summary = self._checkpoint_summary(run, round_no)
            self.bus.emit(CheckpointRequested(run.session_id, round_no, summary))
            try:
                # Awaited directly, not as a task (wait_for): the human starts waiting before anything else
                # runs, so an answer to the announcement cannot arrive while nobody waits for it.
                async with asyncio.timeout(timeout):
                    decided = await human.checkpoint(round_no, summary)
            except TimeoutError:
                raise CheckpointPaused(
                    f"no answer at the checkpoint after round {round_no} within {timeout:g}s; "
                    f"the session is paused and `--resume {run.session_id}` continues it"
                ) from None
            return run.tool_turn(
                round_no=round_no,
                phase="checkpoint",
                agent_id="human",
                role="human",
                kind="decision",
                content=f"{decided.action}" + (f": {decided.guidance}" if decided.guidance else ""),
                metadata={"decision": decided.model_dump()},
            )

        turn = await run.journal.replay_or_do(turn_key(round_no, "checkpoint", "human", "decision"), ask)
        await run.record(turn)
        decision = CheckpointDecision.model_validate(turn.metadata.get("decision", {}))
        if decision.action == "guide" and decision.guidance:
            run.state.guidance.append(decision.guidance)
        self.bus.emit(CheckpointDecided(run.session_id, round_no, decision.action, decision.guidance))
        return decision.action
