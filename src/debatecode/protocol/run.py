"""``DebateRun``: one session's live state and the services its phases use.

Phases never call the model, the store or the event bus directly. They ask
the run, which journals every turn: a turn whose key is already stored (a
resumed or replayed session) is returned from the journal instead of calling
the model again, so a resume neither loses nor duplicates turns. Human
decisions (checkpoints, gates) and tool results are journaled the same way.

The code-specific state (candidates, tests, versions) lives in
:class:`~debatecode.protocol.workspace.CodeWorkspace`, reachable as ``run.ws``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import Prompt
from debatecode.config import DebateConfig
from debatecode.llm.client import LLMClient
from debatecode.llm.parsing import extract_code
from debatecode.protocol.context import RoundBudgetExceeded, TokenAllowance, is_rubber_stamp
from debatecode.protocol.events import AgentStatusChanged, EventBus, TurnCompleted
from debatecode.protocol.state import SessionRecord, TurnRecord, TurnStatus

if TYPE_CHECKING:
    from debatecode.protocol.human import HumanInterface
    from debatecode.protocol.workspace import CodeWorkspace

__all__ = ["DebateRun", "gather_all", "turn_key"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_PHASES = (
    "dehallucination",
    "self_evolvement",
    "proposal",
    "critique",
    "review",
    "optimization",
    "adversarial",
    "convergence",
)

_RUBBER_STAMP_NUDGE = (
    "Your reply was rejected as a rubber stamp: it approves without reasoning. "
    "State what you checked and why it holds, or what fails and why."
)


def turn_key(round_no: int, phase: str, agent_id: str, kind: str) -> str:
    """The deterministic identity of a turn, stable across a crash and resume."""
    return f"r{round_no}/{phase}/{agent_id}/{kind}"


@dataclass
class DebateRun:
    """Everything one session's phases share."""

    session: SessionRecord
    config: DebateConfig
    agents: list[Agent]
    llm: LLMClient
    bus: EventBus
    ws: CodeWorkspace
    journal: dict[str, TurnRecord] = field(default_factory=dict)
    """Stored turns by key: the turns a resumed session replays."""
    next_seq: int = 1
    outcome: dict[str, Any] = field(default_factory=dict)
    rounds_done: int = 0
    reused_turns: int = 0
    guidance: list[str] = field(default_factory=list)
    """Human guidance from checkpoints, shown to every later prompt."""
    clarifications: list[dict[str, str]] = field(default_factory=list)
    """Questions and answers from dehallucination."""
    plan: str | None = None
    """The Designer's plan (CPDE), shown to implementers."""
    planning_style: str = "dpde"
    reviews: list[dict[str, Any]] = field(default_factory=list)
    """Every review: round, reviewer, role, satisfaction, concerns."""
    dissents: list[dict[str, str]] = field(default_factory=list)
    """Positions that disagree with the outcome, attributed to roles."""
    risks: list[dict[str, str]] = field(default_factory=list)
    """The risk register: source, severity, description, status."""
    stop_reason: str = ""
    escalation: str | None = None
    ended_by_human: bool = False
    lessons: list[str] = field(default_factory=list)
    """Accumulated wisdom from earlier sessions, retrieved for this task and shown to every prompt."""
    reflections: dict[str, list[Any]] = field(default_factory=dict)
    """Reflexion reflections by agent, oldest first (``protocol.reflexion.Reflection``)."""
    feedback: dict[str, str] = field(default_factory=dict)
    """Validation feedback from the hook points, by the agent whose code it is about."""
    dropped: list[dict[str, str]] = field(default_factory=list)
    """Agents taken out of the debate after their model failed, and why."""
    human: HumanInterface | None = None
    """The person overseeing the debate, when running interactively."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Services the engine attaches for phases: ``topology``, ``ordering``, ``satisfaction``, ``allowance``."""

    def __post_init__(self) -> None:
        self._semaphore = asyncio.Semaphore(self.config.max_concurrency)
        self._lock = asyncio.Lock()

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def task(self) -> Any:
        return self.ws.task

    # -- participants -----------------------------------------------------

    def agent(self, agent_id: str) -> Agent:
        return next(a for a in self.agents if a.id == agent_id)

    def with_role(self, role: str) -> list[Agent]:
        return [a for a in self.agents if a.role.name == role]

    def first_with_role(self, role: str) -> Agent | None:
        found = self.with_role(role)
        return found[0] if found else None

    def authors(self) -> list[Agent]:
        """The agents that write candidates (generators or implementers)."""
        return [a for a in self.agents if a.role.name in ("generator", "implementer")]

    def drop_agent(self, agent_id: str, reason: str) -> None:
        """Take a failed agent out of the debate; its topology subtree is rebalanced to its siblings."""
        topology = self.extras.get("topology")
        if topology is not None and agent_id in topology and len(topology) > 1:
            topology.remove(agent_id)
        self.agents = [a for a in self.agents if a.id != agent_id]
        self.ws.candidates.pop(agent_id, None)
        self.dropped.append({"agent": agent_id, "reason": reason})
        self.risks.append(
            {
                "source": agent_id,
                "severity": "medium",
                "description": f"dropped from the debate: {reason}",
                "status": "open",
            }
        )
        logger.warning("%s dropped from the debate: %s", agent_id, reason)

    def status(self, agent: Agent | str, status: str, phase: str = "") -> None:
        agent_id = agent if isinstance(agent, str) else agent.id
        self.bus.emit(AgentStatusChanged(self.session_id, agent_id, status, phase))

    def context(self, agent_id: str | None = None) -> dict[str, Any]:
        """What prompts show: clarifications, the plan, human guidance, and the validation feedback on ``agent_id``'s code."""
        return {
            "clarifications": self.clarifications,
            "plan": self.plan,
            "guidance": self.guidance,
            "feedback": self.feedback.get(agent_id) if agent_id else None,
            "lessons": self.lessons,
        }

    # -- turns ------------------------------------------------------------

    def stored(self, round_no: int, phase: str, agent_id: str, kind: str) -> TurnRecord | None:
        return self.journal.get(turn_key(round_no, phase, agent_id, kind))

    async def ask(
        self,
        agent: Agent,
        prompt: Prompt,
        *,
        phase: str,
        round_no: int,
        kind: str,
        want_code: bool = False,
        needs_reasoning: bool = False,
    ) -> TurnRecord:
        """One model turn, not yet persisted (``record`` it, or ``evaluate`` it when it carries code).

        A stored turn with the same key is returned instead of calling the model.
        With ``needs_reasoning``, a rubber-stamp reply is recorded as ``rejected``
        and the question is asked once more.

        Raises:
            ModelError: the model call failed for good.
            BudgetExceeded: the session's token budget is spent.
        """
        key = turn_key(round_no, phase, agent.id, kind)
        stored = self.journal.get(key)
        if stored is not None:
            self.reused_turns += 1
            return stored
        turn = await self._call(agent, prompt, key=key, phase=phase, round_no=round_no, kind=kind, want_code=want_code)
        # A base model cannot follow the nudge (and greedy decoding would repeat itself): only chat replies are re-asked.
        if needs_reasoning and prompt.style == "chat" and is_rubber_stamp(turn.content):
            rejected = turn.model_copy(update={"key": f"{key}:rubber-stamp", "status": "rejected"})
            await self.record(rejected)
            logger.info("%s's %s reply was a rubber stamp; asking once more", agent.id, kind)
            retry = Prompt(
                messages=[*prompt.messages[:-1], _nudge(prompt.messages[-1], prompt.style)],
                style=prompt.style,
                prefix=prompt.prefix,
                stop=prompt.stop,
                max_tokens=prompt.max_tokens,
            )
            turn = await self._call(
                agent, retry, key=key, phase=phase, round_no=round_no, kind=kind, want_code=want_code
            )
            turn = turn.model_copy(update={"metadata": {**turn.metadata, "rubber_stamp_retry": True}})
        return turn

    async def _call(
        self, agent: Agent, prompt: Prompt, *, key: str, phase: str, round_no: int, kind: str, want_code: bool
    ) -> TurnRecord:
        default_max = (
            self.config.llm.completion_max_tokens if prompt.style == "completion" else self.config.llm.max_tokens
        )
        max_tokens = prompt.max_tokens or default_max
        allowance: TokenAllowance | None = self.extras.get("allowance")
        budget_round = round_no if round_no else -(_PHASES.index(phase) + 1 if phase in _PHASES else 99)
        remaining = allowance.remaining(agent.id, budget_round) if allowance is not None else None
        if remaining is not None and remaining <= 0:
            logger.info("%s sits out %s: its round token budget is spent", agent.id, kind)
            return self._sat_out(agent, key=key, phase=phase, round_no=round_no, kind=kind, want_code=want_code)
        if remaining is not None:
            max_tokens = min(max_tokens, remaining)
        async with self._semaphore:
            self.status(agent, "thinking", phase)
            completion = await self.llm.complete(
                agent.model,
                prompt.messages,
                max_tokens=max_tokens,
                temperature=agent.temperature,
                seed=agent.seed,
                stop=prompt.stop or None,
                tags={"phase": phase, "agent": agent.id, "round": str(round_no), "kind": kind, "role": agent.role.name},
            )
            self.status(agent, "idle", phase)
        if allowance is not None:
            try:
                allowance.charge(agent.id, budget_round, completion.completion_tokens)
            except RoundBudgetExceeded as exc:
                logger.info("%s went over its round token budget (%s of %s)", agent.id, exc.spent, exc.allowance)
        code = None
        if want_code:
            code = extract_code(completion.text, entry_point=self.ws.task.entry_point, prompt_prefix=prompt.prefix)
            if code is not None and prompt.style == "chat":
                code = self.ws.task.with_prompt_context(code)
        status: TurnStatus = "no_code" if want_code and code is None else "ok"
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
                "temperature": agent.temperature,
                "seed": agent.seed,
                "usage_estimated": completion.usage_estimated,
                "prompt_style": prompt.style,
            },
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=completion.cost_usd,
            response_time_ms=int(completion.latency_s * 1000),
        )

    def _sat_out(self, agent: Agent, *, key: str, phase: str, round_no: int, kind: str, want_code: bool) -> TurnRecord:
        return TurnRecord(
            id=uuid.uuid4().hex,
            session_id=self.session_id,
            seq=0,
            key=key,
            round=round_no,
            phase=phase,
            agent_id=agent.id,
            agent_role=agent.role.name,
            provider="",
            model=agent.model,
            content="",
            status="no_code" if want_code else "error",
            metadata={"kind": kind, "sat_out": "round token budget spent"},
        )

    def tool_turn(
        self,
        *,
        round_no: int,
        phase: str,
        agent_id: str,
        role: str,
        kind: str,
        content: str,
        tool_calls: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> TurnRecord:
        """A turn taken by a tool or a human rather than a model (not yet persisted)."""
        key = turn_key(round_no, phase, agent_id, kind)
        stored = self.journal.get(key)
        if stored is not None:
            self.reused_turns += 1
            return stored
        return TurnRecord(
            id=uuid.uuid4().hex,
            session_id=self.session_id,
            seq=0,
            key=key,
            round=round_no,
            phase=phase,
            agent_id=agent_id,
            agent_role=role,
            provider="tool" if role != "human" else "human",
            model="",
            content=content,
            tool_calls=tool_calls or [],
            metadata={"kind": kind, **(metadata or {})},
        )

    async def record(self, turn: TurnRecord) -> TurnRecord:
        """Persist a completed turn (once), giving it the next sequence number."""
        if turn.key in self.journal:
            self.bus.emit(TurnCompleted(self.session_id, self.journal[turn.key], reused=True))
            return self.journal[turn.key]
        async with self._lock:
            turn = turn.model_copy(update={"seq": self.next_seq})
            self.next_seq += 1
            self.journal[turn.key] = turn
        self.bus.emit(TurnCompleted(self.session_id, turn))
        return turn

    def turns(self, phase: str | None = None, kind: str | None = None) -> list[TurnRecord]:
        """Recorded turns in order, optionally of one phase and kind."""
        found = [
            t
            for t in self.journal.values()
            if (phase is None or t.phase == phase) and (kind is None or t.metadata.get("kind") == kind)
        ]
        return sorted(found, key=lambda t: t.seq)


def _nudge(message: Any, style: str) -> Any:
    if style == "completion":
        return {"role": message["role"], "content": f"# {_RUBBER_STAMP_NUDGE}\n{message['content']}"}
    return {"role": message["role"], "content": f"{message['content']}\n\n{_RUBBER_STAMP_NUDGE}"}


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
