"""The programmatic entry points: ``solve()``, ``solve_async()`` and the service builder the CLI shares.

``solve()`` works both in a plain script and inside a running event loop (a
Jupyter notebook, an async web handler): there it runs the debate on a loop of
its own in a worker thread and waits for it, so the caller's loop is never
re-entered.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_settings import SettingsError

from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError
from debatecode.protocol.events import EventBus
from debatecode.protocol.services import Services, build_services
from debatecode.task import Task, load_task

if TYPE_CHECKING:
    from debatecode.protocol.engine import DebateResult
    from debatecode.protocol.human import HumanInterface

__all__ = ["Services", "apply_overrides", "build_services", "run_sync", "solve", "solve_async"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def apply_overrides(config: DebateConfig, overrides: Mapping[str, Any]) -> DebateConfig:
    """``config`` with ``overrides`` on top, validated as a whole; ``config`` itself is not changed.

    A key names a setting: ``agents``, or a section's setting as ``sandbox__backend``
    (like the ``DEBATECODE_SANDBOX__BACKEND`` variable) or ``"sandbox.backend"``.
    A section given as a dict (``sandbox={"backend": "local"}``) updates only the
    keys it names. ``None`` is a value like any other.

    Raises:
        ConfigError: an unknown key (named, with the closest known one) or an invalid value.
    """
    from debatecode.config import _check_keys

    nested: dict[str, Any] = {}
    for key, value in overrides.items():
        parts = key.replace("__", ".").split(".")
        target = nested
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise ConfigError(f"override {key!r} sets a key inside {part!r}, which is not a section", key=key)
        target[parts[-1]] = value
    _check_keys(nested, DebateConfig, "solve() overrides")
    # The full dump is passed, so environment variables cannot creep back in over the given config.
    merged = _merge(config.model_dump(), nested, type(config))
    try:
        return type(config).model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in err['loc'])}: {err['msg']} (got {err.get('input')!r})"
            for err in exc.errors()
        )
        first = ".".join(str(part) for part in exc.errors()[0]["loc"]) if exc.errors() else None
        raise ConfigError(f"invalid override: {problems}", source="solve() overrides", key=first) from exc
    except SettingsError as exc:
        raise ConfigError(f"a DEBATECODE_* environment variable could not be read: {exc}") from exc


def _merge(base: dict[str, Any], updates: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``base`` updated by ``updates``, descending only into sub-settings (a plain dict field is replaced)."""
    merged = dict(base)
    for key, value in updates.items():
        annotation = model.model_fields[key].annotation
        section = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        if section is not None and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value, section)
        else:
            merged[key] = value
    return merged


async def solve_async(
    task: Task | Path | str,
    config: DebateConfig | None = None,
    *,
    bus: EventBus | None = None,
    services: Services | None = None,
    resume: str | None = None,
    human: HumanInterface | None = None,
) -> DebateResult:
    """Run a debate on ``task`` (or resume session ``resume``) and return its ``DebateResult``.

    ``task`` is a ``Task`` or the path of a task file; ``config`` defaults to
    ``load_config()`` (``debatecode.toml``, then ``DEBATECODE_*``). ``bus`` receives
    the engine's events as they happen. ``services`` are closed only when built here.

    Every entry path runs a code debate through here (the CLI's ``solve`` and ``audit replay``,
    the server, ``bench``): the engine's session driver holds the session's lease and settles
    the stored session as ``failed`` (``cancelled`` on an interrupt) if anything unexpected
    escapes, so it is never left ``running`` and ``resume`` continues it.

    Raises:
        TaskError, ConfigError, UnknownModelError: bad input; nothing is stored.
        SandboxUnavailable, StoreError: the environment cannot run a session.
        SessionBusy: another process runs or resumes session ``resume``.
    """
    from debatecode.protocol.engine import DebateEngine

    config = config or load_config()
    if resume is not None and services is None:
        config = _stored_config(config, resume)
    parsed = task if isinstance(task, Task) else load_task(task, max_bytes=config.task_max_bytes)
    async with DebateEngine.from_config(config, services=services, bus=bus, human=human) as engine:
        if resume is not None:
            return await engine.resume(resume, parsed)
        return await engine.solve(parsed)


