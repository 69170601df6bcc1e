"""A scripted design debate: debaters, moderator and reviewers answering by tags, run in a temp repo and store.

``DebateScript`` says how every participant behaves (satisfaction per round,
varied or repeated speeches, who asks for a poll and how each votes, who
challenges whom, how the synthesis is reviewed...); ``debate_fn`` turns it
into a ``fn(messages, tags)`` for a :class:`ScriptedModel`; ``DebateWorld``
(the ``design_world`` fixture) runs :class:`DesignEngine` over it with a
temp repository and a temp SQLite store, and records every model call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from debatecode.config import DebateConfig, load_config
from debatecode.llm.client import LLMClient, ModelRouter
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.llm.transport import CompletionRequest, RawCompletion, Transport
from debatecode.llm.types import Message
from debatecode.protocol.design.engine import DesignEngine, DesignResult
from debatecode.protocol.design.question import DesignQuestion, load_question
from debatecode.protocol.events import Event, EventBus
from debatecode.store import open_store
from debatecode.store.records import TurnRecord
from debatecode.store.repository import SessionStore

SQLITE_QUESTION = "Should a small team store session events in SQLite or PostgreSQL?"
"""Low complexity: 2 rounds planned with the default ``min_rounds``; Data Integrity, Operational Simplicity,
Contrarian and Moonshot."""

BILLING_QUESTION = (
    "Should the billing service publish invoice events through Kafka, or keep writing them to the shared "
    "outbox table that the nightly reporting jobs already read?"
)
"""Medium complexity: ``min_rounds + 1`` rounds planned."""

NUDGE_MARK = "Your reply was rejected"
"""The start of the nudge a rejected (rubber-stamp) reply is re-asked with."""

ADR_SECTIONS = (
    "Question",
    "Context",
    "Perspectives",
    "Points of agreement",
    "Key tensions",
    "Recommendation",
    "Rejected alternatives",
    "Implementation notes",
    "Dissents",
    "Risk register",
    "Open questions",
    "Round-by-round summary",
    "Participation",
)
"""The ``##`` sections every decision record has, in order (escalation, the moderator's draft and corrections come
after, when present)."""

DEFAULT_SYNTHESIS = """## Recommendation
- Use SQLite now, with a migration path to PostgreSQL.
## Points of agreement
- The team is small
## Key tensions
- Write concurrency under load
## Rejected alternatives
- PostgreSQL now: operational cost for a small team
## Risks
- Lock contention | medium | high | WAL mode and short transactions
## Open questions
- What is the expected write rate?
"""

_VOCABULARY = [
    "latency",
    "throughput",
    "schema",
    "backup",
    "replica",
    "index",
    "migration",
    "vacuum",
    "locking",
    "queue",
    "cache",
    "shard",
    "quota",
    "audit",
    "retention",
    "rollback",
    "snapshot",
    "checksum",
    "failover",
    "tenancy",
    "partition",
    "compaction",
    "journaling",
    "pooling",
    "tracing",
    "alerting",
    "budget",
    "upgrade",
    "tooling",
    "ownership",
    "onboarding",
    "encryption",
    "compliance",
    "capacity",
    "burst",
    "batching",
    "ordering",
    "deduplication",
    "idempotency",
    "streaming",
    "archival",
    "restore",
    "drills",
    "runbook",
    "paging",
]

Score = int | Callable[[str, int, str], int]
"""A satisfaction score, or ``score(agent, round, kind)`` with kind ``position``/``argue``/``rebut``."""


def _every(*_: Any) -> bool:
    return True


def _never(*_: Any) -> bool:
    return False


def _accurate(agent: str) -> str:
    return "ACCURATE"


@dataclass
class DebateScript:
    """How the scripted participants of a design debate behave.

    Every callable gets the speaker's perspective key first; ``round`` is 0 for
    the phase-1 positions and ``kind`` is the design prompt (``position``,
    ``argue``, ``rebut``).
    """

    satisfaction: Score = 95
    repeat: bool = False
    """Every speech of a debater is the same text, round after round (repetition, then circular)."""
    ready: Callable[[str, int, str], bool] = _never
    """Whether a speech ends with "Ready for synthesis: yes" (which calls a convergence poll)."""
    votes: Callable[[str, int], bool] = _every
    """A debater's answer to the convergence poll of a round."""
    challenges: Callable[[str, int, str, bool], bool] = _every
    """``(agent, round, kind, retry)``: whether the reply challenges another debater (``retry``: after a nudge)."""
    review: Callable[[str], str] = _accurate
    """A debater's answer when it reviews how the synthesis states its view."""
    patchlist: Callable[[str, int, str], list[tuple[str, str]]] | None = None
    """Patchlist mode: the ``(severity heading, item)`` pairs a speech lists, e.g. ``("BLOCKING", "B1: x -> y")``."""
    stance: Callable[[str], str] = lambda agent: f"{agent} recommends keeping SQLite with a documented exit path"
    challenge_text: Callable[[str, int], str] = lambda agent, rnd: "the write load claim needs measured numbers"
    synthesis: str = DEFAULT_SYNTHESIS
    analysis: str = "Decision: pick the session event store.\nConstraints:\n- small team"

    def score(self, agent: str, round_no: int, kind: str) -> int:
        return self.satisfaction if isinstance(self.satisfaction, int) else self.satisfaction(agent, round_no, kind)


