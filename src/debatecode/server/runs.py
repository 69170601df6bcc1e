"""Sessions the server runs: each on a thread and event loop of its own, isolated from the web server and each other.

A session started over REST gets its own services (model client, sandbox,
store connection) and its own ``EventBus``. The engine writes every event to the
store's feed, which is what event streams read; the manager only wakes the
streams of its sessions as soon as an event is written (``FeedSignals``), and
holds what a REST call may change in a running session: its checkpoint and
escalation (``WebHuman``, ``server/human.py``) and cancellation. Gates are decided in the store, so a gate of a
session run elsewhere (``debatecode solve`` with gates on) can be decided too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import shutil
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from debatecode.errors import DebatecodeError
from debatecode.protocol.events import Event, EventBus, SessionFinished, SessionStarted
from debatecode.protocol.human import CheckpointDecision
from debatecode.server.human import WebHuman

if TYPE_CHECKING:
    from debatecode._api import Services
    from debatecode.config import DebateConfig
    from debatecode.protocol.design.question import DesignQuestion
    from debatecode.store.repository import SessionStore
    from debatecode.task import Task

__all__ = ["FeedSignals", "LiveSession", "ServicesFactory", "SessionManager"]

logger = logging.getLogger(__name__)

SessionKind = Literal["code", "design"]
SessionBody = Callable[[EventBus, "WebHuman"], Coroutine[Any, Any, Any]]
"""What a started session runs: a coroutine function of its event bus and its web human."""
ServicesFactory = Callable[["DebateConfig"], "Services"]
"""Builds a code session's services from its config: ``build_services``; tests give one over a dummy sandbox."""

START_TIMEOUT_S = 300.0
"""How long a start request waits for the session to exist (services built, row stored)."""


