"""How many benchmark items run at once (``--jobs N``), and where they run (``--executor``).

A benchmark item is one (problem, strategy) session, one vote sample, one
Reflexion run at another attempt cap, or one sweep run. ``run_bounded`` starts
items in the order given, at most ``jobs`` at once, so ``jobs=1`` is exactly the
serial loop, and a larger ``jobs`` only changes *when* an item runs, never *what*
it runs.

Executors (``--executor``) run work items (``WorkItem``): a top-level function with plain-data
arguments, which computes an item's record and writes no file.

- ``local`` (``LocalExecutor``, the default): every item runs on the caller's
  event loop, with services it shares (one sandbox pool, one store).
- ``ray`` (``debatecode.bench._ray.RayExecutor``): every item is a Ray task; the
  worker builds its own services from the item's config.

Either way each result comes back to the caller's event loop, which alone
appends it to the results files, between awaits: concurrent items never
interleave a line (the loop is the single writer), and a killed run loses only
the items in flight.

The default ``jobs`` (``default_jobs``) comes from the CPUs and the model:

- API and scripted models: ``min(cpu_count, 4)``. The work is waiting on the
  provider and on sandbox runs, which overlap well.
- ``local/...`` models: as many as the model's pool generates at once
  (``debatecode.llm.local.concurrent_calls``: the cores over its threads per copy,
  2 on 2 cores; the fewest among the local models used). More problems would only
  queue on its copies. ``--jobs N`` beyond that is allowed: the N problems share
  the copies, their calls queued in arrival order, and sandbox runs overlap
  generation.

The Ray executor has defaults of its own, from the cluster (``_ray``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from debatecode._concurrency import cancel_and_wait, gather_all
from debatecode.config import DebateConfig
from debatecode.errors import ConfigError
from debatecode.llm.local import concurrent_calls

if TYPE_CHECKING:
    from debatecode.protocol.services import Services

__all__ = [
    "EXECUTORS",
    "LOCAL",
    "MAX_DEFAULT_JOBS",
    "RAY",
    "Executor",
    "LocalExecutor",
    "Record",
    "ServicesFor",
    "Work",
    "WorkItem",
    "borrowed",
    "check_executor",
    "default_jobs",
    "resolve_jobs",
    "run_bounded",
    "run_queue",
    "uses_local_model",
]

T = TypeVar("T")

MAX_DEFAULT_JOBS = 4
"""The default never runs more items at once than this, however many CPUs there are."""

LOCAL = "local"
RAY = "ray"
EXECUTORS = (LOCAL, RAY)
"""The ``--executor`` names."""

_LOCAL_PREFIX = "local/"


def uses_local_model(config: DebateConfig) -> bool:
    """Any role or agent of ``config`` runs on an embedded ``local/...`` model."""
    return any(m.startswith(_LOCAL_PREFIX) for m in _models(config))


def _models(config: DebateConfig) -> Iterable[str]:
    yield config.model
    yield from config.models.values()
    yield from config.agent_models


def default_jobs(config: DebateConfig, cpus: int | None = None) -> int:
    """Items to run at once when ``--jobs`` is not given: with a local model, the calls its pool generates at
    once (the fewest among the local models used, at most 4), else ``min(cpus, 4)``.

    ``cpus`` defaults to ``os.cpu_count()``.
    """
    cpus = cpus if cpus is not None else os.cpu_count() or 1
    local_models = {m.removeprefix(_LOCAL_PREFIX) for m in _models(config) if m.startswith(_LOCAL_PREFIX)}
    if local_models:
        return max(1, min(MAX_DEFAULT_JOBS, *(concurrent_calls(name, cpus) for name in local_models)))
    return max(1, min(cpus, MAX_DEFAULT_JOBS))


def resolve_jobs(jobs: int | None, config: DebateConfig) -> int:
    """``jobs`` when given, else ``default_jobs(config)``.

    Raises:
        ConfigError: ``jobs`` below 1.
    """
    if jobs is None:
        return default_jobs(config)
    if jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    return jobs


def check_executor(executor: str, ray_address: str | None = None) -> None:
    """Refuse an unknown ``--executor``, and a ``--ray-address`` without ``--executor ray``.

    Raises:
        ConfigError: either mistake.
    """
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; known: {', '.join(EXECUTORS)}")
    if ray_address is not None and executor != RAY:
        raise ConfigError(f"--ray-address {ray_address} needs --executor ray (the executor is {executor!r})")


async def run_bounded(items: Sequence[T], jobs: int, work: Callable[[T], Awaitable[None]]) -> None:
    """Await ``work(item)`` for every item, starting them in order, at most ``jobs`` at once.

    ``jobs`` workers take the next item as each finishes its last. The first item
    that raises cancels the items still running, and its exception propagates as it
    is (not wrapped in an ``ExceptionGroup``); items that finished stay finished.

    Raises:
        ConfigError: ``jobs`` below 1.
        Whatever ``work`` raised first.
    """
    if jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    queue = iter(items)

    async def worker() -> None:
        # ``next`` never awaits, so two workers never take the same item.
        for item in queue:
            await work(item)

    await gather_all(*(worker() for _ in range(min(jobs, len(items)))))


async def run_queue(items: Iterable[T], jobs: int, work: Callable[[T], Awaitable[Sequence[T]]]) -> None:
    """``run_bounded``, where each item's ``work`` may return follow-up items, started before the rest.

    A follow-up goes to the front of the queue, so with ``jobs=1`` an item's
    follow-ups run right after it, as a serial loop would run them (a problem's
    vote samples, each drawn with the budget the earlier ones left). The first item
    that raises cancels the items still running and propagates as it is.

    Raises:
        ConfigError: ``jobs`` below 1.
        Whatever ``work`` raised first.
    """
    if jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    queue = deque(items)
    running: dict[asyncio.Future[Sequence[T]], int] = {}
    order = itertools.count()
    try:
        while queue or running:
            while queue and len(running) < jobs:
                running[asyncio.ensure_future(work(queue.popleft()))] = next(order)
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for finished in sorted(done, key=running.__getitem__):
                del running[finished]
                queue.extendleft(reversed(finished.result()))
    except BaseException:
        await cancel_and_wait(running)
        raise


Work = Callable[..., Awaitable[Any]]
"""An item's computation: ``async def work(services, config, **args) -> record``, defined at a module's top level."""


@dataclass(frozen=True)
class WorkItem:
    """One benchmark item as data another process can run: a top-level function, its config, its arguments.

    ``work(services, config, **args)`` computes the item and returns its record
    (JSON values); it writes no results file. ``args`` are plain data (problem
    dicts, task dumps, strategy names), so that a Ray worker on another node gets
    them as they are; ``config`` travels as ``config.model_dump(mode="json")``.
    """

    work: Work
    config: DebateConfig
    """The item's settings; its services (sandbox, store, model client) are built from them."""
    args: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    """How progress names the item while it runs."""
    context: Any = None
    """The caller's own note on the item, for its ``record``; never sent to a worker."""


