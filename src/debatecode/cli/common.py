"""What every command shares: consoles, logging set-up and error reporting.

Exit statuses are ``debatecode.errors.ExitCode``. One function, ``exit_for``,
turns an error into one message and the status of its kind (the rule written
in docs/cli.md, "Exit status"); ``reporting_errors`` applies it inside a
command, and ``ErrorBoundaryGroup`` around every command, so an *unexpected*
exception too becomes one line and ``RUN_FAILED`` (3), with the traceback
logged at debug level (shown with ``-v``).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from debatecode.cli.console import make_console

if TYPE_CHECKING:
    from pathlib import Path
    from types import FrameType

    from typer._click import Context as ClickContext  # typer >= 0.20 vendors click

    from debatecode.store.repository import SessionStore

__all__ = [
    "STORE_CONFIG_HELP",
    "ErrorBoundaryGroup",
    "console",
    "err_console",
    "error_boundary",
    "exit_for",
    "fail",
    "open_configured_store",
    "parse_models",
    "reporting_errors",
    "sandbox_option",
    "setup_logging",
]

console = make_console()
err_console = make_console(stderr=True)
logger = logging.getLogger("debatecode.cli")

STORE_CONFIG_HELP = "Config file (default: ./debatecode.toml if present); its store_url picks the store."
"""Help of the ``--config`` option of the commands that only read or write the store."""

_UNEXPECTED_SHOWN = 300
"""Characters of an unexpected exception's message shown on its one line."""


class _Verbosity:
    """Whether the root ``debatecode -v`` asked for debug logging in every command."""

    everywhere = False


def setup_logging(verbose: bool = False, *, everywhere: bool = False) -> None:
    """Route debatecode's module loggers to stderr through rich. Handlers live only in the CLI.

    ``verbose`` (a command's ``-v``) turns on debug logging; ``everywhere``
    (the root ``debatecode -v``) keeps it on whatever the command asks later.
    """
    from rich.logging import RichHandler

    _Verbosity.everywhere = _Verbosity.everywhere or everywhere
    verbose = verbose or _Verbosity.everywhere
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    handler = RichHandler(console=err_console, show_time=False, show_path=False, markup=False, rich_tracebacks=False)
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger("debatecode")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.propagate = False
    for noisy in ("LiteLLM", "litellm", "httpx", "docker", "urllib3", "git"):
        logging.getLogger(noisy).setLevel(logging.ERROR)