def _stored_config(config: DebateConfig, session_id: str) -> DebateConfig:
    """The config a session resumes with: the stored one, with the limits, budgets, models and checkpoint
    settings ``config`` was given (flags, config file, environment) on top, and ``config``'s store URL.

    Raises:
        SessionNotFound: no such session.
        ConfigError: the settings given do not fit the stored ones.
    """
    from debatecode.protocol.resume import resumed_config
    from debatecode.store import open_store

    store = open_store(config.store_url)
    try:
        stored = store.get_session(session_id).config
    finally:
        store.close()
    return resumed_config(stored, config)


def solve(
    task: Task | Path | str,
    config: DebateConfig | None = None,
    *,
    bus: EventBus | None = None,
    services: Services | None = None,
    resume: str | None = None,
    human: HumanInterface | None = None,
    **overrides: Any,
) -> DebateResult:
    """Run a debate on ``task`` to the end and return its ``DebateResult``; works in notebooks too.

    ``overrides`` are settings applied on top of ``config`` (or of ``load_config()``
    when ``config`` is None): ``agents=2``, ``sandbox__backend="local"``; see
    ``apply_overrides``. The other arguments are those of ``solve_async``.

    Inside a running event loop (Jupyter, IPython, an async framework) the debate
    runs on its own loop in a worker thread while this call waits; interrupting the
    wait cancels the debate, which stops as ``cancelled`` with its turns kept.

    Example::

        config = debatecode.load_config(overrides={"model": "scripted:replies.yaml"})
        result = debatecode.solve("examples/tasks/add.md", config, agents=2)
        print(result.status, result.passed, result.total)

    Raises:
        ConfigError: an unknown or invalid override, a bad config, or overrides with ``resume``.
        TaskError, UnknownModelError, SandboxUnavailable, StoreError: as ``solve_async``.
    """
    if resume is not None and set(overrides) - {"store_url"}:
        raise ConfigError(
            f"a resumed session runs with the config it started with; drop the overrides "
            f"{', '.join(sorted(set(overrides) - {'store_url'}))}, or start a new session (to raise a limit, "
            "budget or model for the resume, pass config=load_config(overrides={...}))",
            key=sorted(set(overrides) - {"store_url"})[0],
        )
    effective = config if config is not None else (load_config() if overrides else None)
    if overrides and effective is not None:
        effective = apply_overrides(effective, overrides)
    return run_sync(lambda: solve_async(task, effective, bus=bus, services=services, resume=resume, human=human))


def run_sync(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``main()`` to completion from synchronous code, with or without a running loop.

    Without a running loop this is ``asyncio.run(main())``. With one (a notebook),
    ``main()`` runs on a new loop in a worker thread, with a copy of the caller's
    context variables, and this call blocks until it ends. A ``KeyboardInterrupt``
    during the wait cancels ``main()``, waits for it to wind down, and is re-raised.

    Raises:
        Whatever ``main()`` raises.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    return _run_in_worker_thread(main)


def _run_in_worker_thread(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    outcome: list[T] = []
    failure: list[BaseException] = []
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[T]]] = []
    started = threading.Event()
    finished = threading.Event()

    async def wrapper() -> T:
        task = asyncio.ensure_future(main())
        running.append((asyncio.get_running_loop(), task))
        started.set()
        return await task

    def target() -> None:
        try:
            outcome.append(asyncio.run(wrapper()))
        except BaseException as exc:  # handed to the waiting thread, which re-raises it
            failure.append(exc)
        finally:
            started.set()
            finished.set()

    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(target,), name="debatecode-solve", daemon=True)
    logger.debug("an event loop is running in this thread: running the coroutine on a worker thread")
    worker.start()
    try:
        # Short waits, not one join(): an interrupt must reach this thread promptly on every platform.
        while not finished.wait(0.1):
            pass
    except KeyboardInterrupt:
        started.wait()
        if running and not finished.is_set():
            loop, task = running[0]
            with contextlib.suppress(RuntimeError):  # the loop closed in the meantime: nothing left to cancel
                loop.call_soon_threadsafe(task.cancel)
        finished.wait()
        raise
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]
