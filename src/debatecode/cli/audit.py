"""Sessions: audit trails, replays and approval-gate decisions (``debatecode sessions ...``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

from debatecode.cli.common import (
    STORE_CONFIG_HELP,
    console,
    err_console,
    fail,
    open_configured_store,
    reporting_errors,
    sandbox_option,
    setup_logging,
)
from debatecode.cli.output import add_id_column, json_option, print_json, print_table, write_output_file

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.protocol.engine import DebateResult
    from debatecode.task import Task

__all__ = ["approve", "audit", "gates", "reject", "replay"]


def _read_trail(path: Path) -> dict[str, Any]:
    """An audit trail file, checked for the parts a replay reads.

    Raises:
        ConfigError: the file is missing, not JSON, or not an audit trail.
    """
    from pydantic import BaseModel, ConfigDict, ValidationError

    from debatecode.errors import ConfigError
    from debatecode.input_files import MAX_TRAIL_BYTES, InputFileError, read_input_file
    from debatecode.store.records import TurnRecord

    class _Part(BaseModel):
        model_config = ConfigDict(extra="allow")

    class _Session(_Part):
        id: str

    class _Task(_Part):
        path: str
        text: str | None = None

    class _Trail(_Part):
        session: _Session
        task: _Task
        config: dict[str, Any]
        turns: list[TurnRecord]
        outcome: dict[str, Any] | None = None

    remedy = "write one with `debatecode sessions audit ID -o FILE`"
    try:
        raw = read_input_file(path, max_bytes=MAX_TRAIL_BYTES, what="audit trail")
    except InputFileError as exc:
        raise ConfigError(f"{exc}; {remedy}") from exc
    try:
        trail = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ConfigError(f"audit trail {path} is not UTF-8 JSON ({exc}); {remedy}") from exc
    try:
        _Trail.model_validate(trail)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise ConfigError(f"{path} is not a debatecode audit trail ({where}: {first['msg']}); {remedy}") from exc
    return cast("dict[str, Any]", trail)


def audit(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the JSON here instead of stdout."),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    """Emit the full audit trail of a session as JSON: prompts, models, replies, tool calls, tests, votes, gates."""
    from debatecode.protocol.audit import build_audit

    with reporting_errors(), open_configured_store(config_file) as store:
        trail = build_audit(store, session_id)
    text = json.dumps(trail, indent=2, ensure_ascii=False)
    if output is None:
        typer.echo(text)
    else:
        write_output_file(output, text + "\n")
        err_console.print(f"audit trail of {trail['session']['id']} written to {output} ({len(trail['turns'])} turns)")


def replay(
    trail_file: Path = typer.Argument(..., help="An audit trail written by `debatecode sessions audit`."),
    out: Path = typer.Option(Path("replay-out"), "--out", "-o", help="Output folder of the replayed session."),
    sandbox: str | None = sandbox_option(),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    """Re-run a session from its audit trail, answering every model turn with its recorded reply.

    Exits 0 when the replay reproduces the original turns and outcome, 1 when it diverges.
    """
    import asyncio
    import tempfile
    import uuid

    from pydantic import ValidationError

    from debatecode.config import DebateConfig, load_config
    from debatecode.errors import ConfigError
    from debatecode.llm.scripted import register_scripted, unregister_scripted
    from debatecode.protocol.audit import ReplayHuman, replay_model
    from debatecode.safe_paths import is_name, path_under
    from debatecode.task import load_task, parse_task

    setup_logging()
    with reporting_errors():
        trail = _read_trail(trail_file)
        if trail["session"].get("kind") == "design":  # no task file: the question is in the trail's config
            from debatecode.cli.design_replay import replay_design

            raise typer.Exit(replay_design(trail, out, config_file))
        text = trail["task"].get("text")
        if text is None:
            raise ConfigError(f"the audit trail {trail_file} does not include the task text; replay needs it")
        name = f"replay-{uuid.uuid4().hex[:8]}"
        register_scripted(name, replay_model(trail))
        try:
            current = load_config(config_file)
            stored = {k: v for k, v in trail["config"].items() if k not in ("models", "agent_models")}
            try:
                config = DebateConfig.model_validate(
                    {**stored, "model": f"scripted/{name}", "out": str(out), "store_url": current.store_url}
                )
            except ValidationError as exc:
                raise ConfigError(
                    f"the config in audit trail {trail_file} is not valid for this debatecode: "
                    f"{exc.error_count()} problem(s), first: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
                ) from exc
            if sandbox:
                config = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"backend": sandbox})})
            with tempfile.TemporaryDirectory() as tmp:
                name = Path(trail["task"]["path"]).name  # from the trail: ``..`` or "" must not name the file
                task_path = path_under(Path(tmp), name if is_name(name) else "task.md", what="replayed task")
                task_path.write_text(text, encoding="utf-8")
                task = load_task(task_path) if task_path.is_file() else parse_task(text)
                human = ReplayHuman(trail) if trail.get("human_decisions") else None
                result, turns = asyncio.run(_replay(task, config, sandbox, human))
        finally:
            unregister_scripted(name)
    original = trail["outcome"] or {}
    replayed = result.session.outcome or {}
    # A resume's settings note (phase "resume") is no model turn: a replay runs with the final settings at once.
    recorded = len([t for t in trail["turns"] if t.get("phase") != "resume"])
    same = original.get("winner") == replayed.get("winner") and turns == recorded
    console.print(
        f"replayed session {trail['session']['id']} as {result.session.id}: {turns} turns (original {recorded}), "
        f"winner {replayed.get('winner')} (original {original.get('winner')}), status {result.status}"
    )
    console.print(
        "[green]the replay reproduces the session[/]" if same else "[red]the replay diverged from the original[/]"
    )
    raise typer.Exit(0 if same else 1)


async def _replay(task: Task, config: DebateConfig, sandbox: str | None, human: Any) -> tuple[DebateResult, int]:
    """Run the replayed session on one event loop; its result and how many turns it stored."""
    from debatecode._api import build_services, solve_async

    async with build_services(config, sandbox_backend=sandbox) as services:
        result = await solve_async(task, config, services=services, human=human)
        return result, len(services.store.turns(result.session.id))


def gates(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
    as_json: bool = json_option("an array of the session's gates with every stored field"),
) -> None:
    """List a session's approval gates and their decisions."""
    from rich.table import Table
    from rich.text import Text

    with reporting_errors(), open_configured_store(config_file) as store:
        session = store.get_session(session_id)
        found = store.gates(session.id)
    if as_json:
        print_json([gate.model_dump(mode="json") for gate in found])
        return
    if not found:
        console.print(
            f"session {session.id} has no approval gates (they are off unless [gates] enabled = true)", markup=False
        )
        return
    table = Table(header_style="bold")
    add_id_column(table, "gate")
    for column in ("phase", "round", "status", "reviewer", "reason", "summary"):
        table.add_column(column)
    for gate in found:
        table.add_row(
            gate.id,
            gate.phase,
            str(gate.round),
            gate.status,
            Text(gate.reviewer),
            Text(gate.reason),
            Text(gate.summary),
        )
    print_table(console, table)


