"""Output that scripts can read: ``--json`` documents, and tables that never cut an id.

Every list and show command takes ``--json`` and then prints exactly one JSON
document on stdout (a list command: an array of objects with every field).
Without ``--json``, tables go to a terminal as rich tables whose id columns
fold instead of being shortened. Off a terminal (a pipe, a file, CI) nothing
is cut or wrapped, whatever the command: the consoles of every command come
from ``cli/console.py``'s ``make_console``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from debatecode.cli.console import UNBOUNDED, UncutConsole

__all__ = ["add_id_column", "json_option", "plot_location", "print_json", "print_table", "write_output_file"]


def json_option(what: str) -> Any:
    """The ``--json`` flag of a list or show command, ``what`` naming the document printed."""
    return typer.Option(False, "--json", help=f"Print {what} as JSON (one document on stdout) for scripts.")


def print_json(data: object) -> None:
    """Print ``data`` as one indented JSON document on stdout (never through rich markup)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def add_id_column(table: Table, header: str = "id") -> None:
    """An id column: in a narrow terminal the id folds onto a second line instead of losing its end."""
    table.add_column(header, overflow="fold")


def print_table(console: Console, table: Table) -> None:
    """Print ``table``; off a terminal, at its natural width so that nothing in it is cut or wrapped."""
    if console.is_terminal or isinstance(console, UncutConsole):
        console.print(table)
        return
    width = Measurement.get(console, console.options.update_width(UNBOUNDED), table).maximum
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
