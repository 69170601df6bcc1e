"""Output that scripts can read: ``--json`` documents, and tables that never cut an id.

Every list and show command takes ``--json`` and then prints exactly one JSON
document on stdout (a list command: an array of objects with every field).
Without ``--json``, tables go to a terminal as rich tables whose id columns
fold instead of being shortened; off a terminal (a pipe, a file, CI) a table
is as wide as its content, so no cell is cut or wrapped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

__all__ = ["add_id_column", "json_option", "plot_location", "print_json", "print_table"]

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


def print_table(console: Console, table: Table) -> None:
    """Print ``table``; off a terminal, at its natural width so that nothing in it is cut or wrapped."""
    if console.is_terminal:
        console.print(table)
        return
    width = Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum
    wide = Console(file=console.file, width=max(width, console.width), highlight=False, color_system=None)
    wide.print(table)


def plot_location(path: Path) -> str:
    """Where a report's plot is, or why there is none (matplotlib comes with an extra)."""
    from debatecode.bench._plots import PLOTS_EXTRA_HINT

    return str(path) if path.exists() else f"not drawn, matplotlib is missing: {PLOTS_EXTRA_HINT}"
