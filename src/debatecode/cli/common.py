"""What every command shares: consoles, logging set-up and error reporting."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

__all__ = ["console", "err_console", "fail", "reporting_errors", "setup_logging"]

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def setup_logging(verbose: bool = False) -> None:
    """Route debatecode's module loggers to stderr through rich. Handlers live only in the CLI."""
    from rich.logging import RichHandler

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


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Turn debatecode errors into a clear message and the exit code of their kind."""
    from debatecode.errors import DebatecodeError

    try:
        yield
    except DebatecodeError as exc:
        raise fail(str(exc), exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        sys.exit(130)