def fail(message: str, code: int, hint: str | None = None) -> typer.Exit:
    """Print an error (and what to do) to stderr and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}", soft_wrap=True)
    if hint:
        err_console.print(f"[yellow]hint:[/] {hint}", soft_wrap=True)
    return typer.Exit(code)


def sandbox_option() -> Any:
    """The ``--sandbox`` option of the commands that run generated code (default: the config's backend)."""
    return typer.Option(
        None,
        "--sandbox",
        help="auto (Docker, else bubblewrap, else refuse), docker, local (bubblewrap) or unsafe-host (no isolation).",
    )


def open_configured_store(config_file: Path | None) -> SessionStore:
    """The store that ``config_file`` (default: ./debatecode.toml, then ``DEBATECODE_*``) names; the caller closes it.

    Raises:
        ConfigError: the config file is invalid.
        StoreError: the store cannot be opened.
    """
    from debatecode.config import load_config
    from debatecode.store import open_store

    return open_store(load_config(config_file).store_url)


def parse_models(text: str) -> dict[str, str]:
    """The ``--models`` option, ``role=model`` pairs separated by commas, as a role -> model dict.

    Raises:
        ConfigError: an item is not a ``role=model`` pair.
    """
    from debatecode.errors import ConfigError

    pairs = [item.split("=", 1) for item in text.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise ConfigError("--models takes role=model pairs separated by commas, e.g. red=openai/gpt-4o-mini")
    return {role.strip(): model.strip() for role, model in pairs}


def _plain(text: str) -> str:
    """``text`` safe to print through rich markup."""
    from rich.markup import escape

    return escape(text)


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Inside a command: a debatecode error or Ctrl-C becomes its message and exit status (``exit_for``)."""
    from debatecode.errors import DebatecodeError

    try:
        yield
    except (DebatecodeError, KeyboardInterrupt) as exc:
        raise exit_for(exc) from None


@contextmanager
def error_boundary() -> Iterator[None]:
    """The last line of defence around a command: whatever escapes it gets its message and status (``exit_for``).

    Exits and click's own usage errors (exit 2) pass through untouched, and so
    does a closed stdout (``| head``): typer then exits 1 quietly, as Python's
    docs advise.
    """
    try:
        yield
    except (typer.Exit, typer.Abort, typer.TyperException, BrokenPipeError):
        raise
    except (Exception, KeyboardInterrupt) as exc:
        raise exit_for(exc) from None


def exit_for(exc: BaseException) -> typer.Exit:
    """Print ``exc`` as one message and return the ``Exit`` of its status: the one rule (docs/cli.md, "Exit status").

    - a ``DebatecodeError``: its message and its kind's ``exit_code``: 2 for a ``UserError`` (what the
      command was given is wrong: an argument, a file, an id, a name, a config value), 3 for a ``RunError``
      (what it runs on failed: model, sandbox, store, disk, git, budget); see ``debatecode.errors``;
    - Ctrl-C, and SIGTERM (turned into it): 130;
    - an ``OSError`` saying the disk refused a write (full, over quota, read-only): 3, saying so;
    - anything else is a bug: 3, one line naming it, the traceback logged at debug level (``-v``).
    """
    from debatecode.errors import DebatecodeError, DiskWriteError, ExitCode, disk_write_failure

    if isinstance(exc, DebatecodeError):
        logger.debug("%s: %s", type(exc).__name__, exc, exc_info=exc)
        return fail(_plain(str(exc)), exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        err_console.print("[yellow]interrupted[/]")
        return typer.Exit(ExitCode.INTERRUPTED)
    full = disk_write_failure(exc)
    if full is not None:
        logger.debug("the disk refused a write, traceback follows", exc_info=exc)
        return fail(_plain(str(DiskWriteError(full, kept=_KEPT, then=_THEN))), ExitCode.RUN_FAILED)
    logger.debug("unexpected error, traceback follows", exc_info=exc)
    return fail(_plain(_one_line(exc)), ExitCode.RUN_FAILED)


_KEPT = "What was written before is kept, and so is every session in the store."
_THEN = (
    "run the command again; a session it left `failed` continues with `--resume ID` "
    "(`debatecode sessions list --status failed` lists them)"
)


def _one_line(exc: BaseException) -> str:
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if len(first) > _UNEXPECTED_SHOWN:
        first = first[: _UNEXPECTED_SHOWN - 1] + "…"
    detail = f": {first}" if first else ""
    return (
        f"unexpected {type(exc).__name__}{detail} "
        "(a bug in debatecode: run again with -v for the traceback, and please report it)"
    )


class ErrorBoundaryGroup(TyperGroup):
    """The root command group: runs every sub-command inside ``error_boundary``."""

    def invoke(self, ctx: ClickContext) -> Any:
        with error_boundary(), _terminate_as_interrupt():
            return super().invoke(ctx)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (``timeout``, ``docker stop``, a cancelled CI job) like Ctrl-C.

    The session in progress is then stopped as ``cancelled`` instead of being
    left ``running`` by a process that died without cleaning up. SIGTERM goes
    to whatever handles SIGINT at that moment: inside a command's
    ``asyncio.run(main())`` that is asyncio's, which cancels ``main()`` so it
    unwinds (session settled, services closed) before ``KeyboardInterrupt`` is
    raised; a ``KeyboardInterrupt`` raised in the middle of a task instead would
    skip that and leave the task's exception unretrieved.

    A process that inherited SIGINT ignored (a background job of a
    non-interactive shell, ``nohup``-style launchers, some CI runners) would
    never get asyncio's handler, so SIGINT gets Python's default one for the
    command's duration: SIGTERM then takes the same graceful path.

    The graceful path gets a few seconds (``forced_stop.StopWatchdog``): a second
    SIGTERM or Ctrl-C, or that deadline, settles the running session as
    ``cancelled`` and exits 130 at once.
    """
    from debatecode.cli.forced_stop import StopWatchdog

    def interrupt(_signum: int, frame: FrameType | None) -> None:
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):
            on_sigint(signal.SIGINT, frame)  # Python's default handler raises KeyboardInterrupt itself
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    ignored_sigint = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored_sigint:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    watchdog = StopWatchdog()
    try:
        yield
    finally:
        watchdog.close()
        signal.signal(signal.SIGTERM, previous)
        if ignored_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
