"""A stop request ends the process within seconds, whatever the main thread is doing.

Python runs a signal handler in the main thread only, between two bytecodes.
The graceful path (``common._terminate_as_interrupt``: cancel the session, settle
it, close the services) therefore waits for whatever the main thread waits on,
such as ``asyncio.run`` joining a worker thread that embeds a 20 MB task, and a
second SIGTERM used to wait just as long.

``StopWatchdog`` hears every SIGTERM and SIGINT the moment it arrives: the C-level
handler writes the signal number to the wakeup fd (``signal.set_wakeup_fd``), which
a daemon thread reads. The first request leaves the graceful path ``STOP_GRACE_S``
seconds; a second request, or the end of that time, settles the sessions still
running as ``cancelled`` (resumable), drops their leases and exits 130 at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time

__all__ = ["STOP_GRACE_S", "StopWatchdog", "guard_exit"]

STOP_GRACE_S = 5.0
"""How long the graceful path of a stop request may take before the process exits anyway."""

_SETTLE_S = 2.0
"""How long a forced stop waits for the store to record the running sessions as cancelled."""

_STOPS = frozenset({signal.SIGTERM, signal.SIGINT})
_requested = threading.Event()
"""A stop signal arrived during a command of this process."""


class StopWatchdog:
    """Counts stop signals from a daemon thread and forces the exit when the graceful path is too slow.

    Start it in the main thread (``signal.set_wakeup_fd`` requires it); ``close()`` gives the
    wakeup fd back and ends the watching. (After the command, ``guard_exit`` keeps the exit itself
    from hanging.)
    """

    def __init__(self, grace_s: float = STOP_GRACE_S) -> None:
        """Take over the wakeup fd and start watching.

        Raises:
            ValueError: not called from the main thread.
        """
        self.grace_s = grace_s
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        try:
            self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        except BaseException:
            os.close(self._read)
            os.close(self._write)
            raise
        self._lock = threading.Lock()
        self._deadline: float | None = None
        self._thread = threading.Thread(target=self._watch, name="debatecode-stop-watchdog", daemon=True)
        self._thread.start()

    @property
    def stop_requested(self) -> bool:
        """Whether a stop signal arrived while watching."""
        return self._deadline is not None

    def close(self) -> None:
        """Give the wakeup fd back and stop watching (the command is over)."""
        with contextlib.suppress(ValueError):  # not the main thread: the fd stays ours, which is harmless
            current = signal.set_wakeup_fd(self._previous)
            if current != self._write:  # somebody took the wakeup fd over since: leave it theirs
                signal.set_wakeup_fd(current)
        os.close(self._write)  # the watcher reads end-of-file and returns

    def _watch(self) -> None:
        try:
            while True:
                with self._lock:
                    deadline = self._deadline
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self._read], [], [], timeout)
                if not ready:
                    self._force(f"forced after {self.grace_s:g}s, without waiting for the work still running")
                    return
                data = os.read(self._read, 512)
                if not data:
                    return
                for signum in data:
                    if signum not in _STOPS:
                        continue
                    _requested.set()
                    with self._lock:
                        first = self._deadline is None
                        if first:
                            self._deadline = time.monotonic() + self.grace_s
                    if not first:
                        self._force("forced by a second stop request")
                        return
        finally:
            os.close(self._read)

    def _force(self, why: str) -> None:
        """Settle the sessions still running, say so, and exit 130 now, from the watcher's thread."""
        from debatecode.errors import ExitCode

        settled: list[str] = []
        settler = threading.Thread(target=lambda: settled.extend(_settle_held()), daemon=True)
        settler.start()
        settler.join(_SETTLE_S)
        what = f"; session {', '.join(settled)} stored as cancelled: --resume continues it" if settled else ""
        # os.write: the main thread may hold the locks of sys.stderr or of rich's console.
        with contextlib.suppress(OSError):
            os.write(sys.__stderr__.fileno() if sys.__stderr__ else 2, f"interrupted ({why}){what}\n".encode())
        os._exit(ExitCode.INTERRUPTED)


def guard_exit() -> None:
    """After a command that a stop request ended: exit 130 within ``STOP_GRACE_S`` even if threads are left.

    The interpreter joins every non-daemon thread at exit (a worker thread still embedding a
    huge task, say). The console script calls this on its way out; in-process callers never do.
    """
    from debatecode.errors import ExitCode

    if not _requested.is_set() or not _other_threads_run():
        return
    timer = threading.Timer(STOP_GRACE_S, os._exit, args=(ExitCode.INTERRUPTED,))
    timer.daemon = True
    timer.start()


def _settle_held() -> list[str]:
    """The running sessions of this process settled as cancelled (none when no session ever ran here)."""
    lifetime = sys.modules.get("debatecode.protocol.session_lifetime")
    if lifetime is None:
        return []
    settled: list[str] = lifetime.settle_held_sessions()
    return settled


def _other_threads_run() -> bool:
    """Whether a non-daemon thread besides the main one still runs (the interpreter joins those at exit)."""
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())
