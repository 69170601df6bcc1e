"""``debatecode sandbox``: check the backends, build the image, run a file, clean up.

Module-level imports stay light (typer, rich); the Docker SDK and the
backends are imported inside the commands.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from debatecode.cli.common import fail
from debatecode.cli.console import make_console
from debatecode.cli.output import json_option, print_json

if TYPE_CHECKING:
    from debatecode.config import SandboxSettings
    from debatecode.sandbox.base import ExecJob

__all__ = ["app"]

EXEC_MAX_TIMEOUT_S = 86_400.0
"""``sandbox.settings.MAX_TIMEOUT_S``, spelled out: importing the sandbox package here would load pydantic for ``--help``."""

app = typer.Typer(
    help="Check which sandbox backends work here, build the Docker sandbox image offline, run a file, clean up.",
    no_args_is_help=True,
)


def _console() -> Console:
    return make_console()


@app.command()
def doctor(
    as_json: bool = json_option(
        'the verdict ({"configured", "auto", "auto_refusal", "backends": [{"name", "usable", "chosen", "reason"}]})'
    ),
) -> None:
    """Show each backend, whether it is usable here and why, and which one `auto` picks (or why it refuses)."""
    from debatecode.config import load_config
    from debatecode.errors import DebatecodeError
    from debatecode.sandbox.registry import UNSAFE_HOST, auto_refusal, describe_backends

    console = _console()
    try:
        settings = load_config().sandbox
    except DebatecodeError as exc:
        raise fail(escape(str(exc)), exc.exit_code) from exc
    if as_json:
        statuses = describe_backends(settings)
        chosen_name = next((s.name for s in statuses if s.chosen), None)
        reasons = {s.name: s.reason for s in statuses}
        print_json(
            {
                "configured": settings.backend,
                "auto": chosen_name,
                "auto_refusal": None
                if chosen_name is not None
                else auto_refusal(reasons.get("docker", ""), reasons.get("local", "")),
                "backends": [
                    {"name": s.name, "usable": s.usable, "chosen": s.chosen, "reason": s.reason} for s in statuses
                ],
            }
        )
        return
    with console.status("probing sandbox backends..."):
        statuses = describe_backends(settings)
    table = Table(title="debatecode sandbox backends", show_lines=True)
    table.add_column("backend", style="bold")
    table.add_column("usable")
    table.add_column("auto picks")
    table.add_column("why", overflow="fold")
    for status in statuses:
        usable = "[green]yes[/green]" if status.usable else "[red]no[/red]"
        picks = "[bold]<-[/bold]" if status.chosen else ""
        if status.name == UNSAFE_HOST:
            usable = "[yellow]yes, unsafe[/yellow]" if status.usable else usable
            picks = "never"
        table.add_row(status.name, usable, picks, status.reason)
    console.print(table)
    chosen = next((s for s in statuses if s.chosen), None)
    by_name = {s.name: s for s in statuses}
    if chosen is None:
        refusal = auto_refusal(by_name["docker"].reason, by_name["local"].reason)
        console.print(f"[red]auto would refuse to run jobs:[/red] {refusal}", soft_wrap=True)
    elif chosen.name == "docker":
        console.print("auto picks [bold]docker[/bold]: the engine answers and the image is present.")
    else:
        console.print(
            f"auto picks [bold yellow]{chosen.name}[/bold yellow] (bubblewrap) because Docker is not usable: "
            f"{by_name['docker'].reason}",
            soft_wrap=True,
        )
    console.print(
        f"configured backend: [bold]{settings.backend}[/bold] (sandbox.backend / DEBATECODE_SANDBOX__BACKEND)"
    )
    if settings.backend == UNSAFE_HOST:
        console.print(
            f"[bold red]{UNSAFE_HOST} is configured: generated code runs on this host without isolation.[/bold red]"
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
    except DebatecodeError as exc:  # to stderr, with the status of its kind, as every error
        raise fail(f"sandbox image build failed: {escape(str(exc))}", exc.exit_code) from None
    console.print(f"[green]ready:[/green] {settings.image} (content tag {tag})")


@app.command("exec")
def exec_file(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="Python file to run.")],
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            "-b",
            help="auto, docker, local (bubblewrap) or unsafe-host (no isolation) (default: sandbox.backend).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, max=EXEC_MAX_TIMEOUT_S, help="Wall-clock limit in seconds (at most 86400)."),
    ] = None,
    memory: Annotated[int | None, typer.Option("--memory", min=32, help="Memory limit in MiB.")] = None,
) -> None:
    """Run FILE with `python3 FILE` in the sandbox and print the result as one JSON object.

    Exits 0 whenever the JSON was produced, whatever the job did; 2 for bad input, 3 when the sandbox failed.
    """
    from debatecode.config import load_config
    from debatecode.errors import DebatecodeError
    from debatecode.input_files import MAX_SOURCE_BYTES, read_input_file
    from debatecode.sandbox.base import ExecJob, Limits

    try:
        settings = load_config().sandbox.model_copy(update={"pool_size": 0})
        limits = Limits.from_settings(
            settings, timeout_s=timeout or settings.timeout_s, memory_mb=memory or settings.memory_mb
        )
        source = read_input_file(file, max_bytes=MAX_SOURCE_BYTES, what="Python file")
        job = ExecJob(
            files={file.name: source.decode("utf-8", errors="replace")},
            argv=["python3", file.name],
            limits=limits,
        )
        result = asyncio.run(_run_once(settings, job, backend))
    except DebatecodeError as exc:
        typer.echo(json.dumps({"error": str(exc), "backend": getattr(exc, "backend", None)}))
        typer.echo(f"debatecode sandbox exec: {exc}", err=True)
        raise typer.Exit(code=exc.exit_code) from exc
    typer.echo(json.dumps(result, ensure_ascii=False))


async def _run_once(settings: SandboxSettings, job: ExecJob, backend: str | None) -> dict[str, object]:
    from debatecode.sandbox.registry import create_sandbox

    async with create_sandbox(settings, backend) as sandbox:
        result = await sandbox.run(job)
    return {
        "status": result.status,
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "stdout_truncated": result.stdout_truncated,
        "stderr_truncated": result.stderr_truncated,
        "truncated": result.truncated,
        "duration_s": round(result.duration_s, 4),
        "backend": result.backend or sandbox.name,
    }


@app.command()
def cleanup(
    everything: Annotated[
        bool, typer.Option("--all", help="Remove every debatecode container, even those of live processes.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be removed.")] = False,
) -> None:
    """Remove debatecode containers left behind by processes that died (the start-up sweep, on demand)."""
    from debatecode.config import load_config
    from debatecode.errors import DebatecodeError
    from debatecode.sandbox.docker import DockerSandbox

    console = _console()
    try:
        sandbox = DockerSandbox(load_config().sandbox)
        report = sandbox.sweep(everything=everything, dry_run=dry_run)
        sandbox.close_sync()
    except DebatecodeError as exc:
        raise fail(f"cleanup failed: {escape(str(exc))}", exc.exit_code) from None
    verb = "would remove" if dry_run else "removed"
    for name, reason in sorted(report.removed.items()):
        console.print(f"{verb} {name}: {reason}", soft_wrap=True)
    for name, reason in sorted(report.failed.items()):
        console.print(f"[red]could not remove[/red] {name}: {reason}", soft_wrap=True)
    for name, reason in sorted(report.kept.items()):
        console.print(f"[dim]kept {name}: {reason}[/dim]", soft_wrap=True)
    console.print(f"{verb} {len(report.removed)}, kept {len(report.kept)}, failed {len(report.failed)}")
    if report.failed:
        raise typer.Exit(code=3)
