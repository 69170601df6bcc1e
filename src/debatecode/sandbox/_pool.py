"""The warm pool: pre-started containers that run one job at a time, reset in between.

A ``WarmContainer`` is a running container whose PID 1 is the pool server
(``pool_server.py``), reached through an ``AttachedStream``. The pool hands
containers out by ``ContainerShape`` (the limits fixed at creation), keeps at
most ``size`` of them alive, starts new ones on demand and evicts idle ones of
another shape when it is full. It knows nothing about Docker itself: the
sandbox gives it a ``start`` and a ``remove`` coroutine.

The pool lives on one event loop (asyncio locks and streams belong to a loop);
``DockerSandbox`` makes a new pool when it is used from another loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from debatecode.sandbox._attach import AttachedStream, AttachError
from debatecode.sandbox._docker_spec import ContainerShape
from debatecode.sandbox.wire import ACK_MARKER, MARKER, READY_MARKER

__all__ = ["ContainerLost", "WarmContainer", "WarmPool"]

logger = logging.getLogger(__name__)

PROTOCOL_LINE_CAP = 4096


class ContainerLost(Exception):
    """A warm container stopped answering.

    ``job_started`` is False when the job was never acknowledged: it did not run,
    so it may safely run elsewhere.
    """

    def __init__(self, message: str, *, job_started: bool) -> None:
        super().__init__(message)
        self.job_started = job_started


@dataclass(eq=False)
class WarmContainer:
    """One running pool container and its connection."""

    container_id: str
    name: str
    shape: ContainerShape
    stream: AttachedStream
    last_used: float = field(default_factory=time.monotonic)
    jobs_run: int = 0

    async def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        """Wait for the server's ready line.

        Raises:
            ContainerLost: the container ended, or said something else, or took longer than ``timeout_s``.
        """
        try:
            line = await asyncio.wait_for(self.stream.read_line(PROTOCOL_LINE_CAP), timeout_s)
        except (AttachError, TimeoutError) as exc:
            raise ContainerLost(
                f"warm container {self.name} did not become ready: {exc!r}; stderr: {self.stream.stderr_tail()!r}",
                job_started=False,
            ) from exc
        text = line.decode("utf-8", errors="replace")
        if not text.startswith(READY_MARKER):
            raise ContainerLost(f"warm container {self.name} said {text[:200]!r} instead of ready", job_started=False)
        ready: dict[str, Any] = json.loads(text[len(READY_MARKER) :])
        return ready

    async def run(self, request: bytes, result_cap: int) -> str:
        """Send one job and return its result line (the text after the marker).

        No time limit here: the caller bounds the wait.

        Raises:
            ContainerLost: the container ended or broke the protocol (``job_started`` says whether the job began).
        """
        started = False
        try:
            await self.stream.send(request)
            ack = await self.stream.read_line(PROTOCOL_LINE_CAP)
            if not ack.startswith(ACK_MARKER.encode()):
                raise AttachError(f"expected an ACK line, got {ack[:200]!r}")
            started = True
            line = await self.stream.read_line(result_cap)
        except AttachError as exc:
            raise ContainerLost(
                f"warm container {self.name} stopped answering: {exc}; stderr: {self.stream.stderr_tail()!r}",
                job_started=started,
            ) from exc
        text = line.decode("utf-8", errors="replace")
        if not text.startswith(MARKER):
            raise ContainerLost(f"warm container {self.name} sent {text[:200]!r} instead of a result", job_started=True)
        self.jobs_run += 1
        self.last_used = time.monotonic()
        return text


StartContainer = Callable[[ContainerShape], Awaitable[WarmContainer]]
RemoveContainer = Callable[[WarmContainer], Awaitable[None]]


class WarmPool:
    """At most ``size`` warm containers, handed out one job at a time.

    Args:
        size: how many containers may be alive at once (busy and idle).
        start: starts a ready container of a shape; may raise anything, which ``acquire`` passes on.
        remove: stops and removes a container; must not raise.
        idle_ttl_s: an idle container older than this is not handed out again (its server exits by itself
            at this age); it is removed instead.
    """

    def __init__(self, size: int, start: StartContainer, remove: RemoveContainer, *, idle_ttl_s: float) -> None:
        self.size = size
        self._start = start
        self._remove = remove
        self._idle_ttl_s = idle_ttl_s
        self._members: set[WarmContainer] = set()
        self._idle: list[WarmContainer] = []
        self._starting = 0
        self._starting_for: collections.Counter[ContainerShape] = collections.Counter()
        self._waiting: collections.Counter[ContainerShape] = collections.Counter()
        self._failures: dict[ContainerShape, collections.deque[BaseException]] = {}
        self._changed = asyncio.Condition()
        self._background: set[asyncio.Task[None]] = set()
        self.closed = False

    @property
    def members(self) -> list[WarmContainer]:
        """Every live container, busy or idle."""
        return list(self._members)

    def _fresh(self, container: WarmContainer) -> bool:
        # A margin keeps us off containers whose server is about to exit on its own.
        return not container.stream.closed and time.monotonic() - container.last_used < 0.9 * self._idle_ttl_s

    async def acquire(self, shape: ContainerShape) -> WarmContainer:
        """A ready container of ``shape``; waits while the pool is full and busy.

        When no idle container fits, it starts one in the background (while there is
        room) and takes whichever container of ``shape`` is ready first: a batch starts
        working as soon as its first container is up.

        Raises:
            RuntimeError: the pool is closed.
            Exception: whatever ``start`` raised, for a start made for this caller.
        """
        async with self._changed:
            self._waiting[shape] += 1
            try:
                while True:
                    if self.closed:
                        raise RuntimeError("the warm pool is closed")
                    for container in list(self._idle):
                        if not self._fresh(container):
                            self._idle.remove(container)
                            self._drop(container)
                    match = next((c for c in self._idle if c.shape == shape), None)
                    if match is not None:
                        self._idle.remove(match)
                        return match
                    failures = self._failures.get(shape)
                    if failures:
                        raise failures.popleft()
                    if self._starting_for[shape] < self._waiting[shape]:
                        if len(self._members) + self._starting < self.size:
                            self._launch(shape)
                        elif self._idle:
                            self._drop(self._idle.pop(0))
                            self._launch(shape)
                    await self._changed.wait()
            finally:
                self._waiting[shape] -= 1

    def _launch(self, shape: ContainerShape) -> None:
        """Start a container of ``shape`` in the background; it joins the idle list when ready."""
        self._starting += 1
        self._starting_for[shape] += 1

        async def grow() -> None:
            try:
                container = await self._start(shape)
            except BaseException as exc:
                async with self._changed:
                    self._starting -= 1
                    self._starting_for[shape] -= 1
                    if self._waiting[shape] > 0 and not isinstance(exc, asyncio.CancelledError):
                        self._failures.setdefault(shape, collections.deque()).append(exc)
                    elif isinstance(exc, asyncio.CancelledError):
                        logger.debug("a warm container start was cancelled: the pool is closing")
                    else:
                        logger.warning("starting a warm container failed: %s", str(exc) or type(exc).__name__)
                    self._changed.notify_all()
                return
            async with self._changed:
                self._starting -= 1
                self._starting_for[shape] -= 1
                if self.closed:
                    self._spawn(self._remove(container))
                else:
                    self._members.add(container)
                    self._idle.append(container)
                self._changed.notify_all()

        self._spawn(grow())

    async def release(self, container: WarmContainer) -> None:
        """Give a container back after a job it finished normally (removed instead when the pool shrank)."""
        async with self._changed:
            over = len(self._members) + self._starting > self.size
            if container in self._members and not self.closed and self._fresh(container) and not over:
                self._idle.append(container)
            elif container in self._members:
                self._drop(container)
            self._changed.notify()

    async def discard(self, container: WarmContainer) -> None:
        """Remove a container whose state is unknown (lost, timed out, cancelled) and free its slot."""
        async with self._changed:
            if container in self._members:
                self._drop(container)
            with contextlib.suppress(ValueError):
                self._idle.remove(container)
            self._changed.notify()

    def _drop(self, container: WarmContainer) -> None:
        self._members.discard(container)
        container.stream.close()
        self._spawn(self._remove(container))

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await coroutine
            except Exception:
                logger.exception("a warm pool task failed")

        task = asyncio.get_running_loop().create_task(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def warm(self, shape: ContainerShape, count: int) -> int:
        """Start containers of ``shape`` until ``count`` are idle, within free slots; return how many started.

        Raises:
            Exception: the first error ``start`` raised (containers that did start are kept).
        """
        async with self._changed:
            ready = sum(1 for c in self._idle if c.shape == shape and self._fresh(c))
            free = self.size - len(self._members) - self._starting
            wanted = max(0, min(count, self.size) - ready, 0)
            wanted = min(wanted, free)
            self._starting += wanted
        results = await asyncio.gather(*(self._start(shape) for _ in range(wanted)), return_exceptions=True)
        started = [r for r in results if isinstance(r, WarmContainer)]
        async with self._changed:
            self._starting -= wanted
            for container in started:
                if self.closed:
                    self._spawn(self._remove(container))
                else:
                    self._members.add(container)
                    self._idle.append(container)
            self._changed.notify_all()
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]
        return len(started)

    async def resize(self, size: int) -> None:
        """Allow ``size`` containers from now on; idle ones beyond it are removed (busy ones when released)."""
        async with self._changed:
            self.size = size
            while len(self._members) + self._starting > self.size and self._idle:
                self._drop(self._idle.pop(0))
            self._changed.notify_all()

    async def close(self) -> None:
        """Remove every container (busy ones too) and wait for pending removals."""
        async with self._changed:
            self.closed = True
            members = list(self._members)
            self._members.clear()
            self._idle.clear()
            self._changed.notify_all()
        for container in members:
            container.stream.close()
        await asyncio.gather(*(self._remove(c) for c in members), return_exceptions=True)
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
