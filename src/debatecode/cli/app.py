"""The root ``debatecode`` command: sub-commands registered, nothing heavy imported."""

from __future__ import annotations

import typer
from rich.markup import escape

from debatecode import __version__
from debatecode.cli import audit as audit_cmd
from debatecode.cli import bench as bench_cmd
from debatecode.cli import debate as debate_cmd
from debatecode.cli import export as export_cmd
from debatecode.cli import hook as hook_cmd
from debatecode.cli import memory as memory_cmd
from debatecode.cli import sandbox as sandbox_cmd
from debatecode.cli import serve as serve_cmd
from debatecode.cli import sessions as sessions_cmd
from debatecode.cli import solve as solve_cmd
from debatecode.cli import sweep as sweep_cmd
from debatecode.cli.common import ErrorBoundaryGroup, setup_logging

app = typer.Typer(
    name="debatecode",
    help="Several LLM agents debate their way to correct code; every claim is settled by running it in a sandbox.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=ErrorBoundaryGroup,
    epilog="Exit status: 0 ok; 1 tests fail (solve); 2 bad input; 3 run failure or unexpected error; "
    "4 rejected at an approval gate; 5 design debate escalated, nobody chose; 6 paused at a checkpoint; "
    "130 interrupted. See docs/cli.md.",
)

app.command("solve", help=solve_cmd.__doc__)(solve_cmd.solve)
app.command("debate", help=debate_cmd.debate.__doc__)(debate_cmd.debate)
app.command("sweep", help=sweep_cmd.sweep.__doc__)(sweep_cmd.sweep)
app.command("serve", help=escape(serve_cmd.serve.__doc__ or ""))(serve_cmd.serve)
sessions_cmd.app.command("view")(serve_cmd.view_session)
for _name in ("audit", "replay", "gates", "approve", "reject"):
    sessions_cmd.app.command(_name)(getattr(audit_cmd, _name))
app.add_typer(sessions_cmd.app, name="sessions", help="List, inspect, audit and replay stored debate sessions.")
app.add_typer(sandbox_cmd.app, name="sandbox", help="Check, build and use the code sandbox.")
app.add_typer(bench_cmd.app, name="bench", help="Benchmark bridges: HumanEval and SWE-bench, strategies compared.")
app.add_typer(export_cmd.app, name="export", help="Export sessions and benchmark runs for other tools (inspect_ai).")
app.add_typer(memory_cmd.app, name="memory", help="Inspect and manage episodic memory and accumulated lessons.")
app.add_typer(
    hook_cmd.app, name="hook", help="Install and run git hooks that check Python changes (ruff, radon, bandit)."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"debatecode {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Debug logging for any command, with the traceback of an unexpected error."
    ),
) -> None:
    """debatecode: multi-agent code debate with sandboxed verification."""
    if verbose:
        setup_logging(everywhere=True)


def main() -> None:
    """Console-script entry point."""
    from debatecode.cli.forced_stop import guard_exit

    try:
        app()
    finally:
        guard_exit()


if __name__ == "__main__":
    main()
