"""How many benchmark items run at once (``--jobs N``), and running them so on one event loop.

A benchmark item is one (problem, strategy) session, one problem's vote samples,
or one scored sample. ``run_bounded`` starts items in the order given, at most
``jobs`` at once, so ``jobs=1`` is exactly the serial loop, and a larger ``jobs``
only changes *when* an item runs, never *what* it runs.

Every item runs on the caller's event loop: results files are appended from that
one thread, between awaits, so concurrent items never interleave a line (the
loop is the single writer), and a killed run loses only the items in flight.

The default (``default_jobs``) comes from the CPUs and the model:

- API and scripted models: ``min(cpu_count, 4)``. The work is waiting on the
  provider and on sandbox runs, which overlap well.
- ``local/...`` models: 1. The embedded llama.cpp model is loaded once per process
  and generates one call at a time (``debatecode.llm.local``); concurrent problems
  would queue on it, and llama.cpp already uses every core. ``--jobs N`` with a
  local model is allowed: the N problems share the one loaded model, their calls
  queued in arrival order, and sandbox runs overlap generation.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

from debatecode.config import DebateConfig
from debatecode.errors import ConfigError

__all__ = ["MAX_DEFAULT_JOBS", "default_jobs", "resolve_jobs", "run_bounded", "uses_local_model"]

T = TypeVar("T")

MAX_DEFAULT_JOBS = 4
"""The default never runs more items at once than this, however many CPUs there are."""

_LOCAL_PREFIX = "local/"


def uses_local_model(config: DebateConfig) -> bool:
    """Any role or agent of ``config`` runs on an embedded ``local/...`` model."""
    return any(m.startswith(_LOCAL_PREFIX) for m in _models(config))


def _models(config: DebateConfig) -> Iterable[str]:
    yield config.model
    yield from config.models.values()
    yield from config.agent_models


def default_jobs(config: DebateConfig, cpus: int | None = None) -> int:
    """Items to run at once when ``--jobs`` is not given: 1 with a local model, else ``min(cpus, 4)``.

    ``cpus`` defaults to ``os.cpu_count()``.
    """
    if uses_local_model(config):
        return 1
    return max(1, min(cpus if cpus is not None else os.cpu_count() or 1, MAX_DEFAULT_JOBS))


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

    workers = [asyncio.ensure_future(worker()) for _ in range(min(jobs, len(items)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
