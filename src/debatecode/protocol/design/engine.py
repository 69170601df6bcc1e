"""``DesignEngine``: runs a design debate from a question to a decision record.

It drives its plan through the same :class:`~debatecode.protocol.driver.SessionDriver`
as the code engine, so a design debate is journaled turn by turn in the same
store, emits the same events, stops at the same human checkpoints and gates,
and resumes from its stored turns after a crash. What differs is the plan
(``steps.py``, ``synthesis.py``) and the output: a decision record under the
repository's ``docs/decisions/`` and the session folder
``.debatecode/debates/<id>/``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatecode.config import DebateConfig
from debatecode.errors import TaskError
from debatecode.llm.budget import TokenBudget
from debatecode.llm.client import LLMClient
from debatecode.protocol.allowance import TokenAllowance
from debatecode.protocol.deps import SessionDeps
from debatecode.protocol.design.adr import write_adr
from debatecode.protocol.design.clarify import with_clarification
from debatecode.protocol.design.escalation import EscalationStep
from debatecode.protocol.design.files import DebateFiles
from debatecode.protocol.design.question import DesignQuestion
from debatecode.protocol.design.records import DecisionRecord
from debatecode.protocol.design.run import DesignRun, DesignState
from debatecode.protocol.design.settings import DesignSettings
from debatecode.protocol.design.steps import (
    AnalysisStep,
    ArgumentsStep,
    ModerationStep,
    PositionsStep,
    RebuttalsStep,
    design_round_check,
    moderator_agent,
)
from debatecode.protocol.design.synthesis import SynthesisReviewStep, SynthesisStep
from debatecode.protocol.driver import ProtocolPlan, SessionDriver
from debatecode.protocol.events import EventBus, RoundCompleted, SessionStarted
from debatecode.protocol.human import HumanInterface
from debatecode.protocol.journal import Journal
from debatecode.store.records import SessionRecord, SessionStatus
from debatecode.store.repository import SessionStore

__all__ = ["DesignEngine", "DesignResult"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DesignResult:
    """What a finished (or stopped) design debate produced."""

    session: SessionRecord
    status: SessionStatus
    record: DecisionRecord | None
    adr_path: Path | None
    folder: Path
    """The session folder (metadata.json, round-N.md, convergence.json)."""
    error: str | None = None

    @property
    def escalated(self) -> bool:
        """The debaters could not settle it and no human chose: the record says so."""
        return self.record is not None and self.record.status == "escalated"


class DesignEngine(SessionDriver[DesignRun]):
    """Runs design debates over a model client and a store (no sandbox: nothing is executed)."""

    def __init__(
        self,
        config: DebateConfig,
        *,
        llm: LLMClient,
        store: SessionStore,
        repo: Path,
        bus: EventBus | None = None,
        human: HumanInterface | None = None,
    ) -> None:
        super().__init__(config, store=store, bus=bus, human=human)
        self.llm = llm
        self.repo = repo.resolve()
        self.files_root = files_root(config.store_url, self.repo)

    @property
    def design(self) -> DesignSettings:
        return self.config.design

    def plan(self) -> ProtocolPlan[DesignRun]:
        return ProtocolPlan(
            before=[AnalysisStep(), PositionsStep()],
            loop=[ArgumentsStep(), RebuttalsStep(), ModerationStep()],
            after=[SynthesisStep(), SynthesisReviewStep()],
            check=design_round_check,
            rounds=self.design.max_rounds,
        )

    async def debate(self, question: DesignQuestion, *, session_id: str | None = None) -> DesignResult:
        """Start a design debate on ``question`` and run it to its decision record.

        Raises:
            UnsafeName: ``session_id`` cannot name the debate's folder (nothing is created).
            SessionBusy: another process holds that session's lease.
            StoreError: the session could not be created (nothing else is lost).
        """
        session = self._new_session(
            session_id,
            kind="design",
            task_title=question.title,
            task_path=question.path,
            task_hash=question.text_hash,
            topic=question.text,
            topology="design",
            config={**self.config.model_dump(mode="json"), "question": question.model_dump(mode="json")},
            out_dir=str(self.repo),
            repo_path=str(self.repo),
            branch="",
        )
        result: DesignResult = await self._run_new(session, question)
        return result

    async def resume(self, session_id: str, question: DesignQuestion) -> DesignResult:
        """Continue a stored design debate from its last journaled turn.

        Raises:
            SessionNotFound: no such session.
            SessionBusy: another process runs or resumes it.
            TaskError: the session is not a design debate, or the question or its context changed.
        """
        session = self.store.get_session(session_id)
        if session.kind != "design":
            raise TaskError(
                session_id, "this session is a code debate", fix=f"run `debatecode solve --resume {session_id}`"
            )
        if session.task_hash != question.text_hash:
            raise TaskError(
                question.path,
                f"the question or its context changed since debate {session_id} started",
                fix="restore them, or start a new debate",
            )
        result: DesignResult = await self._run_stored(session, question)
        return result

    def folder(self, session_id: str) -> DebateFiles:
        """The debate's session folder: ``.debatecode/debates/<id>/`` next to the SQLite store (else in the repo)."""
        return DebateFiles(self.files_root, session_id)

    def _time_limits(self) -> tuple[float | None, float | None]:
        return self.design.timeout_s, self.design.round_timeout_s

    def _resume_command(self, run: DesignRun) -> str:
        return f"debatecode debate --resume {run.session_id}"

    @asynccontextmanager
    async def _open_run(
        self, session: SessionRecord, subject: Any, journal: Journal, budget: TokenBudget, *, resumed: bool
    ) -> AsyncIterator[DesignRun]:
        """The debate's run (the moderator, the state) and its session folder, with ``metadata.json`` written."""
        question: DesignQuestion = subject
        per_round = self.design.token_budget_per_round or None
        deps = SessionDeps(
            llm=self.llm,
            bus=self.bus,
            journal=journal,
            budget=budget,
            allowance=TokenAllowance(per_round) if per_round else None,
            human=self.human,
        )
        mode = question.mode or self.design.mode
        state = DesignState(question=question, mode=mode)
        files = self.folder(session.id)
        run = DesignRun(
            session=session,
            config=self.config,
            agents=[moderator_agent(self.config, self.llm)],
            state=state,
            deps=deps,
            design=self.design,
            files=files,
        )
        await asyncio.to_thread(
            files.write_metadata,
            {
                "session_id": session.id,
                "topic": question.text,
                "title": question.title,
                "started_at": session.created_at.isoformat(),
                "mode": mode,
                "model": self.config.model,
                "rounds_planned": "adaptive",
                "min_rounds": self.design.min_rounds,
                "max_rounds": self.design.max_rounds,
                "status": "running",
            },
        )
        yield run

    def _started_event(self, run: DesignRun, resumed: bool) -> SessionStarted:
        return SessionStarted(run.session_id, run.session, [], "none", resumed, len(run.journal))

    async def _after_loop(self, run: DesignRun) -> None:
        """Escalate an unsettled debate; each time the person continues with guidance, run that round and ask again.

        The escalation step decides whether a guided round is due (``state.guided_round``, at most
        ``MAX_GUIDED_ROUNDS``); the round runs through the same phases, time limits and events as any other.
        """
        escalation = EscalationStep()
        await self._phase(run, escalation, 0)
        while (round_no := run.state.guided_round) is not None:
            run.state.guided_round = None
            for step in self.plan().loop:
                await self._phase(run, step, round_no)
            run.state.rounds_done = round_no
            stop = await design_round_check(run, round_no, [])
            scores, leader = self._round_scores(run, round_no)
            self.bus.emit(RoundCompleted(run.session_id, round_no, scores, leader, stop))
            run.state.stop_reason = stop or f"round {round_no}, run on the person's guidance, ended"
            await self._phase(run, escalation, 0)

    async def _checkpoint(self, run: DesignRun, round_no: int) -> str:
        """The shared checkpoint; guidance given there is also kept in the round's record and its ``round-N.md``."""
        given = len(run.state.guidance)
        action = await super()._checkpoint(run, round_no)
        if len(run.state.guidance) > given and 0 < round_no <= len(run.state.rounds):
            record = run.state.round(round_no)
            record.guidance = run.state.guidance[-1]
            if run.files is not None:
                await asyncio.to_thread(run.files.write_round, record, run.state.names())
        return action

    def _round_scores(self, run: DesignRun, round_no: int) -> tuple[dict[str, int], str | None]:
        if round_no < 1 or round_no > len(run.state.rounds):
            return {}, None
        return run.state.rounds[round_no - 1].scores(), None

    def _checkpoint_summary(self, run: DesignRun, round_no: int) -> str:
        record = run.state.round(round_no)
        names = run.state.names()
        scores = ", ".join(f"{names.get(k, k)} {v}" for k, v in record.scores().items())
        verdict = run.state.decisions[-1]["reason"] if run.state.decisions else ""
        return f"Moderator: {record.summary}\nSatisfaction: {scores or 'not given'}\nGate reviewer: {verdict}"

    async def _finish(
        self, run: DesignRun, status: SessionStatus, error: str | None, started: float, prior_tokens: int
    ) -> DesignResult:
        record = run.state.record
        if record is not None:
            record = run.state.record = with_clarification(record, run.state.clarification)
        adr_path: Path | None = None
        if record is not None and status == "completed":
            adr_path = _written_before(run.session)
            if adr_path is None:
                adr_path = await asyncio.to_thread(write_adr, self.repo, record, directory=self.design.adr_dir)
            number = int(adr_path.name.split("-")[1]) if adr_path.name.startswith("adr-") else record.number
            record = record.model_copy(update={"number": number})
            run.state.record = record
        fields: dict[str, Any] = {
            **self._session_totals(run, started, prior_tokens),
            "final_consensus_score": _mean(run.state.scores()),
        }
        outcome: dict[str, Any] = {
            "method": "design",
            "stop_reason": run.state.stop_reason,
            "adr": str(adr_path) if adr_path else None,
            "record_status": record.status if record else None,
            "confidence": record.recommendation.confidence if record else None,
            "recommendation": record.recommendation.text if record else None,
            "escalation": run.state.escalation.model_dump(mode="json") if run.state.escalation else None,
            "perspectives": list(run.state.perspectives),
        }
        files = run.files
        if files is not None:
            await asyncio.to_thread(
                files.write_metadata,
                {
                    "status": status,
                    "completed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "rounds_completed": run.state.rounds_done,
                    "adr": str(adr_path) if adr_path else None,
                    "error": error,
                },
            )
        final = self._emit_finished(run, status, outcome, error, fields, noun="design debate")
        return DesignResult(
            session=final,
            status=status,
            record=record,
            adr_path=adr_path,
            folder=files.path if files is not None else self.repo,
            error=error,
        )


def _written_before(session: SessionRecord) -> Path | None:
    """The record this debate already wrote, if it finished before and the file is still there.

    Resuming a finished debate replays its turns to the same record: it keeps its one ADR, not a second number.
    """
    written = session.outcome.get("adr")
    path = Path(written) if isinstance(written, str) and written else None
    return path if path is not None and path.is_file() else None


def files_root(store_url: str, repo: Path) -> Path:
    """Where ``.debatecode/debates/`` goes: beside a SQLite store's file, else in ``repo``."""
    prefix = "sqlite:///"
    if not store_url.startswith(prefix) or store_url in (prefix, f"{prefix}:memory:"):
        return repo
    database = Path(store_url[len(prefix) :].split("?", 1)[0])
    folder = (database if database.is_absolute() else Path.cwd() / database).parent
    return folder.parent if folder.name == ".debatecode" else folder


def _mean(scores: dict[str, int]) -> float | None:
    return sum(scores.values()) / len(scores) / 100 if scores else None
