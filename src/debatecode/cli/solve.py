"""Run a debate on a task file: agents propose, test, revise and converge."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from debatecode.cli.common import (
    console,
    err_console,
    fail,
    parse_models,
    reporting_errors,
    sandbox_option,
    setup_logging,
)
from debatecode.errors import ExitCode

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.protocol.engine import DebateResult
    from debatecode.store.repository import SessionStore
    from debatecode.task import Task

__all__ = ["solve"]


def solve(
    task: Path = typer.Argument(
        ..., help="The task file (YAML front matter + markdown); see docs/task-format.md.", show_default=False
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="Model string: litellm model, local/gemma-3-270m, scripted/<name> or scripted:<file.yaml>.",
    ),
    agents: int | None = typer.Option(None, "--agents", "-n", help="Number of proposer agents (default 3)."),
    rounds: int | None = typer.Option(
        None, "--rounds", "-r", help="Debate rounds (critique, then review) at most (default 1)."
    ),
    sandbox: str | None = sandbox_option(),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output folder for solution.py, report.md and the version repository."
    ),
    token_budget: int | None = typer.Option(
        None, "--token-budget", help="Stop the session after this many tokens, keeping partial results."
    ),
    config_file: Path | None = typer.Option(
        None, "--config", help="Config file (default: ./debatecode.toml if present)."
    ),
    resume: str | None = typer.Option(
        None, "--resume", help="Continue the stored session with this id from its last completed turn."
    ),
    phases: str | None = typer.Option(
        None, "--phases", help="Comma-separated phases to run (the others are off), e.g. proposal,critique,convergence."
    ),
    strategy: str | None = typer.Option(
        None, "--strategy", help="debate (default) or reflexion (one agent reflecting on failures)."
    ),
    topology: str | None = typer.Option(None, "--topology", help="mesh, star, chain or tree."),
    planning: str | None = typer.Option(None, "--planning", help="auto, cpde or dpde."),
    models: str | None = typer.Option(
        None, "--models", help="Per-role models, e.g. red=openai/gpt-4o-mini,judge=local/gemma-3-270m."
    ),
    agent_models: str | None = typer.Option(
        None, "--agent-models", help="Heterogeneous debate: comma-separated models the authors take in turn."
    ),
    no_checkpoints: bool = typer.Option(
        False, "--no-checkpoints", help="Never stop for Continue / Guide / End between rounds."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", help="Seconds the whole session may take, checkpoints excluded (default: no limit)."
    ),
    round_timeout: float | None = typer.Option(
        None, "--round-timeout", help="Seconds one debate round may take (default: no limit)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Debate a solution to TASK. Exit 0 when the final code passes every visible test, 1 when it does not,
    2 on bad input, 3 when the run failed (model, sandbox, budget), 4 when rejected at an approval gate."""
    setup_logging(verbose)
    overrides: dict[str, Any] = {
        "model": model,
        "agents": agents,
        "rounds": rounds,
        "sandbox.backend": sandbox,
        "out": out,
        "token_budget": token_budget,
        "topology.type": topology,
        "strategy": strategy,
        "topology.planning": planning,
        "timeout_s": timeout,
        "round_timeout_s": round_timeout,
    }
    with reporting_errors():
        overrides.update(_list_options(phases, models, agent_models, no_checkpoints))
        code = _solve(task, overrides, sandbox, config_file, resume)
    raise typer.Exit(code)


def _list_options(
    phases: str | None, models: str | None, agent_models: str | None, no_checkpoints: bool
) -> dict[str, Any]:
    from debatecode.errors import ConfigError
    from debatecode.protocol.settings import PhaseSettings

    found: dict[str, Any] = {}
    if phases is not None:
        wanted = {p.strip().replace("-", "_") for p in phases.split(",") if p.strip()}
        known = set(PhaseSettings.model_fields)
        unknown = sorted(wanted - known)
        if unknown:
            raise ConfigError(
                f"unknown phase(s) in --phases: {', '.join(unknown)}; known: {', '.join(PhaseSettings.model_fields)}"
            )
        found.update({f"phases.{name}": name in wanted for name in known})
    if models is not None:
        found["models"] = parse_models(models)
    if agent_models is not None:
        found["agent_models"] = [m.strip() for m in agent_models.split(",") if m.strip()]
    if no_checkpoints:
        found["checkpoints.enabled"] = False
    return found