class FeedSignals:
    """Wakes the event streams of a session when the engine wrote a new event. Used on the server's loop only."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Event] = {}

    def current(self, session_id: str) -> asyncio.Event:
        """The signal the next event of ``session_id`` sets; take it *before* reading the store."""
        return self._waiting.setdefault(session_id, asyncio.Event())

    def fire(self, session_id: str) -> None:
        signal = self._waiting.pop(session_id, None)
        if signal is not None:
            signal.set()


@dataclass
class LiveSession:
    """A session this server is running."""

    session_id: str
    kind: SessionKind
    human: WebHuman
    loop: asyncio.AbstractEventLoop
    task: asyncio.Task[Any]
    thread: threading.Thread
    finished: threading.Event = field(default_factory=threading.Event)
    error: str | None = None
    cancelling: bool = False
    """Asked to stop: it is cancelled once, so that its clean-up (which emits ``SessionFinished``) is not cut short."""

    @property
    def running(self) -> bool:
        return not self.finished.is_set()


class SessionManager:
    """Starts, watches, answers and cancels the sessions this server runs."""

    def __init__(self, store: SessionStore, data_dir: Path, services: ServicesFactory | None = None) -> None:
        self.store = store
        self.data_dir = data_dir
        self.services = services
        self.signals = FeedSignals()
        self._live: dict[str, LiveSession] = {}
        self._server_loop: asyncio.AbstractEventLoop | None = None

    # -- starting -----------------------------------------------------------------------

    @contextlib.contextmanager
    def run_folder(self) -> Iterator[Path]:
        """A new, empty folder for one session's output under ``<data_dir>/runs``; removed if the start fails."""
        folder = self.data_dir / "runs" / uuid.uuid4().hex[:12]
        folder.mkdir(parents=True, exist_ok=False)
        try:
            yield folder
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    async def start_solve(self, task: Task, config: DebateConfig, *, checkpoints: bool) -> str:
        """Start a code debate on ``task``; returns its session id once the session is stored.

        Raises:
            DebatecodeError: the session could not start (unknown model, no sandbox, store error).
        """

        async def run(bus: EventBus, human: WebHuman) -> Any:
            from debatecode._api import build_services, solve_async

            services = (self.services or build_services)(config)
            async with services:
                return await solve_async(task, config, services=services, bus=bus, human=human if checkpoints else None)

        return await self._start("code", run, WebHuman(choice_timeout_s=config.checkpoints.timeout_s))

    async def start_debate(
        self, question: DesignQuestion, config: DebateConfig, *, repo: Path, checkpoints: bool
    ) -> str:
        """Start a design debate on ``question``, writing its decision record under ``repo``; returns the id.

        Raises:
            DebatecodeError: the debate could not start.
        """

        async def run(bus: EventBus, human: WebHuman) -> Any:
            from debatecode._design_api import debate_async

            return await debate_async(question, config, repo=repo, bus=bus, human=human if checkpoints else None)

        return await self._start("design", run, WebHuman(choice_timeout_s=config.checkpoints.timeout_s))

    async def _start(self, kind: SessionKind, body: SessionBody, human: WebHuman) -> str:
        self._server_loop = asyncio.get_running_loop()
        started: concurrent.futures.Future[str] = concurrent.futures.Future()
        bus = EventBus()
        holder: dict[str, Any] = {}

        def on_event(event: Event) -> None:
            if isinstance(event, SessionStarted) and event.session_id not in self._live:
                human.bind(self._publish, event.session_id)
                live = LiveSession(event.session_id, kind, human, holder["loop"], holder["task"], holder["thread"])
                self._live[event.session_id] = live
                holder["live"] = live
                if not started.done():
                    started.set_result(event.session_id)
            human.announced(event)  # before anyone hears of a question: an answer to it is then kept
            self._wake(event.session_id)

        bus.subscribe(on_event)

        async def main() -> None:
            holder["loop"] = asyncio.get_running_loop()
            task = asyncio.ensure_future(body(bus, human))
            holder["task"] = task
            try:
                await task
            except asyncio.CancelledError as exc:
                self._settle(holder, exc)
            except BaseException as exc:
                if not started.done():
                    started.set_exception(exc)
                else:
                    self._settle(holder, exc)

        def target() -> None:
            try:
                asyncio.run(main())
            finally:
                live: LiveSession | None = holder.get("live")
                if live is not None:
                    live.finished.set()
                    self._wake(live.session_id)
                if not started.done():
                    started.set_exception(RuntimeError("the session ended before it started"))

        thread = threading.Thread(target=target, name=f"debatecode-{kind}-session", daemon=True)
        holder["thread"] = thread
        thread.start()
        return await asyncio.wait_for(asyncio.wrap_future(started), START_TIMEOUT_S)

    def _settle(self, holder: dict[str, Any], exc: BaseException) -> None:
        """A session that failed after it started: keep the error, make sure its row is not left open."""
        from debatecode.protocol.session_lifetime import settle_session

        live: LiveSession | None = holder.get("live")
        if live is None:
            return
        live.error = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, DebatecodeError | asyncio.CancelledError):
            logger.error("session %s failed unexpectedly", live.session_id, exc_info=exc)
        settle_session(self.store, live.session_id, exc)

    def _publish(self, event: Event) -> None:
        """Write an event of the server's own (an escalation's announcement) to the session's feed, and wake its streams.

        Raises:
            StoreError: the event could not be written.
        """
        from debatecode.protocol.recorder import StoreRecorder

        StoreRecorder(self.store)(event)
        self._wake(event.session_id)

    def _wake(self, session_id: str) -> None:
        loop = self._server_loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the server is shutting down: nobody to wake
            loop.call_soon_threadsafe(self.signals.fire, session_id)

    # -- running sessions -------------------------------------------------------------

    def live(self, session_id: str) -> LiveSession | None:
        """The running (or just finished) session ``session_id`` of this server, if it is one."""
        return self._live.get(session_id)

    def running(self) -> list[LiveSession]:
        return [live for live in self._live.values() if live.running]

    def cancel(self, session_id: str) -> bool:
        """Ask a running session to stop; it ends ``cancelled`` with its turns kept. False when it is not running."""
        live = self._live.get(session_id)
        if live is None or not live.running:
            return False
        if not live.cancelling:
            live.cancelling = True
            with contextlib.suppress(RuntimeError):  # its loop closed in the meantime: it ended anyway
                live.loop.call_soon_threadsafe(live.task.cancel)
        return True

    def checkpoint(self, session_id: str, decision: CheckpointDecision) -> int | None:
        """Answer the checkpoint session ``session_id`` waits at; the round answered, or None when none waits."""
        live = self._live.get(session_id)
        if live is None or not live.running:
            return None
        return live.human.decide(decision)

    def choose(self, session_id: str, label: str, guidance: str | None) -> tuple[str, str] | None:
        """Choose option ``label`` of the escalation session ``session_id`` waits at; None when none waits.

        Raises:
            UnknownOption: the escalation offers no such option.
        """
        live = self._live.get(session_id)
        if live is None or not live.running:
            return None
        return live.human.choose_option(label, guidance)

    def cancel_all(self) -> None:
        """Ask every running session to stop (the server is stopping); they end ``cancelled``, resumable."""
        for live in self.running():
            self.cancel(live.session_id)

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Cancel every running session and wait (up to ``timeout_s`` each) for them to wind down."""
        self.cancel_all()
        for live in list(self._live.values()):
            live.thread.join(timeout_s)


def is_finished_event(event_type: str) -> bool:
    """Whether an event of this type is the last one a session emits."""
    return event_type == SessionFinished.__name__