def _target(agent: str) -> str:
    """Whom a debater challenges: the Contrarian, or the Moonshot when it is the Contrarian."""
    return "Moonshot" if agent == "contrarian" else "Contrarian"


def _fresh_words(round_no: int, kind: str, count: int = 24) -> str:
    """Words that differ between rounds (and kinds) but are shared by every debater of that round."""
    start = (round_no * 7 + len(kind) * 3) % len(_VOCABULARY)
    picked = [_VOCABULARY[(start + i) % len(_VOCABULARY)] for i in range(count)]
    return " ".join(f"{word}{round_no}{kind[0]}" for word in picked)


def speech(script: DebateScript, agent: str, round_no: int, kind: str, *, retry: bool = False) -> str:
    """One debater's reply in the labelled format (or the patchlist format), by ``script``."""
    challenge = script.challenges(agent, round_no, kind, retry)
    score = script.score(agent, round_no, kind)
    lines: list[str] = []
    if script.patchlist is not None:
        current = None
        for heading, item in script.patchlist(agent, round_no, kind):
            if heading != current:
                lines.append(f"{heading}:")
                current = heading
            lines.append(f"- {item}")
    else:
        fresh = "" if script.repeat else f" ({_fresh_words(round_no, kind)})"
        lines += [f"Stance: {script.stance(agent)}.", "Reasons:"]
        if challenge:
            lines += [f"- {agent} weighs the operational cost{fresh}", f"- {agent} weighs the migration path"]
        else:
            lines += ["- looks good to me"]
    if challenge:
        lines.append(f"Challenge: {_target(agent)}: {script.challenge_text(agent, round_no)}.")
    if script.patchlist is None:
        lines += ["Risks:", f"- risk named by {agent}"]
    if round_no > 0:
        lines.append(f"Satisfaction: {score}")
        lines.append(f"Ready for synthesis: {'yes' if script.ready(agent, round_no, kind) else 'no'}")
    return "\n".join(lines)


