"""``debatecode sandbox``: check the sandbox backends and build the sandbox image.

Module-level imports stay light (typer, rich); the Docker SDK and the
backends are imported inside the commands.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["app"]

app = typer.Typer(
    help="Check which sandbox backends work here, and build the Docker sandbox image offline.",
    no_args_is_help=True,
)


def _console() -> Console:
    return Console(highlight=False)


@app.command()
def doctor() -> None:
    """Show each backend, whether it is usable here and why, and which one `auto` picks."""
    from debatecode.config import load_config
    from debatecode.errors import DebatecodeError
    from debatecode.sandbox.registry import describe_backends

    console = _console()
    try:
        settings = load_config().sandbox
    except DebatecodeError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=exc.exit_code) from exc
    with console.status("probing sandbox backends..."):
        statuses = describe_backends(settings)
    table = Table(title="debatecode sandbox backends", show_lines=True)
    table.add_column("backend", style="bold")
    table.add_column("usable")
    table.add_column("auto picks")
    table.add_column("why", overflow="fold")
    for status in statuses:
        usable = "[green]yes[/green]" if status.usable else "[red]no[/red]"
        table.add_row(status.name, usable, "[bold]<-[/bold]" if status.chosen else "", status.reason)
    console.print(table)
    chosen = next((s for s in statuses if s.chosen), None)
    docker = next(s for s in statuses if s.name == "docker")
    if chosen is None:
        console.print("[red]No backend is usable here; jobs cannot run.[/red]")
    elif chosen.name == "docker":
        console.print("auto picks [bold]docker[/bold]: the engine answers and the image is present.")
    else:
        console.print(
            f"auto picks [bold yellow]{chosen.name}[/bold yellow] because Docker is not usable: {docker.reason}"
        )
    console.print(
        f"configured backend: [bold]{settings.backend}[/bold] (sandbox.backend / DEBATECODE_SANDBOX__BACKEND)"
    )


@app.command()
def build(
    base: Annotated[
        str | None,
        typer.Option(help="Base image with python3 (default: python:3.11-slim, else a local Debian base)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when an identical image exists.")] = False,
) -> None:
    """Build the Docker sandbox image offline (pytest inside, no pip, no network needed)."""
    from debatecode.config import load_config
    from debatecode.errors import DebatecodeError
    from debatecode.sandbox.images import build_image

    console = _console()
    try:
        settings = load_config().sandbox
        with console.status("building the sandbox image...") as status:

            def progress(line: str) -> None:
                if line.startswith(
                    ("Step ", "downloading", "building", "creating", "trying", "cannot", "up to date", "built")
                ):
                    console.print(f"[dim]{line}[/dim]")
                status.update(f"[bold]building:[/bold] {line[:100]}")

            tag = build_image(settings, base=base, progress=progress, force=force)
    except DebatecodeError as exc:
        console.print(f"[red]sandbox image build failed:[/red] {exc}")
        raise typer.Exit(code=exc.exit_code) from exc
    console.print(f"[green]ready:[/green] {settings.image} (content tag {tag})")
