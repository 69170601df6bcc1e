"""The local runner as a child process driven from asyncio, without asyncio's subprocess transports.

asyncio's ``create_subprocess_exec`` (3.11) can hang for good when the task
that spawns the process, or its internal pipe-connecting task, is cancelled
half-way, for instance when ``asyncio.run`` shuts down while a job starts
(CPython issues 103847, 125502, 133536). Here the process is a plain
``subprocess.Popen`` started synchronously (asyncio starts it the same way),
its pipes are non-blocking file descriptors watched with ``add_reader`` /
``add_writer``, and its exit is watched through a pidfd (or polled where
there is none). Every await is on a future this module owns, so cancelling at
any moment is safe: ``terminate`` kills the process group, reaps the process
and closes the pipes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable

__all__ = ["RunnerProcess"]

_CHUNK = 65536
_POLL_S = 0.01


class RunnerProcess:
    """One started child, in its own session, with stdin, stdout and stderr pipes."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self._stdin: int | None = popen.stdin.fileno()
        self._stdout = popen.stdout.fileno()
        self._stderr = popen.stderr.fileno()
        for fd in (self._stdin, self._stdout, self._stderr):
            os.set_blocking(fd, False)
        self._pidfd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._pidfd = os.pidfd_open(popen.pid)

    @classmethod
    def start(
        cls,
        command: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        preexec: Callable[[], None],
        pass_fds: tuple[int, ...],
    ) -> RunnerProcess:
        """Start ``command`` in a new session.

        Raises:
            OSError, subprocess.SubprocessError: it could not be started (or ``preexec`` failed).
        """
        popen = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=preexec,
            pass_fds=pass_fds,
        )
        return cls(popen)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def feed_stdin(self, data: bytes) -> None:
        """Write ``data`` to the child's stdin and close it; a child that stops reading ends the write."""
        view = memoryview(data)
        try:
            while view and self._stdin is not None:
                try:
                    written = os.write(self._stdin, view[:_CHUNK])
                except BlockingIOError:
                    await _fd_ready(self._stdin, write=True)
                    continue
                except OSError:  # EPIPE: the child is gone or closed its stdin
                    return
                view = view[written:]
        finally:
            self._close_stdin()

    async def read_capped(self, which: str, cap: int) -> tuple[bytes, bool]:
        """Read ``stdout`` or ``stderr`` to EOF, keeping at most ``cap`` bytes; the rest is drained and dropped."""
        fd = self._stdout if which == "stdout" else self._stderr
        kept = bytearray()
        overflow = False
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                await _fd_ready(fd)
                continue
            except OSError:
                break
            if not chunk:
                break
            room = cap - len(kept)
            if room > 0:
                kept += chunk[:room]
            overflow = overflow or len(chunk) > room
        return bytes(kept), overflow

    async def wait(self) -> int:
        """Wait for the child to exit, reap it and return its return code."""
        while (code := self._popen.poll()) is None:
            if self._pidfd is not None:
                await _fd_ready(self._pidfd)
            else:
                await asyncio.sleep(_POLL_S)
        return code

    def kill_group(self) -> None:
        """SIGKILL the child's process group, unless the child was reaped already (its id may be reused)."""
        if self._popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._popen.pid, signal.SIGKILL)

    async def terminate(self, wait_s: float = 5.0) -> None:
        """Kill the process group, reap the child (waiting up to ``wait_s``), close the pipes."""
        self.kill_group()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wait(), wait_s)
        finally:
            self.close()

    def close(self) -> None:
        """Close the pipes and the pidfd (the child is reaped later by ``subprocess`` if still running)."""
        self._close_stdin()
        for stream in (self._popen.stdout, self._popen.stderr):
            if stream is not None:
                stream.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        self._popen.poll()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin = None
            assert self._popen.stdin is not None
            with contextlib.suppress(OSError):
                self._popen.stdin.close()


async def _fd_ready(fd: int, *, write: bool = False) -> None:
    """Wait until ``fd`` is readable (or writable)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if write:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)
