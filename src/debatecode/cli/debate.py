"""``debatecode debate "QUESTION"``: a design debate among perspectives, ending in a decision record (ADR)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from debatecode.cli.common import console, err_console, fail, reporting_errors, setup_logging
from debatecode.errors import ExitCode

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.protocol.design.engine import DesignResult
    from debatecode.protocol.design.question import DesignQuestion

__all__ = ["debate"]


def debate(
    question: str | None = typer.Argument(
        None, help="The question in quotes, or a question.md file (front matter: title, perspectives, mode, context)."
    ),
    context: list[Path] = typer.Option(
        [], "--context", "-c", help="A file (code, docs, a diff) to debate over; repeatable."
    ),
    perspectives: str | None = typer.Option(
        None,
        "--perspectives",
        "-p",
        help="Comma-separated perspective keys, or how many the moderator picks (2-4); default: 2-4 by the "
        "question. Test, Security, Observability and Operations always join (see docs/design-debates.md).",
    ),
    council: bool = typer.Option(
        False,
        "--council",
        help="Debate with the council (default: Architect, Designer, Engineer, Researcher; design.council_members).",
    ),
    min_rounds: int | None = typer.Option(
        None, "--min-rounds", help="Response rounds before the debate may end (default 2)."
    ),
    max_rounds: int | None = typer.Option(
        None, "--max-rounds", help="Response rounds at most (default 5, at most 10)."
    ),
    mode: str | None = typer.Option(
        None, "--mode", help="deliberative (an ADR, default) or patchlist (BLOCKING/HIGH/MEDIUM-LOW items)."
    ),
    repo: Path | None = typer.Option(
        None, "--repo", help="Repository whose docs/decisions/ gets the ADR (default: the current folder)."
    ),
    no_checkpoints: bool = typer.Option(
        False, "--no-checkpoints", help="Never stop for Continue / Guide / End between rounds."
    ),
    resume: str | None = typer.Option(None, "--resume", help="Continue the stored design debate with this id."),
    list_: bool = typer.Option(False, "--list", help="List recent design debates and exit."),
    as_json: bool = typer.Option(
        False, "--json", help="With --list: print the debates as one JSON document (ids, status, record, escalation)."
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Model for every participant (default: the embedded model)."
    ),
    models: str | None = typer.Option(
        None,
        "--models",
        help="Model tiering by stage, e.g. round1=openai/gpt-4o,round2=local/qwen2.5-coder-0.5b,synthesis=...",
    ),
    token_budget: int | None = typer.Option(
        None, "--token-budget", help="Stop after this many tokens (the debate can be resumed)."
    ),
    round_timeout: float | None = typer.Option(
        None, "--round-timeout", help="Seconds one round may take (default 600)."
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds the whole debate may take (default 3600)."),
    then_task: Path | None = typer.Option(
        None, "--then-task", help="Also write a task.md skeleton from the decision, for `debatecode solve`."
    ),
    config_file: Path | None = typer.Option(
        None, "--config", help="Config file (default: ./debatecode.toml if present)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Debate a design QUESTION and write an architecture decision record. Exit 0 when the record is written,
    2 on bad input, 3 when the run failed, 5 when the debate escalated and nobody chose (the record says so),
    6 when a checkpoint went unanswered and the debate paused (resume it with --resume)."""
    setup_logging(verbose)
    overrides: dict[str, Any] = {
        "model": model,
        "token_budget": token_budget,
        "design.min_rounds": min_rounds,
        "design.max_rounds": max_rounds,
        "design.mode": mode,
        "design.round_timeout_s": round_timeout,
        "design.timeout_s": timeout,
    }
    with reporting_errors():
        from debatecode.cli.common import parse_models

        overrides.update(_perspective_overrides(perspectives, council))
        if resume is not None:
            _check_resume_flags(question, context, perspectives, council, mode)
        if models is not None:
            overrides["design.models"] = parse_models(models)
        if no_checkpoints:
            overrides["checkpoints.enabled"] = False
        if list_:
            raise typer.Exit(_list(config_file, overrides, as_json=as_json))
        if question is None and resume is None:
            raise fail(
                "give a question (or a question.md file), or --resume ID, or --list",
                ExitCode.BAD_INPUT,
                'debatecode debate "Should we store sessions in SQLite or PostgreSQL?"',
            )
        if then_task is not None:
            _check_then_task(then_task)
        code = _debate(question, context, overrides, config_file, resume, (repo or Path.cwd()), then_task)
    raise typer.Exit(code)


