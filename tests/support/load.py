"""Many scripted add.md debates on shared services, and a tally of what the engine announced. TEST-ONLY.

The load test, the engine-overhead benchmark and the soak all run the same
debate: the add.md debater (a zero-latency ``scripted/...`` model) for two
agents, with proposal, critique and convergence (no early stop, so every copy
goes through all three). ``EngineTally`` listens on the event bus and keeps, per
session, the turns, code versions and events the engine announced, which is
what the store should hold afterwards::

    with scripted_model() as model:
        tally = EngineTally()
        async with load_services(store_url) as services:
            results = await run_debates(100, services, lambda i: debate_config(model, store_url, out / str(i)), tally.bus)
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.debaters import add_debater
from tests.support.replay_sandbox import ReplaySandbox
from tests.support.scripted_models import registered_model
from tests.support.scripted_solve import ADD_TASK, SCRIPTED_PROTOCOL

from debatecode import DebateConfig, DebateResult, Services, load_config, solve_async
from debatecode.llm.client import LLMClient
from debatecode.llm.scripted import ScriptedModel
from debatecode.protocol.events import CodeVersionCommitted, Event, EventBus, TurnCompleted
from debatecode.sandbox.base import Sandbox
from debatecode.store import open_store
from debatecode.store.records import CodeVersionRecord, TurnRecord
from debatecode.task import Task, load_task

__all__ = ["LOAD_PROTOCOL", "EngineTally", "debate_config", "load_services", "run_debates", "scripted_model"]

LOAD_PROTOCOL: dict[str, Any] = {**SCRIPTED_PROTOCOL, "convergence.early_stop": False, "critique.when": "always"}
"""Two agents; proposal, critique and convergence, all three in every debate (the candidates agree at once, so
critique runs only because ``critique.when`` is ``always``)."""


@contextmanager
def scripted_model() -> Iterator[str]:
    """A zero-latency add.md debater registered under a fresh ``scripted/<name>``, for the ``with`` block."""
    with registered_model("load", ScriptedModel(fn=add_debater(style_variants=False))) as model:
        yield model


def debate_config(model: str, store_url: str, out: Path, **overrides: Any) -> DebateConfig:
    """The load debate's config: ``model`` on add.md, stored at ``store_url``, its files in ``out``."""
    values = {"model": model, "out": out, "store_url": store_url, **LOAD_PROTOCOL, **overrides}
    return load_config(overrides=values, use_file=False)


def load_services(store_url: str, sandbox: Sandbox | None = None) -> Services:
    """One model client, sandbox and store for every debate (``ReplaySandbox`` over the dummy by default)."""
    config = load_config(overrides={"store_url": store_url}, use_file=False)
    return Services(llm=LLMClient(config.llm), sandbox=sandbox or ReplaySandbox(), store=open_store(store_url))


class EngineTally:
    """Per session: the turns, code versions and events the engine announced (replayed turns left out)."""

    def __init__(self) -> None:
        self.turns: dict[str, list[TurnRecord]] = defaultdict(list)
        self.versions: dict[str, list[CodeVersionRecord]] = defaultdict(list)
        self.events: Counter[str] = Counter()
        self.bus = EventBus()
        """Pass this bus to ``solve_async``; it feeds the tally."""
        self.bus.subscribe(self)

    def __call__(self, event: Event) -> None:
        self.events[event.session_id] += 1
        if isinstance(event, TurnCompleted) and not event.reused:
            self.turns[event.session_id].append(event.turn)
        elif isinstance(event, CodeVersionCommitted) and not event.reused:
            self.versions[event.session_id].append(event.version)


async def run_debates(
    count: int,
    services: Services,
    config_for: Callable[[int], DebateConfig],
    bus: EventBus | None = None,
    *,
    concurrency: int | None = None,
    task: Task | None = None,
) -> list[DebateResult | BaseException]:
    """Run ``count`` debates of ``task`` (add.md) on ``services``, at most ``concurrency`` at once (all by default).

    Debate ``i`` runs with ``config_for(i)`` (every config is built before the first
    debate starts). Returns each debate's result, or what it raised, in order.
    """
    parsed = task or load_task(ADD_TASK)
    configs = [config_for(i) for i in range(count)]
    gate = asyncio.Semaphore(concurrency or max(1, count))

    async def one(config: DebateConfig) -> DebateResult:
        async with gate:
            return await solve_async(parsed, config, services=services, bus=bus)

    return await asyncio.gather(*(one(config) for config in configs), return_exceptions=True)
