"""List and inspect stored debate sessions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from debatecode.cli.common import STORE_CONFIG_HELP, console, fail, open_configured_store, reporting_errors
from debatecode.cli.output import add_id_column, json_option, print_json, print_table

if TYPE_CHECKING:
    from debatecode.store.records import CodeVersionRecord, SessionRecord, TurnRecord
    from debatecode.vcs.worktree import VersionRepository

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)


def _session_status(value: str | None) -> str | None:
    """``--status``: a session status, or a usage error (exit 2) listing them."""
    from typing import get_args

    from debatecode.store.records import SessionStatus

    known = get_args(SessionStatus)
    if value is not None and value not in known:
        raise typer.BadParameter(f"{value!r} is not a session status; use one of: {', '.join(known)}")
    return value


@app.command("list")
def list_sessions(
    limit: int = typer.Option(20, "--limit", min=1, help="Show at most this many sessions, newest first."),
    status: str | None = typer.Option(
        None,
        "--status",
        callback=_session_status,
        help="Only sessions with this status: pending, running, completed, failed, budget_exceeded, cancelled "
        "or paused.",
    ),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
    as_json: bool = json_option("an array of sessions with every stored field"),
) -> None:
    """List sessions, newest first."""
    from rich.table import Table
    from rich.text import Text

    with reporting_errors(), open_configured_store(config_file) as store:
        sessions = store.list_sessions(limit=limit, status=status)
    if as_json:
        print_json([s.model_dump(mode="json") for s in sessions])
        return
    if not sessions:
        console.print("no sessions yet: run `debatecode solve TASK.md`")
        return
    table = Table(header_style="bold")
    add_id_column(table)
    for column in ("started", "task", "status", "model", "tests", "tokens", "time"):
        table.add_column(column)
    for s in sessions:
        outcome = s.outcome or {}
        tests = f"{outcome.get('passed', '-')}/{outcome.get('total', '-')}" if outcome.get("winner") else "-"
        table.add_row(
            s.id,
            s.created_at.strftime("%Y-%m-%d %H:%M"),
            Text(s.task_title),
            s.status,
            Text(s.model),
            tests,
            str(s.prompt_tokens + s.completion_tokens),
            f"{s.duration_s:.1f}s",
        )
    print_table(console, table)


@app.command("show")
def show_session(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
    as_json: bool = json_option('the session, its turns and its code versions ({"session", "turns", "versions"})'),
) -> None:
    """Show one session: its outcome, its turns and its code versions."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from debatecode.execution.results import TestReport

    with reporting_errors(), open_configured_store(config_file) as store:
        session = store.get_session(session_id)
        turns = store.turns(session.id)
        versions = store.versions(session.id)
    if as_json:
        print_json(
            {
                "session": session.model_dump(mode="json"),
                "turns": [t.model_dump(mode="json") for t in turns],
                "versions": [v.model_dump(mode="json") for v in versions],
            }
        )
        return
    console.print(f"[bold]session {session.id}[/] · {escape(session.task_title)} · [bold]{session.status}[/]")
    console.print(
        f"task {session.task_path} · model {session.model} · started {session.created_at:%Y-%m-%d %H:%M:%S} UTC",
        markup=False,
    )
    console.print(
        f"tokens {session.prompt_tokens}+{session.completion_tokens} · cost ${session.cost_usd:.4f} · {session.duration_s:.1f}s"
    )
    if session.error:
        console.print(f"[red]error:[/] {escape(session.error)}")
    for note in (t for t in turns if t.phase == "resume"):  # settings a --resume changed (protocol/resume.py)
        console.print(note.content, markup=False)
    outcome = session.outcome or {}
    if outcome.get("winner"):
        console.print(
            f"winner {outcome['winner']} ({outcome.get('method')}): {outcome.get('reason', '')}", markup=False
        )
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
            Text(t.agent_id),
            t.status,
            f"{t.prompt_tokens}+{t.completion_tokens}",
            str(t.response_time_ms),
            Text(tests),
        )
    print_table(console, turns_table)
    versions_table = Table(
        title=f"{len(versions)} code versions (branch {escape(session.branch)})",
        header_style="bold",
        title_justify="left",
    )
    for column in ("v", "agent", "tests", "quality"):
        versions_table.add_column(column)
    add_id_column(versions_table, "commit")
    for v in versions:
        versions_table.add_row(
            str(v.version_number),
            Text(v.agent_id),
            f"{v.tests_passed}/{v.tests_total}",
            f"{v.quality_score:.2f}" if v.quality_score is not None else "-",
            v.commit_sha or "",
        )
    print_table(console, versions_table)


