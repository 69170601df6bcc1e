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
        None, "--rounds", "-r", help="Critique-and-revise rounds for failing candidates (default 1)."
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
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Debate a solution to TASK. Exit 0 when the final code passes every visible test, 1 when it does not,
    2 on bad input, 3 when the run failed (model, sandbox, budget)."""
    setup_logging(verbose)
    with reporting_errors():
        code = _solve(task, model, agents, rounds, sandbox, out, token_budget, config_file, resume)
    raise typer.Exit(code)


def _solve(
    task: Path,
    model: str | None,
    agents: int | None,
    rounds: int | None,
    sandbox: str | None,
    out: Path | None,
    token_budget: int | None,
    config_file: Path | None,
    resume: str | None,
) -> int:
    import asyncio

    from debatecode._api import _stored_config, build_services, solve_async
    from debatecode.cli.render import LiveRenderer, print_summary
    from debatecode.config import load_config
    from debatecode.protocol.events import EventBus
    from debatecode.task import load_task

    overrides: dict[str, Any] = {
        "model": model,
        "agents": agents,
        "rounds": rounds,
        "sandbox.backend": sandbox,
        "out": out,
        "token_budget": token_budget,
    }
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
    with renderer:
        result = asyncio.run(solve_async(parsed, config, bus=bus, services=services, resume=resume))
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
