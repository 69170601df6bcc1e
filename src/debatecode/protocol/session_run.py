"""``SessionRun``: taking journaled turns in one session, whatever the session debates.

Steps never call the model, the store or the event bus directly. They ask
the run, which journals every turn: a turn whose key is already stored (a
resumed or replayed session) is returned from the journal instead of calling
the model again. A code debate's :class:`~debatecode.protocol.run.DebateRun`
and a design debate's :class:`~debatecode.protocol.design.run.DesignRun` both
build on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from debatecode._concurrency import gather_all
from debatecode.agents.agent import Agent
from debatecode.agents.prompts import Prompt
from debatecode.config import DebateConfig
from debatecode.llm.transport import Completion
from debatecode.protocol.allowance import RoundBudgetExceeded
from debatecode.protocol.deps import SessionDeps
from debatecode.protocol.events import AgentStatusChanged, EventBus
from debatecode.protocol.journal import Journal, turn_key
from debatecode.protocol.reply_quality import is_rubber_stamp
from debatecode.protocol.settings import PHASE_NAMES
from debatecode.store.records import SessionRecord, TurnRecord, TurnStatus

if TYPE_CHECKING:
    from debatecode.protocol.human import HumanInterface

__all__ = ["LoopState", "SessionRun", "gather_all"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_RUBBER_STAMP_NUDGE = (
    "Your reply was rejected as a rubber stamp: it approves without reasoning. "
    "State what you checked and why it holds, or what fails and why."
)


class LoopState(Protocol):
    """What the engine's round loop reads and writes of a session's state."""

    stop_reason: str
    rounds_done: int
    ended_by_human: bool
    guidance: list[str]
    """Human guidance from checkpoints, shown to every later prompt."""


@dataclass
class SessionRun:
    """One session as its steps see it: participants, ``state``, ``deps`` and the journal."""

    session: SessionRecord
    config: DebateConfig
    agents: list[Agent]
    state: LoopState
    deps: SessionDeps

    def __post_init__(self) -> None:
        self._semaphore = asyncio.Semaphore(self.config.max_concurrency)

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def journal(self) -> Journal:
        return self.deps.journal

    @property
    def bus(self) -> EventBus:
        return self.deps.bus

    @property
    def human(self) -> HumanInterface | None:
        return self.deps.human

    # -- participants -----------------------------------------------------

    def agent(self, agent_id: str) -> Agent:
        return next(a for a in self.agents if a.id == agent_id)

    def with_role(self, role: str) -> list[Agent]:
        return [a for a in self.agents if a.role.name == role]

    def first_with_role(self, role: str) -> Agent | None:
        found = self.with_role(role)
        return found[0] if found else None

    def order(self) -> list[str]:
        """Agent ids in roster order: the tie-break of every ranking."""
        return [a.id for a in self.agents]

    def status(self, agent: Agent | str, status: str, phase: str = "") -> None:
        agent_id = agent if isinstance(agent, str) else agent.id
        self.bus.emit(AgentStatusChanged(self.session_id, agent_id, status, phase))

    # -- turns ------------------------------------------------------------

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
        acceptable: Callable[[str], str | None] | None = None,
    ) -> TurnRecord:
        """One model turn, not yet persisted (``record`` it, or ``evaluate`` it when it carries code).

        A stored turn with the same key is returned instead of calling the model.
        With ``needs_reasoning``, a rubber-stamp reply is recorded as ``rejected``
        and the question is asked once more. ``acceptable`` generalises this: it
        reads a reply and returns None to accept it, else the nudge to re-ask with
        (once; the rejected reply is kept under ``<key>:rejected``).

        Raises:
            ModelError: the model call failed for good.
            BudgetExceeded: the session's token budget is spent.
        """
        key = turn_key(round_no, phase, agent.id, kind)

        async def call() -> TurnRecord:
            turn = await self._call(
                agent, prompt, key=key, phase=phase, round_no=round_no, kind=kind, want_code=want_code
            )
            # A base model cannot follow a nudge (and greedy decoding would repeat itself): only chat replies are re-asked.
            if prompt.style != "chat":
                return turn
            nudge, suffix, flag = None, "", ""
            if needs_reasoning and is_rubber_stamp(turn.content):
                nudge, suffix, flag = _RUBBER_STAMP_NUDGE, "rubber-stamp", "rubber_stamp_retry"
            elif acceptable is not None and (nudge := acceptable(turn.content)) is not None:
                suffix, flag = "rejected", "rejected_retry"
            if nudge is None:
                return turn
            rejected = turn.model_copy(update={"key": f"{key}:{suffix}", "status": "rejected"})
            await self.record(rejected)
            logger.info("%s's %s reply was rejected (%s); asking once more", agent.id, kind, suffix)
            retry = Prompt(
                messages=[*prompt.messages[:-1], _nudge(prompt.messages[-1], prompt.style, nudge)],
                style=prompt.style,
                prefix=prompt.prefix,
                stop=prompt.stop,
                max_tokens=prompt.max_tokens,
                output=prompt.output,
            )
            turn = await self._call(
                agent, retry, key=key, phase=phase, round_no=round_no, kind=kind, want_code=want_code
            )
            return turn.model_copy(update={"metadata": {**turn.metadata, flag: True}})

        return await self.journal.replay_or_do(key, call)

    async def _call(
        self, agent: Agent, prompt: Prompt, *, key: str, phase: str, round_no: int, kind: str, want_code: bool
    ) -> TurnRecord:
        max_tokens = self._max_tokens(prompt)
        allowance = self.deps.allowance
        budget_round = round_no if round_no else -(PHASE_NAMES.index(phase) + 1 if phase in PHASE_NAMES else 99)
        remaining = allowance.remaining(agent.id, budget_round) if allowance is not None else None
        if remaining is not None and remaining <= 0:
            logger.info("%s sits out %s: its round token budget is spent", agent.id, kind)
            return self.journal.new_turn(
                key=key,
                agent_id=agent.id,
                role=agent.role.name,
                kind=kind,
                provider="",
                model=agent.model,
                content="",
                status="no_code" if want_code else "error",
                metadata={"sat_out": "round token budget spent"},
            )
        if remaining is not None:
            max_tokens = min(max_tokens, remaining)
        async with self._semaphore:
            self.status(agent, "thinking", phase)
            completion = await self.deps.llm.complete(
                agent.model,
                prompt.messages,
                max_tokens=max_tokens,
                temperature=agent.temperature,
                seed=agent.seed,
                stop=prompt.stop or None,
                tags={"phase": phase, "agent": agent.id, "round": str(round_no), "kind": kind, "role": agent.role.name},
                budget=self.deps.budget,
            )
            self.status(agent, "idle", phase)
        if allowance is not None:
            try:
                allowance.charge(agent.id, budget_round, completion.completion_tokens)
            except RoundBudgetExceeded as exc:
                logger.info("%s went over its round token budget (%s of %s)", agent.id, exc.spent, exc.allowance)
        return self._turn_of(agent, prompt, completion, key=key, kind=kind, want_code=want_code)

    def _max_tokens(self, prompt: Prompt) -> int:
        default_max = (
            self.config.llm.completion_max_tokens if prompt.style == "completion" else self.config.llm.max_tokens
        )
        return prompt.max_tokens or default_max

    async def ask_together(
        self, asks: Sequence[tuple[Agent, Prompt]], *, phase: str, round_no: int, kind: str, want_code: bool = False
    ) -> list[TurnRecord]:
        """``ask`` for each (agent, prompt); asks that share a model, a prompt and a temperature are sampled together.

        A model that can batch (``local/``) decodes such a group in one call, ``llm.draft_batch``
        at most, the prompt evaluated once and charged to the group's first turn; each reply is
        its own journaled turn, drawn with its agent's seed. Another model, a round token
        allowance, or ``llm.draft_batch = 1`` gets one ``ask`` each. Journaled turns are replayed.

        Raises:
            ModelError: a model call failed for good.
            BudgetExceeded: the session's token budget is spent.
        """
        size = self.config.llm.draft_batch
        keys = [turn_key(round_no, phase, agent.id, kind) for agent, _ in asks]
        groups: dict[tuple[object, ...], list[int]] = {}
        for index, (agent, prompt) in enumerate(asks):
            if self.journal.holds(keys[index]):
                continue
            group = (agent.model, prompt.text, prompt.style, tuple(prompt.stop), prompt.max_tokens, agent.temperature)
            groups.setdefault(group, []).append(index)
        ready: dict[int, TurnRecord] = {}
        if size > 1 and self.deps.allowance is None:
            batches = [
                members[start : start + size]
                for members in groups.values()
                for start in range(0, len(members), size)
                if len(members) > 1 and self.deps.llm.can_batch(asks[members[0]][0].model)
            ]
            for turns in await gather_all(
                *(self._sample_together(asks, keys, b, phase, round_no, kind, want_code) for b in batches)
            ):
                ready.update(turns)

        async def one(index: int) -> TurnRecord:
            agent, prompt = asks[index]
            if index in ready:
                turn = ready[index]
                return await self.journal.replay_or_do(keys[index], lambda: _done(turn))
            return await self.ask(agent, prompt, phase=phase, round_no=round_no, kind=kind, want_code=want_code)

        return list(await gather_all(*(one(index) for index in range(len(asks)))))

    async def _sample_together(
        self,
        asks: Sequence[tuple[Agent, Prompt]],
        keys: Sequence[str],
        members: Sequence[int],
        phase: str,
        round_no: int,
        kind: str,
        want_code: bool,
    ) -> dict[int, TurnRecord]:
        first, prompt = asks[members[0]]
        agents = [asks[index][0] for index in members]
        async with self._semaphore:
            for agent in agents:
                self.status(agent, "thinking", phase)
            completions = await self.deps.llm.complete_n(
                first.model,
                prompt.messages,
                len(members),
                seeds=[agent.seed for agent in agents],
                max_tokens=self._max_tokens(prompt),
                temperature=first.temperature,
                stop=prompt.stop or None,
                tags={"phase": phase, "agent": first.id, "round": str(round_no), "kind": kind, "role": first.role.name},
                budget=self.deps.budget,
            )
            for agent in agents:
                self.status(agent, "idle", phase)
        return {
            index: self._turn_of(agent, prompt, completion, key=keys[index], kind=kind, want_code=want_code)
            for index, agent, completion in zip(members, agents, completions, strict=True)
        }

    def _turn_of(
        self, agent: Agent, prompt: Prompt, completion: Completion, *, key: str, kind: str, want_code: bool
    ) -> TurnRecord:
        code, removed = self._code_from(completion.text, prompt) if want_code else (None, ())
        if removed:
            logger.info("%s %s: removed from its code: %s", agent.id, kind, "; ".join(removed))
        status: TurnStatus = "no_code" if want_code and code is None else "ok"
        return self.journal.new_turn(
            key=key,
            agent_id=agent.id,
            role=agent.role.name,
            kind=kind,
            provider=completion.provider,
            model=completion.model,
            prompt=prompt.text,
            content=completion.text,
            code=code,
            status=status,
            metadata={
                "temperature": agent.temperature,
                "seed": agent.seed,
                "usage_estimated": completion.usage_estimated,
                "prompt_style": prompt.style,
                **({"prompt_dropped": list(completion.dropped)} if completion.dropped else {}),
                **({"cleaned": list(removed)} if removed else {}),
                **({"batch_size": completion.batch_size} if completion.batch_size > 1 else {}),
            },
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=completion.cost_usd,
            response_time_ms=int(completion.latency_s * 1000),
        )

    def gate_view(self, phase: str) -> tuple[str, dict[str, object]]:
        """What an approval gate after ``phase`` shows the reviewer: a one-line summary and the artifacts."""
        return f"after {phase}", {}

    def _code_from(self, text: str, prompt: Prompt) -> tuple[str | None, tuple[str, ...]]:
        """The code in a reply asked for code, and what cleaning removed from it.

        A session that never asks for code has none: design debates argue in prose.
        """
        return None, ()

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
        """A turn taken by a tool or a human rather than a model (not yet persisted); a journaled one when replaying."""
        key = turn_key(round_no, phase, agent_id, kind)
        return self.journal.replay(key) or self.journal.new_turn(
            key=key,
            agent_id=agent_id,
            role=role,
            kind=kind,
            provider="tool" if role != "human" else "human",
            model="",
            content=content,
            tool_calls=tool_calls or [],
            metadata=metadata or {},
        )

    async def record(self, turn: TurnRecord) -> TurnRecord:
        """Persist a completed turn (once), giving it the next sequence number."""
        return await self.journal.record(turn)

    def turns(self, phase: str | None = None, kind: str | None = None) -> list[TurnRecord]:
        """Recorded turns in order, optionally of one phase and kind."""
        return self.journal.turns(phase, kind)


def _nudge(message: Any, style: str, nudge: str = _RUBBER_STAMP_NUDGE) -> Any:
    if style == "completion":
        return {"role": message["role"], "content": f"# {nudge}\n{message['content']}"}
    return {"role": message["role"], "content": f"{message['content']}\n\n{nudge}"}


async def _done(turn: TurnRecord) -> TurnRecord:
    return turn