def debate_fn(script: DebateScript) -> Callable[[list[Message], dict[str, str]], str]:
    """``fn(messages, tags)`` answering every design prompt by ``script``."""

    def fn(messages: list[Message], tags: dict[str, str]) -> str:
        phase, agent, kind = tags.get("phase", ""), tags.get("agent", ""), tags.get("kind", "")
        round_no = int(tags.get("round", "0") or 0)
        if phase == "analysis":
            return script.analysis
        if phase in ("positions", "arguments", "rebuttals"):
            retry = NUDGE_MARK in str(messages[-1].get("content", "")) if messages else False
            return speech(script, agent, round_no, kind, retry=retry)
        if phase == "moderation":
            return f"Round {round_no} summary: the debaters weigh the store; the Contrarian doubts the write load."
        if phase == "poll":
            return "yes, ready to synthesise" if script.votes(agent, round_no) else "no, not yet"
        if phase == "synthesis":
            return script.synthesis
        if phase == "synthesis_review":
            return script.review(agent)
        raise AssertionError(f"unexpected call: {tags}")

    return fn


@dataclass(frozen=True)
class Call:
    """One model call: its tags and its messages."""

    tags: dict[str, str]
    messages: list[Message]

    @property
    def phase(self) -> str:
        return self.tags.get("phase", "")

    @property
    def agent(self) -> str:
        return self.tags.get("agent", "")

    @property
    def round(self) -> int:
        return int(self.tags.get("round", "0") or 0)


class RecordingModel(ScriptedModel):
    """A ``ScriptedModel`` over ``debate_fn(script)`` that logs every call."""

    def __init__(self, script: DebateScript) -> None:
        super().__init__(fn=debate_fn(script))
        self.script = script
        self.calls: list[Call] = []
        self._log_lock = threading.Lock()

    def choose(
        self, messages: list[Message], tags: Mapping[str, str], *, model: str = "scripted"
    ) -> tuple[str, float, Exception | None]:
        answer = super().choose(messages, tags, model=model)
        with self._log_lock:
            self.calls.append(Call(dict(tags), list(messages)))
        return answer

    def of(self, phase: str, *, round_no: int | None = None, agent: str | None = None) -> list[Call]:
        """The calls of ``phase`` (and round, and agent), in order."""
        return [
            c
            for c in self.calls
            if c.phase == phase and (round_no is None or c.round == round_no) and (agent is None or c.agent == agent)
        ]


class Rendezvous:
    """A transport that holds every call of ``phase`` until ``size`` of them are waiting together.

    Calls made one after another never meet: each waits ``timeout_s`` alone, and ``timed_out`` counts it.
    So ``met`` (``size`` calls in flight at once, nobody timed out) proves the calls ran in parallel,
    however slow the machine.
    """

    def __init__(self, phase: str, size: int, *, timeout_s: float = 2.0, inner: Transport | None = None) -> None:
        self.phase = phase
        self.size = size
        self.timeout_s = timeout_s
        self.inner: Transport = inner or ModelRouter()
        self.arrived = 0
        self.timed_out = 0
        self._all_here: asyncio.Event | None = None

    @property
    def met(self) -> bool:
        return self.arrived >= self.size and self.timed_out == 0

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        if request.tags.get("phase") == self.phase:
            if self._all_here is None:
                self._all_here = asyncio.Event()
            self.arrived += 1
            if self.arrived >= self.size:
                self._all_here.set()
            try:
                await asyncio.wait_for(self._all_here.wait(), self.timeout_s)
            except TimeoutError:
                self.timed_out += 1
        return await self.inner(request)


class FakeHuman:
    """A human at the checkpoints and at an escalation: answers from lists, or never (``hang``)."""

    def __init__(
        self,
        decisions: list[tuple[str, str | None]] | None = None,
        *,
        choice: tuple[str, str] | None = None,
        hang: bool = False,
    ) -> None:
        self.decisions = list(decisions or [])
        self.choice = choice
        self.hang = hang
        self.checkpoints: list[int] = []
        self.escalations: list[tuple[str, str, list[tuple[str, str]]]] = []

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        return None

    async def checkpoint(self, round_no: int, summary: str) -> Any:
        from debatecode.protocol.human import CheckpointDecision

        self.checkpoints.append(round_no)
        if self.hang:
            await asyncio.Event().wait()
        action, guidance = self.decisions.pop(0) if self.decisions else ("continue", None)
        return CheckpointDecision(action=action, guidance=guidance)  # type: ignore[arg-type]

    async def approve(self, phase: str, summary: str) -> bool | None:
        return True

    async def choose(self, title: str, summary: str, options: list[tuple[str, str]]) -> tuple[str, str] | None:
        self.escalations.append((title, summary, list(options)))
        return self.choice