def _perspective_overrides(perspectives: str | None, council: bool) -> dict[str, Any]:
    """``--perspectives a,b`` (names) or ``--perspectives N`` (a count), and ``--council``, as settings.

    Checked here, before any session exists: a count outside 2-4 or an empty list is bad input (exit 2).
    """
    found: dict[str, Any] = {"design.council": True} if council else {}
    if perspectives is None:
        return found
    names = [p.strip() for p in perspectives.split(",") if p.strip()]
    if not names:
        raise fail(
            f"--perspectives {perspectives!r} names no perspective",
            ExitCode.BAD_INPUT,
            "give keys (--perspectives simplicity,cost) or a count from 2 to 4 (--perspectives 3)",
        )
    if len(names) == 1 and names[0].lstrip("+-").isdigit():
        count = int(names[0])
        if not 2 <= count <= 4:
            raise fail(
                f"--perspectives {count}: the moderator picks 2 to 4 perspectives (Test, Security, Observability "
                "and Operations, the Contrarian and the Moonshot join on top)",
                ExitCode.BAD_INPUT,
                "pass --perspectives 2, 3 or 4, or name them: --perspectives simplicity,cost",
            )
        found["design.perspective_count"] = count
    else:
        found["design.perspectives"] = names
    return found


def _check_resume_flags(
    question: str | None, context: list[Path], perspectives: str | None, council: bool, mode: str | None
) -> None:
    """Refuse, on ``--resume``, the flags that would change what was already debated (they are journaled)."""
    fixed = [
        name
        for name, given in (
            ("a question", question is not None),
            ("--context", bool(context)),
            ("--perspectives", perspectives is not None),
            ("--council", council),
            ("--mode", mode is not None),
        )
        if given
    ]
    if fixed:
        raise fail(
            f"--resume continues the stored debate with its own question, context, perspectives and mode; "
            f"drop {', '.join(fixed)}",
            ExitCode.BAD_INPUT,
            "a resume may change limits, budgets, models and checkpoints (--token-budget, --round-timeout, "
            "--timeout, --max-rounds, --model, --models, --no-checkpoints); start a new debate for the rest",
        )


def _check_then_task(path: Path) -> None:
    """Refuse a ``--then-task`` path the skeleton could not be written to, before the debate runs."""
    if path.exists() or path.is_symlink():
        raise fail(
            f"--then-task {path} already exists; the task skeleton is never written over a file",
            ExitCode.BAD_INPUT,
            "pass a new file name",
        )
    if not path.parent.is_dir():
        raise fail(
            f"--then-task {path}: the folder {path.parent} does not exist",
            ExitCode.BAD_INPUT,
            f"create it first (mkdir -p {path.parent}) or pass a path in an existing folder",
        )


def _config(config_file: Path | None, overrides: dict[str, Any]) -> DebateConfig:
    from debatecode.config import load_config

    if config_file is not None and not config_file.exists():  # a directory or device: load_config says what it is
        raise fail(f"config file {config_file} does not exist", ExitCode.BAD_INPUT)
    return load_config(config_file, overrides)


def _list(config_file: Path | None, overrides: dict[str, Any], *, as_json: bool = False) -> int:
    from rich.table import Table
    from rich.text import Text

    from debatecode.cli.output import add_id_column, print_json, print_table
    from debatecode.store import open_store

    config = _config(config_file, overrides)
    store = open_store(config.store_url)
    try:
        sessions = store.list_sessions(limit=20, kind="design")
    finally:
        store.close()
    if as_json:
        print_json([_listed(s) for s in sessions])
        return ExitCode.OK
    if not sessions:
        console.print('No design debates yet. Start one: debatecode debate "Should we ...?"')
        return ExitCode.OK
    table = Table(header_style="bold")
    add_id_column(table)  # off a terminal the table keeps its natural width: whole ids for scripts
    for column in ("started", "status", "rounds", "confidence", "question", "record"):
        table.add_column(column)
    for s in sessions:
        adr = s.outcome.get("adr") or ""
        table.add_row(
            s.id,
            s.created_at.strftime("%Y-%m-%d %H:%M"),
            s.status,
            str(s.total_rounds),
            str(s.outcome.get("confidence") or ""),
            Text(s.task_title),
            Text(Path(adr).name if adr else ""),
        )
    print_table(console, table)
    return ExitCode.OK


