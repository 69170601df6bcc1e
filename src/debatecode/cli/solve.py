"""Run a debate on a task file: agents propose, test, revise and converge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from debatecode.cli.common import console, err_console, fail, reporting_errors, setup_logging

__all__ = ["solve"]

EXIT_OK, EXIT_TESTS_FAIL = 0, 1


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
    sandbox: str | None = typer.Option(
        None, "--sandbox", help="docker, local or auto (default: docker when an engine answers)."
    ),
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
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Debate a solution to TASK. Exit 0 when the final code passes every visible test, 1 when it does not,
    2 on bad input, 3 when the run failed (model, sandbox, budget)."""
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
        pairs = [item.split("=", 1) for item in models.split(",") if item.strip()]
        if any(len(pair) != 2 for pair in pairs):
            raise ConfigError("--models takes role=model pairs separated by commas, e.g. red=openai/gpt-4o-mini")
        found["models"] = {role.strip(): model.strip() for role, model in pairs}
    if agent_models is not None:
        found["agent_models"] = [m.strip() for m in agent_models.split(",") if m.strip()]
    if no_checkpoints:
        found["checkpoints.enabled"] = False
    return found


def _solve(
    task: Path, overrides: dict[str, Any], sandbox: str | None, config_file: Path | None, resume: str | None
) -> int:
    import asyncio
    import sys

    from debatecode._api import _stored_config, build_services, solve_async
    from debatecode.cli.render import LiveRenderer, print_summary
    from debatecode.config import load_config
    from debatecode.protocol.events import EventBus
    from debatecode.task import load_task

    if config_file is not None and not config_file.is_file():
        raise fail(f"config file {config_file} does not exist", 2)
    config = load_config(config_file, overrides)
    if resume is not None:
        config = _stored_config(config, resume)
    parsed = load_task(task)
    with console.status("checking model, sandbox and store…", spinner="dots"):
        services = build_services(config, sandbox_backend=sandbox)
    bus = EventBus()
    renderer = LiveRenderer(console, parsed, config)
    bus.subscribe(renderer)
    human = None
    if config.checkpoints.enabled and sys.stdin.isatty() and console.is_terminal:
        from debatecode.cli.human import TerminalHuman

        human = TerminalHuman(console, renderer.paused)
    with renderer:
        result = asyncio.run(solve_async(parsed, config, bus=bus, services=services, resume=resume, human=human))
    asyncio.run(services.aclose())
    print_summary(console, result)
    if result.status in ("failed", "budget_exceeded"):
        err_console.print(f"[bold red]{result.status}:[/] {result.error}", soft_wrap=True)
        err_console.print(
            f"[yellow]hint:[/] session {result.session.id} and its turns are saved; "
            f"fix the cause, then run `debatecode solve {task} --resume {result.session.id}`.",
            soft_wrap=True,
        )
        return 3
    return EXIT_OK if result.all_passed else EXIT_TESTS_FAIL
