"""The console every command prints with: off a terminal, nothing is cut or wrapped at 80 columns.

On a terminal a command's output wraps and its tables fit the window. Output piped to a program
or redirected to a file has no width, and rich assumes 80 columns there: it would wrap long lines
and shorten table cells (``…``). ``make_console`` gives an ``UncutConsole``, which prints text
there as long as its lines are and lays tables and panels out at their natural width.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, Protocol

from rich.console import Console
from rich.measure import Measurement
from rich.protocol import rich_cast

__all__ = ["UNBOUNDED", "Display", "UncutConsole", "display_paused", "make_console"]

UNBOUNDED = 1_000_000
"""A width no table reaches: off a terminal, renderables are measured against it."""


class UncutConsole(Console):
    """A rich console that, off a terminal, never cuts or wraps what it prints.

    On a terminal it is a plain ``Console``: text wraps and tables fit the window.
    Off a terminal (output piped to a program or redirected to a file, where the
    width rich assumes is 80 columns) text is printed with ``soft_wrap`` (each
    line as long as it is), and a table, panel or other measurable renderable
    wider than that is printed at its natural width instead of being squeezed.
    """

    def print(self, *objects: Any, **options: Any) -> None:
        if self.is_terminal:
            super().print(*objects, **options)
            return
        options.setdefault("soft_wrap", True)
        width = max((_natural_width(self, item) for item in objects), default=0)
        if width <= self.width:
            super().print(*objects, **options)
            return
        # rich's own print never lays out wider than the console: a console as wide as this print needs.
        wide = Console(
            file=self.file,
            width=width,
            color_system="auto" if self.color_system else None,
            highlight=False,
            soft_wrap=True,
        )
        wide.print(*objects, **options)


def _natural_width(console: Console, item: object) -> int:
    """How wide ``item`` is laid out with no limit; 0 for text (soft wrap prints it whole) and unmeasurable things."""
    renderable = rich_cast(item)
    if isinstance(renderable, str) or not hasattr(renderable, "__rich_measure__"):
        return 0
    return Measurement.get(console, console.options.update_width(UNBOUNDED), renderable).maximum


def make_console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """The console a command prints with: ``UncutConsole``, no automatic highlighting.

    ``stderr`` prints to standard error; ``file`` to that stream instead (tests).
    """
    return UncutConsole(stderr=stderr, file=file, highlight=False)


class Display(Protocol):
    """A live part of the terminal (rich's ``Status`` spinner or ``Live`` table) that can stop and start again."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


@contextmanager
def display_paused(display: Display | None) -> Iterator[None]:
    """``display`` stopped for the with-block (the terminal asks the human something), started again after it."""
    if display is not None:
        display.stop()
    try:
        yield
    finally:
        if display is not None:
            display.start()
