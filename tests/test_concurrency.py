"""gather_all: results in order; the first failure cancels the rest and is raised as it is."""

from __future__ import annotations

import asyncio

import pytest

from debatecode._concurrency import cancel_and_wait, gather_all


async def test_results_come_back_in_the_order_given() -> None:
    async def after(delay: float, value: int) -> int:
        await asyncio.sleep(delay)
        return value

    assert await gather_all(after(0.03, 1), after(0.0, 2), after(0.01, 3)) == [1, 2, 3]
    assert await gather_all() == []


async def test_the_first_failure_cancels_the_rest_and_is_raised_unwrapped() -> None:
    cancelled: list[str] = []
    finished: list[str] = []

    async def slow(name: str) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        finished.append(name)
        return name

    async def fails() -> str:
        await asyncio.sleep(0.01)
        raise ValueError("first")

    with pytest.raises(ValueError, match="first") as caught:
        await gather_all(slow("a"), fails(), slow("b"))
    assert not isinstance(caught.value, BaseExceptionGroup)
    assert sorted(cancelled) == ["a", "b"] and finished == [], "no sibling keeps running after the failure"


async def test_a_later_failure_while_stopping_does_not_replace_the_first() -> None:
    async def fails_on_cancel() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            raise RuntimeError("second, while stopping") from None

    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise KeyError("first")

    with pytest.raises(KeyError, match="first"):
        await gather_all(fails_on_cancel(), fails())


async def test_cancelling_the_caller_cancels_every_task() -> None:
    started = asyncio.Event()
    cancelled: list[int] = []

    async def waits(index: int) -> None:
        started.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(index)
            raise

    outer = asyncio.ensure_future(gather_all(waits(0), waits(1)))
    await started.wait()
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert sorted(cancelled) == [0, 1]


async def test_cancel_and_wait_stops_every_task_whatever_it_ends_with() -> None:
    async def sleeps() -> None:
        await asyncio.sleep(5)

    async def raises() -> None:
        raise OSError("already failed")

    tasks = [asyncio.ensure_future(sleeps()), asyncio.ensure_future(raises())]
    await asyncio.sleep(0)
    await cancel_and_wait(tasks)
    assert all(task.done() for task in tasks) and tasks[0].cancelled()