class DebateWorld:
    """A temp repository, a temp SQLite store and scripted models: runs design debates and shows what they left."""

    def __init__(self, tmp_path: Path) -> None:
        self.repo = tmp_path / "repo"
        self.repo.mkdir()
        (self.repo / ".debatecode").mkdir()
        self.store_url = f"sqlite:///{self.repo / '.debatecode' / 'debatecode.db'}"  # the default layout
        self.events: list[Event] = []
        self.stores: list[SessionStore] = []
        self.models: dict[str, RecordingModel] = {}

    def model(self, script: DebateScript, name: str = "design") -> RecordingModel:
        """Register ``script`` as ``scripted/<name>`` (replacing an earlier one of that name)."""
        model = RecordingModel(script)
        register_scripted(name, model)
        self.models[name] = model
        return model

    def config(self, name: str = "design", **overrides: Any) -> DebateConfig:
        """A config for ``scripted/<name>``; ``overrides`` take dotted keys with ``__`` (``design__min_rounds=3``)."""
        values: dict[str, Any] = {
            "model": f"scripted/{name}",
            "store_url": self.store_url,
            "max_concurrency": 8,
            "checkpoints.enabled": False,
            # Eight or more debaters (the four specialists join every debate) outgrow the default 200,000 tokens.
            "token_budget": 2_000_000,
        }
        values.update({k.replace("__", "."): v for k, v in overrides.items()})
        return load_config(overrides=values, use_file=False)

    def engine(self, config: DebateConfig, *, human: Any = None, transport: Transport | None = None) -> DesignEngine:
        store = open_store(config.store_url)
        self.stores.append(store)
        bus = EventBus()
        bus.subscribe(self.events.append)
        llm = LLMClient(config.llm, transport=transport)
        return DesignEngine(config, llm=llm, store=store, repo=self.repo, bus=bus, human=human)

    async def debate(
        self,
        question: str | DesignQuestion = SQLITE_QUESTION,
        script: DebateScript | None = None,
        *,
        human: Any = None,
        transport: Transport | None = None,
        **overrides: Any,
    ) -> DesignResult:
        """Run one debate to its end with ``script`` (a fresh ``scripted/design`` model) and return the result."""
        self.model(script or DebateScript())
        if human is not None:
            overrides.setdefault("checkpoints__enabled", True)
        engine = self.engine(self.config(**overrides), human=human, transport=transport)
        asked = load_question(question) if isinstance(question, str) else question
        return await engine.debate(asked)

    async def resume(
        self,
        session_id: str,
        question: str | DesignQuestion = SQLITE_QUESTION,
        script: DebateScript | None = None,
        *,
        human: Any = None,
        **overrides: Any,
    ) -> DesignResult:
        """Resume a stored debate with a fresh model (``script`` or the default one)."""
        self.model(script or DebateScript())
        if human is not None:
            overrides.setdefault("checkpoints__enabled", True)
        engine = self.engine(self.config(**overrides), human=human)
        asked = load_question(question) if isinstance(question, str) else question
        return await engine.resume(session_id, asked)

    @property
    def last(self) -> RecordingModel:
        return self.models["design"]

    def turns(self, session_id: str) -> list[TurnRecord]:
        """Every stored turn of a session, in order."""
        store = open_store(self.store_url)
        try:
            return store.turns(session_id)
        finally:
            store.close()

    def close(self) -> None:
        for name in self.models:
            unregister_scripted(name)
        for store in self.stores:
            store.close()


@pytest.fixture
def design_world(tmp_path: Path) -> Iterator[DebateWorld]:
    world = DebateWorld(tmp_path)
    yield world
    world.close()
