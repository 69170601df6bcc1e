"""List and inspect stored debate sessions."""

from __future__ import annotations

from pathlib import Path

import typer

from debatecode.cli.common import console, reporting_errors

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

_CONFIG_HELP = "Config file (default: ./debatecode.toml if present); its store_url picks the store."


def _store(config_file: Path | None):  # type: ignore[no-untyped-def]
    from debatecode.config import load_config
    from debatecode.store import open_store

    return open_store(load_config(config_file).store_url)


@app.command("list")
def list_sessions(
    limit: int = typer.Option(20, "--limit", help="Show at most this many sessions, newest first."),
    status: str | None = typer.Option(None, "--status", help="Only sessions with this status."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
) -> None:
    """List sessions, newest first."""
    from rich.table import Table

    with reporting_errors():
        store = _store(config_file)
        sessions = store.list_sessions(limit=limit, status=status)
        store.close()
    if not sessions:
        console.print("no sessions yet: run `debatecode solve TASK.md`")
        return
    table = Table(header_style="bold")
    for column in ("id", "started", "task", "status", "model", "tests", "tokens", "time"):
        table.add_column(column)
    for s in sessions:
        outcome = s.outcome or {}
        tests = f"{outcome.get('passed', '-')}/{outcome.get('total', '-')}" if outcome.get("winner") else "-"
        table.add_row(
            s.id,
            s.created_at.strftime("%Y-%m-%d %H:%M"),
            s.task_title,
            s.status,
            s.model,
            tests,
            str(s.prompt_tokens + s.completion_tokens),
            f"{s.duration_s:.1f}s",
        )
    console.print(table)


@app.command("show")
def show_session(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
) -> None:
    """Show one session: its outcome, its turns and its code versions."""
    from rich.table import Table

    from debatecode.protocol.state import TestReport

    with reporting_errors():
        store = _store(config_file)
        session = store.get_session(session_id)
        turns = store.turns(session.id)
        versions = store.versions(session.id)
        store.close()
    console.print(f"[bold]session {session.id}[/] · {session.task_title} · [bold]{session.status}[/]")
    console.print(
        f"task {session.task_path} · model {session.model} · started {session.created_at:%Y-%m-%d %H:%M:%S} UTC"
    )
    console.print(
        f"tokens {session.prompt_tokens}+{session.completion_tokens} · cost ${session.cost_usd:.4f} · {session.duration_s:.1f}s"
    )
    if session.error:
        console.print(f"[red]error:[/] {session.error}")
    outcome = session.outcome or {}
    if outcome.get("winner"):
        console.print(f"winner {outcome['winner']} ({outcome.get('method')}): {outcome.get('reason', '')}")
    turns_table = Table(title=f"{len(turns)} turns", header_style="bold", title_justify="left")
    for column in ("#", "round", "phase", "agent", "status", "tokens", "ms", "tests"):
        turns_table.add_column(column)
    for t in turns:
        tests = ""
        if t.test_results:
            report = TestReport.model_validate(t.test_results)
            tests = f"{report.passed}/{report.total}"
        if t.metadata.get("kind") == "vote":
            tests = f"vote: {t.metadata.get('vote') or 'abstain'}"
        turns_table.add_row(
            str(t.seq),
            str(t.round),
            t.phase,
            t.agent_id,
            t.status,
            f"{t.prompt_tokens}+{t.completion_tokens}",
            str(t.response_time_ms),
            tests,
        )
    console.print(turns_table)
    versions_table = Table(
        title=f"{len(versions)} code versions (branch {session.branch})", header_style="bold", title_justify="left"
    )
    for column in ("v", "agent", "tests", "commit"):
        versions_table.add_column(column)
    for v in versions:
        versions_table.add_row(
            str(v.version_number), v.agent_id, f"{v.tests_passed}/{v.tests_total}", (v.commit_sha or "")[:10]
        )
    console.print(versions_table)