def _solve(
    task: Path, overrides: dict[str, Any], sandbox: str | None, config_file: Path | None, resume: str | None
) -> int:
    import asyncio

    from debatecode._api import _stored_config
    from debatecode.config import load_config
    from debatecode.task import load_task

    if config_file is not None and not config_file.exists():  # a directory or device: load_config says what it is
        raise fail(f"config file {config_file} does not exist", ExitCode.BAD_INPUT)
    config = load_config(config_file, overrides)
    if resume is not None:
        config = _stored_config(config, resume)
    parsed = load_task(task, max_bytes=config.task_max_bytes)
    return asyncio.run(_run(task, parsed, config, sandbox, resume))


async def _run(task: Path, parsed: Task, config: DebateConfig, sandbox: str | None, resume: str | None) -> int:
    """The whole session on one event loop: open the services, debate, report, close them."""
    import sys

    from debatecode._api import build_services, solve_async
    from debatecode.cli.render import LiveRenderer, print_summary
    from debatecode.protocol.events import EventBus

    with console.status("checking model, sandbox and store…", spinner="dots"):
        services = build_services(config, sandbox_backend=sandbox)
    async with services:
        bus = EventBus()
        renderer = LiveRenderer(console, parsed, config)
        bus.subscribe(renderer)
        human = None
        if config.checkpoints.enabled and sys.stdin.isatty() and console.is_terminal:
            from debatecode.cli.human import TerminalHuman

            human = TerminalHuman(console, renderer.paused)
        with renderer:
            result = await solve_async(parsed, config, services=services, bus=bus, human=human, resume=resume)
        print_summary(console, result)
        return _exit_code(result, task, config, services.store)


def _exit_code(result: DebateResult, task: Path, config: DebateConfig, store: SessionStore) -> int:
    from debatecode.protocol.gates import rejecting_gate

    resume_hint = f"`debatecode solve {task} --resume {result.session.id}`"
    if result.status in ("failed", "budget_exceeded"):
        err_console.print(f"[bold red]{result.status}:[/] {escape(str(result.error))}", soft_wrap=True)
        err_console.print(
            f"[yellow]hint:[/] session {result.session.id} and its turns are saved; "
            f"fix the cause, then run {resume_hint}.",
            soft_wrap=True,
        )
        return ExitCode.RUN_FAILED
    if result.status == "cancelled":
        gate = rejecting_gate(store, result.session.id, config.gates)
        if gate is not None:
            session_id = result.session.id
            if gate.status == "timed_out":
                what = f"the {gate.phase} gate timed out ({gate.reason}), which counts as a rejection"
                hint = 'raise `gates.timeout_s`, or set `gates.on_timeout = "approve"`, then run solve again'
            else:
                by = f" by {gate.reviewer}" if gate.reviewer else ""
                what = f"rejected at the {gate.phase} gate{by}" + (f": {gate.reason}" if gate.reason else "")
                hint = "run solve again for a new session (a --resume would replay the rejection)"
            err_console.print(
                f"[bold red]rejected:[/] {escape(what)}. Session {session_id} stopped as cancelled; "
                f"its results so far are in {escape(str(config.out))}.",
                soft_wrap=True,
            )
            err_console.print(f"[yellow]hint:[/] {escape(hint)}.", soft_wrap=True)
            return ExitCode.GATE_REJECTED
    return ExitCode.OK if result.all_passed else ExitCode.TESTS_FAILED
