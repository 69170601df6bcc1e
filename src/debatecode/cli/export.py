"""``debatecode export``: sessions and benchmark runs in formats other tools read (inspect_ai eval logs)."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from debatecode.cli.common import STORE_CONFIG_HELP, console, fail, open_configured_store, reporting_errors

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Export sessions and benchmark runs for other tools.")


@app.command("inspect")
def inspect_log(
    session_id: str | None = typer.Argument(
        None, help="Session to export (a unique prefix is enough); or give --bench.", show_default=False
    ),
    bench: Path | None = typer.Option(
        None, "--bench", help="A `bench humaneval` results folder: one eval log per strategy."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="A session: the log file, .eval or .json, or a folder (default: logs/<created>_<task>_<id>.eval; "
        "a .json name gets the <created>_ prefix inspect view needs to list it). "
        "--bench: the folder for the logs (default: BENCH/inspect).",
    ),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    r"""Write a session, or each strategy of a HumanEval run, as an inspect_ai eval log for `inspect view`.

    Needs inspect_ai, the \[inspect] extra: pip install 'debatecode\[inspect]'.
    """
    from debatecode.bench.inspect_export import export_bench, export_session

    if (session_id is None) == (bench is None):
        raise fail("give a SESSION_ID or --bench DIR (one of them)", 2)
    with reporting_errors():
        if bench is not None:
            written = export_bench(bench, out)
            folder = out or bench / "inspect"
        elif session_id is not None:
            with open_configured_store(config_file) as store:
                written = [export_session(store, session_id, out)]
            folder = written[0].parent
    for path in written:
        console.print(f"eval log: {path}", markup=False)
    console.print(f"open with: inspect view --log-dir {shlex.quote(str(folder))}", markup=False)
