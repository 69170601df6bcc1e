"""Run awaitables together and stop them all at the first failure.

One helper for the places that start several tasks and must not leave any running once one
has failed: a debate step's agent turns (``protocol``), a batch of sandbox jobs (``sandbox``)
and a benchmark's concurrent items (``bench``). Unlike ``asyncio.gather``, no sibling keeps
running (and writing) after the caller has already seen the failure.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

__all__ = ["cancel_and_wait", "gather_all"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Run ``aws`` concurrently and return their results in order.

    On the first failure the rest are cancelled and awaited, and that failure is raised as
    it is (not wrapped in an ``ExceptionGroup``); failures of the others while they stop are
    logged at debug level. Cancelling the caller cancels them all.

    Raises:
        Whatever the first awaitable to fail raised.
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


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until every one has stopped, whatever each ends with."""
    pending = list(tasks)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


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
