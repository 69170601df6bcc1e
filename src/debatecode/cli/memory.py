"""Inspect and manage episodic memory and accumulated lessons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from debatecode.cli.common import console, fail, reporting_errors
from debatecode.cli.output import add_id_column, json_option, print_json, print_table, write_output_file
from debatecode.errors import ExitCode

if TYPE_CHECKING:
    from debatecode.memory import EpisodicMemory, Lesson, WisdomStore

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

# Help text goes through rich markup, which would swallow "[memory]": every bracket in it is escaped.
_CONFIG_HELP = escape(
    "Config file (default: ./debatecode.toml if present); its store_url and [memory] pick the memory."
)
_SNIPPET = 80


def _memory(config_file: Path | None) -> EpisodicMemory:
    from debatecode.config import load_config
    from debatecode.memory import EpisodicMemory

    config = load_config(config_file)
    return EpisodicMemory(config.store_url, config.memory)


def _wisdom(config_file: Path | None) -> WisdomStore:
    from debatecode.config import load_config
    from debatecode.memory import WisdomStore

    config = load_config(config_file)
    return WisdomStore(config.store_url, config.memory)


def _snippet(text: str, width: int = _SNIPPET) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _cell(text: str, width: int = _SNIPPET) -> str:
    """Stored text shown in a table: shortened, and never read as rich markup."""
    return escape(_snippet(text, width))


@app.command("list")
def list_episodes(
    agent: str | None = typer.Option(None, "--agent", help="Only episodes of this agent."),
    session: str | None = typer.Option(None, "--session", help="Only episodes of this session (full id)."),
    limit: int = typer.Option(20, "--limit", min=1, help="Show at most this many episodes, newest first."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    as_json: bool = json_option("an array of episodes with every stored field"),
) -> None:
    """List stored episodes, newest first."""
    from rich.table import Table

    with reporting_errors():
        memory = _memory(config_file)
        try:
            episodes = memory.list(agent_id=agent, session_id=session, limit=limit)
            total = memory.count()
        finally:
            memory.close()
    if as_json:
        print_json([e.model_dump(mode="json") for e in episodes])
        return
    if not episodes:
        console.print("no episodes yet: they are stored when an agent reflects on failing tests")
        return
    table = Table(title=f"{len(episodes)} of {total} episodes", header_style="bold", title_justify="left")
    add_id_column(table)
    for column in ("created", "agent"):
        table.add_column(column)
    add_id_column(table, "session")
    for column in ("task", "attempt", "tests", "reflection"):
        table.add_column(column)
    for e in episodes:
        table.add_row(
            e.id,
            e.created_at.strftime("%Y-%m-%d %H:%M"),
            _cell(e.agent_id),
            escape(e.session_id),
            _cell(e.task_title),
            str(e.attempt),
            f"{e.test_results.get('passed', 0)}/{e.test_results.get('total', 0)}",
            _cell(e.reflection),
        )
    print_table(console, table)


@app.command("search")
def search_episodes(
    query: str = typer.Argument(..., help='What to look for, in words (e.g. "off by one").'),
    k: int | None = typer.Option(None, "--k", min=1, help=escape("Episodes to return (default: [memory] k).")),
    min_similarity: float = typer.Option(
        0.0,
        "--min-similarity",
        help=escape(
            "Least cosine similarity to show. Scores below [memory] similarity_threshold are marked: "
            "those episodes would not be retrieved into prompts."
        ),
    ),
    agent: str | None = typer.Option(None, "--agent", help="Only episodes of this agent."),
    session: str | None = typer.Option(None, "--session", help="Only episodes of this session (full id)."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    as_json: bool = json_option(
        "an array of the episodes found, best first, each with every stored field and its rank, score "
        "and below_threshold (true: not retrieved into prompts)"
    ),
) -> None:
    """Find the episodes most similar to QUERY, best first."""
    from rich.table import Table

    if not query.strip():
        raise fail(
            "the search query is empty",
            ExitCode.BAD_INPUT,
            hint='give words to look for, e.g. `debatecode memory search "off by one"`; '
            "`debatecode memory list` shows every episode",
        )
    with reporting_errors():
        memory = _memory(config_file)
        try:
            hits = memory.search(query, k=k, min_similarity=min_similarity, agent_id=agent, session_id=session)
            embedder = memory.embedder.name
            threshold = memory.settings.similarity_threshold
        finally:
            memory.close()
    if as_json:
        print_json(
            [
                {"rank": rank, "score": score, "below_threshold": score < threshold, **e.model_dump(mode="json")}
                for rank, (e, score) in enumerate(hits, start=1)
            ]
        )
        return
    if not hits:
        console.print(
            f"no episode has a similarity of at least {min_similarity:.2f} to {escape(repr(query))} (embedder {embedder})"
        )
        return
    table = Table(
        title=f"{len(hits)} episode{'' if len(hits) == 1 else 's'} for {escape(repr(query))} (embedder {embedder})",
        caption=f"· below \\[memory] similarity_threshold = {threshold:.2f}: not retrieved into prompts",
        header_style="bold",
        title_justify="left",
        caption_justify="left",
    )
    for column in ("rank", "score", "agent", "task", "reflection"):
        table.add_column(column)
    add_id_column(table)
    for rank, (e, score) in enumerate(hits, start=1):
        shown = f"{score:.3f}" + (" ·" if score < threshold else "")
        table.add_row(str(rank), shown, _cell(e.agent_id), _cell(e.task_title), _cell(e.reflection), e.id)
    print_table(console, table)


@app.command("show")
def show_episode(
    episode_id: str = typer.Argument(..., help="Episode id (a unique prefix is enough)."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    as_json: bool = json_option("the episode with every stored field"),
) -> None:
    """Show one episode in full: its task, tests, reflection and code."""
    with reporting_errors():
        memory = _memory(config_file)
        try:
            e = memory.get(episode_id)
        finally:
            memory.close()
    if as_json:
        print_json(e.model_dump(mode="json"))
        return
    results = e.test_results
    console.print(
        f"[bold]episode {e.id}[/] · {escape(e.task_title)} · attempt {e.attempt} · confidence {e.confidence:.2f}"
    )
    console.print(
        f"agent {escape(e.agent_id)} · session {escape(e.session_id)} · turn {e.turn_id or '-'} · {e.created_at:%Y-%m-%d %H:%M:%S} UTC"
    )
    console.print(f"task hash {e.task_hash}")
    console.print(f"[bold]tests[/] {results.get('passed', 0)}/{results.get('total', 0)} passed")
    for failure in results.get("failures", []):
        console.print(f"  ✗ {failure.get('name', '')}: {_snippet(str(failure.get('message', '')), 160)}", markup=False)
    for title, text in (
        ("failure analysis", e.failure_analysis),
        ("reflection", e.reflection),
        ("root cause", e.root_cause),
        ("improvement", e.improvement),
        ("task", e.task_text),
    ):
        console.print(f"[bold]{title}[/]")
        console.print(text or "-", markup=False)
    console.print("[bold]code[/]")
    if console.is_terminal:
        from rich.syntax import Syntax

        console.print(Syntax(e.code, "python", theme="ansi_dark", background_color="default"))
    else:
        typer.echo(e.code)


@app.command("export")
def export_memory(
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the JSON here (default: stdout)."),
    lessons: bool = typer.Option(False, "--lessons", help="Also export the accumulated lessons."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
) -> None:
    """Export every episode (and with --lessons every lesson) as JSON, vectors left out."""
    with reporting_errors():
        memory = _memory(config_file)
        try:
            data: dict[str, object] = {"episodes": memory.export()}
        finally:
            memory.close()
        if lessons:
            wisdom = _wisdom(config_file)
            try:
                data["lessons"] = wisdom.export()
            finally:
                wisdom.close()
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if output is None:
        typer.echo(text)
        return
    write_output_file(output, text + "\n")
    counts = ", ".join(f"{len(items)} {name}" for name, items in data.items() if isinstance(items, list))
    console.print(f"exported {counts} to {escape(str(output))}")


@app.command("clear")
def clear_memory(
    session: str | None = typer.Option(None, "--session", help="Only the episodes of this session (full id)."),
    lessons: bool = typer.Option(False, "--lessons", help="Also delete every accumulated lesson."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
) -> None:
    """Delete stored episodes (all, or one session's); asks first unless --yes."""
    if lessons and session is not None:
        raise fail("--lessons cannot be combined with --session: lessons belong to no session", 2)
    with reporting_errors():
        memory = _memory(config_file)
        try:
            what = f"the episodes of session {session}" if session else "every episode"
            if lessons:
                what += " and every lesson"
            if not yes and not typer.confirm(f"Delete {what} in {memory.url}?", default=False):
                raise fail("nothing deleted", 1)
            removed = memory.clear(session_id=session)
        finally:
            memory.close()
        message = f"deleted {removed} episodes"
        if lessons:
            wisdom = _wisdom(config_file)
            try:
                message += f" and {wisdom.clear()} lessons"
            finally:
                wisdom.close()
    console.print(message)


@app.command("lessons")
def list_lessons(
    query: str | None = typer.Argument(None, help="Rank lessons by similarity to this text (default: newest first)."),
    k: int | None = typer.Option(
        None, "--k", min=1, help=escape("Lessons to return for QUERY (default: [memory] wisdom_k).")
    ),
    min_similarity: float | None = typer.Option(
        None,
        "--min-similarity",
        help=escape("Least cosine similarity for QUERY (default: [memory] similarity_threshold)."),
    ),
    limit: int = typer.Option(50, "--limit", min=1, help="Without QUERY, show at most this many lessons."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    as_json: bool = json_option(
        "an array of lessons with every stored field (with QUERY, also each one's rank and score)"
    ),
) -> None:
    """List accumulated lessons, or those most similar to QUERY (looking does not count as a use)."""
    from rich.table import Table

    with reporting_errors():
        wisdom = _wisdom(config_file)
        try:
            ranked: list[tuple[Lesson, float | None]]
            if query is None:
                ranked = [(lesson, None) for lesson in wisdom.list(limit=limit)]
            else:
                ranked = list(wisdom.search(query, k=k, min_similarity=min_similarity))
        finally:
            wisdom.close()
    if as_json:
        print_json(
            [
                ({"rank": rank, "score": score} if score is not None else {}) | lesson.model_dump(mode="json")
                for rank, (lesson, score) in enumerate(ranked, start=1)
            ]
        )
        return
    if not ranked:
        console.print("no lessons yet" if query is None else f"no lesson is similar enough to {escape(repr(query))}")
        return
    table = Table(header_style="bold")
    columns = ("rank", "score", "lesson", "uses", "sources") if query else ("lesson", "uses", "sources")
    for column in columns:
        table.add_column(column)
    add_id_column(table)
    for rank, (lesson, score) in enumerate(ranked, start=1):
        cells = [escape(lesson.text), str(lesson.uses), str(len(lesson.source_episode_ids)), lesson.id]
        if score is not None:
            cells = [str(rank), f"{score:.3f}", *cells]
        table.add_row(*cells)
    print_table(console, table)
