"""The programmatic entry points: ``solve()`` and the service builder the CLI shares."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatecode.config import DebateConfig, load_config
from debatecode.protocol.events import EventBus
from debatecode.task import Task, load_task

__all__ = ["Services", "build_services", "solve", "solve_async"]

logger = logging.getLogger(__name__)


@dataclass
class Services:
    """The I/O layer of a session, built from config (or injected by tests)."""

    llm: Any
    sandbox: Any
    store: Any

    async def aclose(self) -> None:
        await self.sandbox.aclose()
        self.store.close()


def build_services(config: DebateConfig, *, sandbox_backend: str | None = None) -> Services:
    """Check the model name, pick the sandbox and open the store, in that order.

    Nothing is written before all three succeed, so a bad model name or a dead
    Docker engine leaves the store untouched.

    Raises:
        UnknownModelError: no provider answers to ``config.model``.
        SandboxUnavailable: the chosen backend cannot run here.
        StoreError: the store cannot be opened.
    """
    from debatecode.llm.client import LLMClient, validate_model
    from debatecode.sandbox import create_sandbox
    from debatecode.store import open_store

    validate_model(config.model)
    sandbox = create_sandbox(config.sandbox, sandbox_backend or config.sandbox.backend)
    store = open_store(config.store_url)
    llm = LLMClient(config.llm, token_budget=config.token_budget)
    return Services(llm=llm, sandbox=sandbox, store=store)


async def solve_async(
    task: Task | Path | str,
    config: DebateConfig | None = None,
    *,
    bus: EventBus | None = None,
    services: Services | None = None,
    resume: str | None = None,
    human: Any = None,
) -> Any:
    """Run a debate on ``task`` (or resume session ``resume``) and return its ``DebateResult``.

    Raises:
        TaskError, ConfigError, UnknownModelError: bad input; nothing is stored.
        SandboxUnavailable, StoreError: the environment cannot run a session.
    """
    from debatecode.protocol.engine import DebateEngine

    config = config or load_config()
    if resume is not None and services is None:
        config = _stored_config(config, resume)
    parsed = task if isinstance(task, Task) else load_task(task)
    owned = services is None
    services = services or build_services(config)
    try:
        engine = DebateEngine(
            config, llm=services.llm, sandbox=services.sandbox, store=services.store, bus=bus, human=human
        )
        if resume is not None:
            return await engine.resume(resume, parsed)
        return await engine.solve(parsed)
    finally:
        if owned:
            await services.aclose()


def _stored_config(config: DebateConfig, session_id: str) -> DebateConfig:
    """The config a session was started with, keeping only the current store URL."""
    from debatecode.store import open_store

    store = open_store(config.store_url)
    try:
        stored = store.get_session(session_id).config
    finally:
        store.close()
    return DebateConfig.model_validate({**stored, "store_url": config.store_url})


def solve(task: Task | Path | str, config: DebateConfig | None = None, **overrides: Any) -> Any:
    """Run a debate on ``task`` to the end; ``overrides`` are config keys (dotted for sections).

    Example::

        result = debatecode.solve("examples/tasks/add.md", model="scripted:replies.yaml", agents=2)
        print(result.status, result.passed, result.total)
    """
    if overrides:
        config = load_config(overrides=overrides)
    return asyncio.run(solve_async(task, config))