def _history(
    session_id: str, config_file: Path | None
) -> tuple[SessionRecord, list[CodeVersionRecord], dict[str, TurnRecord]]:
    with open_configured_store(config_file) as store:
        session = store.get_session(session_id)
        versions = store.versions(session.id)
        turns = {t.id: t for t in store.turns(session.id)}
    return session, versions, turns


def _pick(versions: list[CodeVersionRecord], number: int, flag: str) -> CodeVersionRecord:
    for version in versions:
        if version.version_number == number:
            return version
    known = ", ".join(str(v.version_number) for v in versions)
    raise fail(f"{flag} {number}: the session has no such version (versions: {known})", 2)


def _describe(version: CodeVersionRecord, turns: dict[str, TurnRecord]) -> str:
    turn = turns.get(version.turn_id or "")
    where = f" {turn.phase} round {turn.round}" if turn else ""
    quality = f", quality {version.quality_score:.2f}" if version.quality_score is not None else ""
    return (
        f"v{version.version_number} {version.agent_id}{where} "
        f"({version.tests_passed}/{version.tests_total} tests{quality}) @ {(version.commit_sha or '?')[:10]}"
    )


def _version_path(repo: VersionRepository, version: CodeVersionRecord) -> str:
    if not version.commit_sha:
        raise fail(f"version {version.version_number} was never committed to git", 1)
    path = repo.find_file(version.commit_sha, version.code, prefer=(f"candidates/{version.agent_id}.py",))
    if path is None:
        raise fail(f"the code of version {version.version_number} is not in commit {version.commit_sha[:10]}", 1)
    return path


def _open_history(session: SessionRecord) -> VersionRepository:
    from debatecode.vcs.worktree import VersionRepository

    return VersionRepository(session.repo_path or session.out_dir, create=False)


@app.command("diff")
def diff_versions(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    from_version: int | None = typer.Option(
        None, "--from", help="Old version number (default: the previous version of the --to version's agent)."
    ),
    to_version: int | None = typer.Option(
        None, "--to", help="New version number (default: the session's final version, else its latest)."
    ),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    """Show the unified diff between two code versions of a session, read from its git history."""
    with reporting_errors():
        session, versions, turns = _history(session_id, config_file)
        if not versions:
            raise fail(f"session {session.id} has no code versions", 1)
        if to_version is not None:
            new = _pick(versions, to_version, "--to")
        else:
            new = next((v for v in versions if v.id == session.final_version_id), None) or max(
                versions, key=lambda v: v.version_number
            )
        if from_version is not None:
            old: CodeVersionRecord | None = _pick(versions, from_version, "--from")
        else:
            earlier = [v for v in versions if v.agent_id == new.agent_id and v.version_number < new.version_number]
            old = max(earlier, key=lambda v: v.version_number) if earlier else None
        with _open_history(session) as repo:
            new_path = _version_path(repo, new)
            old_ref = (old.commit_sha or "", _version_path(repo, old)) if old is not None else None
            diff = repo.diff_files(old_ref, (new.commit_sha or "", new_path))
    console.print(f"from {_describe(old, turns) if old else '(nothing: first version of ' + new.agent_id + ')'}")
    console.print(f"to   {_describe(new, turns)}")
    if not diff:
        console.print("no changes")
    elif console.is_terminal:
        from rich.syntax import Syntax

        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    else:
        typer.echo(diff, nl=False)


@app.command("checkout")
def checkout_version(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    dest: Path = typer.Argument(..., help="New or empty folder to write the files into."),
    version: int | None = typer.Option(
        None, "--version", help="Version number (default: the tip of the session's branch, with the final outputs)."
    ),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    """Write the files of a session's branch, as of one version, into a folder (plain files, no .git)."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise fail(f"{dest} is not an empty folder; choose a new or empty one", 2)
    with reporting_errors():
        session, versions, turns = _history(session_id, config_file)
        chosen = _pick(versions, version, "--version") if version is not None else None
        with _open_history(session) as repo:
            if chosen is not None:
                path: str | None = _version_path(repo, chosen)
                ref = chosen.commit_sha or ""
            else:
                path, ref = None, session.branch or f"debate/{session.id}"
            sha = repo.resolve(ref)
            written = repo.export(ref, dest)
    console.print(f"wrote {len(written)} files of {session.branch} at {sha[:10]} to {dest}")
    for name in written:
        console.print(f"  {name}")
    if chosen is not None and path is not None:
        console.print(f"{_describe(chosen, turns)} is {dest / path}")
