"""The host's running time, for host-side time limits that a stopped debatecode does not use up.

The monotonic clock keeps running while this process is stopped (Ctrl-Z,
``kill -STOP``) or frozen. A host-side limit measured on it would expire during
such a stop, and a sandbox job that finished in its container meanwhile would
be scored as a timeout once the process continues. ``RunningClock`` leaves
those spans out: a daemon thread ticks every ``tick_s``; a tick that comes more
than ``stall_s`` after the previous one means the process did not run in
between, and the gap beyond ``stall_s`` is taken off the clock. Until that tick
comes, the clock holds still at ``stall_s`` past the last one, so it never goes
backwards.

Only the host's own stops count. The code under test cannot stop the host
process, and the host-side limits are a backstop behind the limits the runner
enforces inside the sandbox (which keep running on their own clock there).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["HOST_CLOCK", "RunningClock", "wait_within"]

T = TypeVar("T")

_SLICE_S = 0.5
"""How often a wait looks at the clock again."""
_LAST_LOOK_S = 0.05
"""How long a wait past its limit still takes a result that is ready."""


class RunningClock:
    """Seconds this process has been running: ``time.monotonic()`` less the spans in which it was stopped.

    Args:
        tick_s: how often the watching thread looks at the time.
        stall_s: a gap between two looks longer than this is a stop, not a late wake-up.
        watch: start the watching thread on first use; False leaves the ticking to the caller (``tick``).
    """

    def __init__(self, tick_s: float = 0.2, stall_s: float = 1.5, *, watch: bool = True) -> None:
        if not 0 < tick_s < stall_s:
            raise ValueError(f"need 0 < tick_s < stall_s; got tick_s={tick_s}, stall_s={stall_s}")
        self.tick_s = tick_s
        self.stall_s = stall_s
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._stalled = 0.0
        self._thread: threading.Thread | None = None
        self._watch_enabled = watch

    @property
    def stalled_s(self) -> float:
        """The seconds taken off so far."""
        with self._lock:
            return self._stalled

    def now(self) -> float:
        """The running time, in seconds on the monotonic clock's scale (only differences mean anything)."""
        with self._lock:
            self._start()
            current = time.monotonic()
            # No tick for a while: the process is only now running again. Hold still until the tick comes.
            return min(current, self._last + self.stall_s) - self._stalled

    def tick(self) -> None:
        """Take a look at the time (the watching thread does this every ``tick_s``)."""
        with self._lock:
            self._record(time.monotonic())

    def _record(self, current: float) -> None:
        gap = current - self._last
        if gap > self.stall_s:
            self._stalled += gap - self.stall_s
        self._last = current

    def _start(self) -> None:
        if self._watch_enabled and (self._thread is None or not self._thread.is_alive()):
            self._last = time.monotonic()
            self._thread = threading.Thread(target=self._watch, name="debatecode-host-clock", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        while True:
            time.sleep(self.tick_s)
            self.tick()

    def _after_fork(self) -> None:
        """In a forked child: a fresh lock (the parent's may have been held) and no watching thread yet."""
        self._lock = threading.Lock()
        self._thread = None


HOST_CLOCK = RunningClock()
"""The clock of every host-side sandbox limit in this process."""
os.register_at_fork(after_in_child=HOST_CLOCK._after_fork)


async def wait_within(awaitable: Awaitable[T], limit_s: float, clock: RunningClock = HOST_CLOCK) -> T:
    """``awaitable``'s result, if it comes within ``limit_s`` seconds of ``clock``'s running time.

    Like ``asyncio.wait_for``, but time in which the process was stopped does not count, and a
    result that is already there when the limit passes is taken rather than thrown away.

    Raises:
        TimeoutError: the limit passed first (``awaitable`` is then cancelled).
    """
    task = asyncio.ensure_future(awaitable)
    deadline = clock.now() + limit_s
    try:
        while not task.done():
            remaining = deadline - clock.now()
            if remaining <= 0:
                # A moment more, so that output that arrived while the process was stopped is read first.
                await asyncio.wait({task}, timeout=_LAST_LOOK_S)
                if task.done():
                    break
                raise TimeoutError(f"no result within {limit_s:g} s of running time")
            await asyncio.wait({task}, timeout=min(remaining, _SLICE_S))
        return task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