def _listed(session: Any) -> dict[str, Any]:
    """One design debate as ``debate --list --json`` prints it."""
    outcome = session.outcome or {}
    return {
        "id": session.id,
        "started": session.created_at.isoformat(),
        "status": session.status,
        "rounds": session.total_rounds,
        "question": session.task_title,
        "record_status": outcome.get("record_status"),
        "confidence": outcome.get("confidence"),
        "recommendation": outcome.get("recommendation"),
        "adr": outcome.get("adr"),
        "escalation": outcome.get("escalation"),
        "error": session.error,
    }


def _debate(
    source: str | None,
    context: list[Path],
    overrides: dict[str, Any],
    config_file: Path | None,
    resume: str | None,
    repo: Path,
    then_task: Path | None,
) -> int:
    import asyncio

    from debatecode._design_api import stored_debate
    from debatecode.protocol.design.question import load_question

    config = _config(config_file, overrides)
    if resume is not None:
        config, question = stored_debate(config, resume)
    else:
        assert source is not None
        question = load_question(source, context=context)
    if not repo.is_dir():
        raise fail(f"--repo {repo} is not a folder", ExitCode.BAD_INPUT)
    result = asyncio.run(_run(question, config, resume, repo))
    return _report(result, then_task, resume)


async def _run(question: DesignQuestion, config: DebateConfig, resume: str | None, repo: Path) -> DesignResult:
    import sys

    from debatecode._design_api import debate_async
    from debatecode.cli.debate_render import DebateRenderer
    from debatecode.protocol.events import EventBus

    bus = EventBus()
    renderer = DebateRenderer(console)
    bus.subscribe(renderer)
    human = None
    if config.checkpoints.enabled and sys.stdin.isatty() and console.is_terminal:
        from debatecode.cli.human import TerminalHuman

        human = TerminalHuman(console, renderer.paused)
    with renderer:
        return await debate_async(question, config, repo=repo, resume=resume, bus=bus, human=human)


def _report(result: DesignResult, then_task: Path | None, resume: str | None) -> int:
    session_id = result.session.id
    hint = f"`debatecode debate --resume {session_id}`"
    if result.status == "paused":
        err_console.print(f"[yellow]paused:[/] {escape(str(result.error))}", soft_wrap=True)
        return ExitCode.PAUSED
    if result.status != "completed" or result.record is None:
        err_console.print(f"[bold red]{result.status}:[/] {escape(str(result.error))}", soft_wrap=True)
        err_console.print(
            f"[yellow]hint:[/] debate {session_id} and its turns are saved in {escape(str(result.folder))}; "
            f"fix the cause, then run {hint}.",
            soft_wrap=True,
        )
        return ExitCode.RUN_FAILED
    record = result.record
    console.print(
        f"[bold]Decision record:[/] {escape(str(result.adr_path))}\n"
        f"[bold]Recommendation[/] ({record.recommendation.confidence}): {escape(record.recommendation.text)}\n"
        f"Session files: {escape(str(result.folder))}  ·  debate id {session_id}",
        soft_wrap=True,
    )
    if then_task is not None:
        from debatecode.protocol.design.then_task import task_skeleton, write_task_skeleton

        path = write_task_skeleton(then_task, task_skeleton(record))
        console.print(
            f"[bold]Task skeleton:[/] {escape(str(path))} (edit its tests, then `debatecode solve {escape(str(path))}`)"
        )
    if result.escalated:
        err_console.print(
            f"[yellow]escalated:[/] {escape(record.escalation.reason if record.escalation else record.stop_reason)}; "
            "nobody chose an option (non-interactive run). The record lists the positions and options; decide, then "
            "edit its status, or run the debate again in a terminal.",
            soft_wrap=True,
        )
        return ExitCode.ESCALATED
    return ExitCode.OK
