"""SIGTERM stops a command like Ctrl-C: inside ``asyncio.run`` the main coroutine is cancelled and unwinds."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from debatecode.cli.common import _terminate_as_interrupt

pytestmark = pytest.mark.usefixtures("ctrl_c_raises")


def test_sigterm_inside_asyncio_run_cancels_main_which_cleans_up_then_interrupts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    async def main() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        finally:
            await asyncio.sleep(0)  # the clean-up may still await (close sandboxes, settle the session)
            seen.append("cleaned up")

    with _terminate_as_interrupt(), pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert seen == ["cancelled", "cleaned up"]
    assert "never retrieved" not in caplog.text


def test_sigterm_outside_an_event_loop_raises_keyboard_interrupt() -> None:
    with _terminate_as_interrupt(), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs first, as soon as the signal arrives


def test_the_previous_sigterm_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with _terminate_as_interrupt():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_takes_the_graceful_path_when_sigint_was_inherited_ignored(caplog: pytest.LogCaptureFixture) -> None:
    # A background job of a non-interactive shell starts with SIGINT ignored; asyncio then installs no handler,
    # and SIGTERM used to raise KeyboardInterrupt wherever the main task happened to be (a leaked traceback).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    seen: list[str] = []

    async def main() -> None:
        seen.append("asyncio's handler" if callable(signal.getsignal(signal.SIGINT)) else "no handler")
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    try:
        with _terminate_as_interrupt(), pytest.raises(KeyboardInterrupt):
            asyncio.run(main())
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # given back as it was inherited
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == ["asyncio's handler", "cancelled"]
    assert "never retrieved" not in caplog.text


def test_the_wakeup_fd_comes_back_and_the_watchdog_thread_ends() -> None:
    import threading

    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    with _terminate_as_interrupt():
        current = signal.set_wakeup_fd(-1)
        signal.set_wakeup_fd(current)
        assert current not in (-1, before), "the watchdog listens on a wakeup fd of its own"
        watchdogs = [t for t in threading.enumerate() if t.name == "debatecode-stop-watchdog"]
        assert len(watchdogs) == 1 and watchdogs[0].daemon
    watchdogs[0].join(5)
    assert not watchdogs[0].is_alive()
    assert signal.set_wakeup_fd(before) == before