def _decide(session_id: str, status: str, reason: str, reviewer: str, config_file: Path | None) -> None:
    with reporting_errors(), open_configured_store(config_file) as store:
        session = store.get_session(session_id)
        pending = [g for g in store.gates(session.id) if g.status == "pending"]
        if not pending:
            raise fail(f"session {session.id} has no pending gate", 2, "list them with `debatecode sessions gates ID`")
        gate = store.decide_gate(pending[-1].id, status, reviewer=reviewer, reason=reason)
    console.print(f"gate {gate.phase} of session {session.id}: {gate.status}")


def _default_reviewer() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def approve(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    reason: str = typer.Option("", "--reason", help="Why (stored with the decision)."),
    reviewer: str | None = typer.Option(None, "--reviewer", help="Who decides (default: your user name)."),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    """Approve the session's pending approval gate; the waiting debate continues."""
    _decide(session_id, "approved", reason, reviewer or _default_reviewer(), config_file)


def reject(
    session_id: str = typer.Argument(..., help="Session id (a unique prefix is enough)."),
    reason: str = typer.Option("", "--reason", help="Why (stored with the decision)."),
    reviewer: str | None = typer.Option(None, "--reviewer", help="Who decides (default: your user name)."),
    config_file: Path | None = typer.Option(None, "--config", help=STORE_CONFIG_HELP),
) -> None:
    """Reject the session's pending approval gate; the waiting debate stops (cancelled), its results kept."""
    _decide(session_id, "rejected", reason, reviewer or _default_reviewer(), config_file)
