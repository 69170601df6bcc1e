"""``Services``: the I/O layer of a session (model client, sandbox, store), built from config or injected.

Reuse one ``Services`` across many sessions to keep one sandbox pool warm;
close it with ``aclose()`` or ``async with``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.llm.client import LLMClient
    from debatecode.sandbox.base import Sandbox
    from debatecode.store.repository import SessionStore

__all__ = ["Services", "build_services"]


@dataclass
class Services:
    """The I/O layer of a session, built from config (or injected by tests).

    Reuse one ``Services`` across many ``solve_async`` calls to keep one sandbox
    pool warm; close it with ``aclose()`` or ``async with``.
    """

    llm: LLMClient
    sandbox: Sandbox
    store: SessionStore

    async def aclose(self) -> None:
        """Close the model client, the sandbox (its warm containers) and the store."""
        try:
            await self.llm.aclose()
            await self.sandbox.aclose()
        finally:
            self.store.close()

    async def __aenter__(self) -> Services:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def build_services(config: DebateConfig, *, sandbox_backend: str | None = None) -> Services:
    """Check the model name, pick the sandbox and open the store, in that order.

    Nothing is written before all three succeed, so a bad model name or a dead
    Docker engine leaves the store untouched. Every model the config names is
    checked (``model``, the per-role ``models``, ``agent_models``), not only the
    default one.

    Raises:
        UnknownModelError: no provider answers to a model of the config.
        SandboxUnavailable: the chosen backend cannot run here.
        StoreError: the store cannot be opened.
    """
    from debatecode.llm.client import LLMClient, validate_model
    from debatecode.sandbox import create_sandbox
    from debatecode.store import open_store

    for model in dict.fromkeys([config.model, *config.models.values(), *config.agent_models]):
        validate_model(model)
    sandbox = create_sandbox(config.sandbox, sandbox_backend or config.sandbox.backend)
    store = open_store(config.store_url)
    llm = LLMClient(config.llm)  # each session brings its own token budget
    return Services(llm=llm, sandbox=sandbox, store=store)