Record = Callable[[WorkItem, Any], Sequence[WorkItem]]
"""Records an item's result (on the caller's event loop) and returns its follow-up items, if any."""

ServicesFor = Callable[[DebateConfig], AbstractAsyncContextManager["Services"]]
"""The services one item of a config runs with, for as long as the item runs."""


class Executor(ABC):
    """Where benchmark items run: on this event loop (``LocalExecutor``) or as Ray tasks (``_ray.RayExecutor``).

    Both run the same ``WorkItem`` objects and hand each result to the caller's
    ``record`` on the caller's event loop, one at a time, so that the caller alone
    writes the results files. Use as an async context manager, or call ``aclose``.
    """

    name: str
    jobs: int
    """Items at most in flight."""

    @abstractmethod
    async def compute(self, item: WorkItem) -> Any:
        """``item``'s record, computed where this executor runs items.

        Raises:
            Whatever the item's work raised; ``RunError`` when the place it ran failed.
        """

    async def run(
        self,
        items: Iterable[WorkItem],
        record: Record,
        on_start: Callable[[WorkItem], None] | None = None,
    ) -> None:
        """Compute ``items``, started in order, ``jobs`` at most at once, and ``record`` each as it finishes.

        ``record``'s follow-up items start before the remaining ones
        (``run_queue``); ``on_start`` hears each item as it starts.

        Raises:
            Whatever an item or ``record`` raised first; the items still in flight are cancelled,
            and the results recorded stay recorded.
        """

        async def one(item: WorkItem) -> Sequence[WorkItem]:
            if on_start is not None:
                on_start(item)
            return record(item, await self.compute(item))

        await run_queue(items, self.jobs, one)

    async def aclose(self) -> None:
        """Release what the executor holds (nothing, unless it says otherwise)."""
        return None

    async def __aenter__(self) -> Executor:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class LocalExecutor(Executor):
    """Items run on the caller's event loop, ``jobs`` at once, with the services ``services_for`` lends them.

    ``services_for(config)`` gives each item its services (a shared sandbox pool and
    store, and a model client of the item's own where the caller makes one).
    """

    name = LOCAL

    def __init__(self, services_for: ServicesFor, jobs: int) -> None:
        if jobs < 1:
            raise ConfigError(f"--jobs must be at least 1, got {jobs}")
        self.jobs = jobs
        self._services_for = services_for

    async def compute(self, item: WorkItem) -> Any:
        async with self._services_for(item.config) as services:
            return await item.work(services, item.config, **item.args)


def borrowed(services: Services) -> ServicesFor:
    """A ``ServicesFor`` that lends ``services`` to every item and never closes them."""

    @contextlib.asynccontextmanager
    async def lend(_config: DebateConfig) -> AsyncIterator[Services]:
        yield services

    return lend
