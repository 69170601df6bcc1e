"""Output that scripts can read: ``--json`` documents, and tables that never cut an id.

Every list and show command takes ``--json`` and then prints exactly one JSON
document on stdout (a list command: an array of objects with every field).
Without ``--json``, tables go to a terminal as rich tables whose id columns
fold instead of being shortened. Off a terminal (a pipe, a file, CI) nothing
is cut or wrapped, whatever the command: the consoles of every command come
from ``make_console``, which prints text there as long as its lines are and
lays tables and panels out at their natural width.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.protocol import rich_cast
from rich.table import Table

__all__ = [
    "UncutConsole",
    "add_id_column",
    "json_option",
    "make_console",
    "plot_location",
    "print_json",
    "print_table",
    "write_output_file",
]

_UNBOUNDED = 1_000_000
"""A width no table reaches: off a terminal, tables are measured against it."""


def json_option(what: str) -> Any:
    """The ``--json`` flag of a list or show command, ``what`` naming the document printed."""
    return typer.Option(False, "--json", help=f"Print {what} as JSON (one document on stdout) for scripts.")


def print_json(data: object) -> None:
    """Print ``data`` as one indented JSON document on stdout (never through rich markup)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def add_id_column(table: Table, header: str = "id") -> None:
    """An id column: in a narrow terminal the id folds onto a second line instead of losing its end."""
    table.add_column(header, overflow="fold")


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
    return Measurement.get(console, console.options.update_width(_UNBOUNDED), renderable).maximum


def make_console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """The console a command prints with: ``UncutConsole``, no automatic highlighting.

    ``stderr`` prints to standard error; ``file`` to that stream instead (tests).
    """
    return UncutConsole(stderr=stderr, file=file, highlight=False)


def print_table(console: Console, table: Table) -> None:
    """Print ``table``; off a terminal, at its natural width so that nothing in it is cut or wrapped."""
    if console.is_terminal or isinstance(console, UncutConsole):
        console.print(table)
        return
    width = Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum
    wide = Console(file=console.file, width=max(width, console.width), highlight=False, color_system=None)
    wide.print(table)


def plot_location(path: Path) -> str:
    """Where a report's plot is, or why there is none (matplotlib comes with an extra)."""
    from debatecode.bench._plots import PLOTS_EXTRA_HINT

    return str(path) if path.exists() else f"not drawn, matplotlib is missing: {PLOTS_EXTRA_HINT}"


def write_output_file(path: Path, text: str) -> None:
    """Write ``text`` to the file a user named (``-o FILE``, ``--export-canonical FILE``).

    A folder that does not exist, or a folder given as the file, is bad input
    (exit 2: fix the path); a disk that refuses the write (full, over quota,
    read-only) or any other system error exits 3, naming the file.

    Raises:
        typer.Exit: after printing what went wrong.
    """
    from debatecode.cli.common import fail
    from debatecode.errors import DiskWriteError, ExitCode, disk_write_failure

    if path.is_dir():
        raise fail(f"cannot write {path}: it is a folder", ExitCode.BAD_INPUT, hint="give the path of a file")
    if not path.parent.is_dir():
        raise fail(
            f"cannot write {path}: the folder {path.parent} does not exist",
            ExitCode.BAD_INPUT,
            hint=f"create it first (mkdir -p {path.parent}) or give a path in an existing folder",
        )
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        full = disk_write_failure(exc)
        if full is not None:
            cause = OSError(full.errno, full.strerror, full.filename or str(path))
            kept = "Nothing else was changed."
            raise fail(
                str(DiskWriteError(cause, kept=kept, then="run the command again")), ExitCode.RUN_FAILED
            ) from None
        raise fail(f"cannot write {path}: {exc.strerror or exc}", ExitCode.RUN_FAILED) from None
