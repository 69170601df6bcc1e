"""Parameter sweeps: the same task set, once per config value, with a table and a plot.

``--set reflexion.max_attempts=1,2,3`` runs every task three times, once per
value; several ``--set`` options form a grid. Each run is an ordinary,
stored session. The report gives, per value: the share of tasks whose final
code passes every test, the mean test pass rate, mean tokens, mean model
calls and mean wall time.

``jobs`` runs go at once (``--jobs N``; default ``_jobs.default_jobs``: 1 with a
``local/...`` model, else ``min(cpu_count, 4)``); runs start in grid order and the
report lists them in that order whatever order they finish in.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from debatecode.errors import ConfigError

if TYPE_CHECKING:
    from debatecode._api import Services
    from debatecode.config import DebateConfig
    from debatecode.sandbox.base import Sandbox
    from debatecode.store.repository import SessionStore
    from debatecode.task import Task

__all__ = ["SweepReport", "SweepRun", "parse_sets", "run_sweep"]


def parse_sets(sets: Sequence[str]) -> dict[str, list[Any]]:
    """``["a.b=1,2", "c=x"]`` → ``{"a.b": [1, 2], "c": ["x"]}`` (values read as YAML scalars).

    Raises:
        ConfigError: a malformed ``--set``.
    """
    grid: dict[str, list[Any]] = {}
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or not raw.strip():
            raise ConfigError(f"--set {item!r}: write KEY=V1,V2,... e.g. --set reflexion.max_attempts=1,2,3")
        values = [yaml.safe_load(value.strip()) for value in raw.split(",") if value.strip()]
        if key in grid:
            raise ConfigError(f"--set {key} is given twice; list all its values in one --set")
        grid[key] = values
    return grid


@dataclass
class SweepRun:
    """One task under one combination of values."""

    values: dict[str, Any]
    task: str
    repeat: int
    session_id: str
    status: str
    passed: int
    total: int
    all_passed: bool
    tokens: int
    calls: int
    seconds: float


@dataclass
class SweepReport:
    """Every run of a sweep and where its table and plot are."""

    grid: dict[str, list[Any]]
    runs: list[SweepRun] = field(default_factory=list)
    command: str = ""
    markdown_path: Path = Path()
    plot_path: Path = Path()
    jsonl_path: Path = Path()

    def rows(self) -> list[dict[str, Any]]:
        """Per combination: runs, pass rate, mean test pass rate, tokens, calls, seconds."""
        rows = []
        for combo in _combinations(self.grid):
            runs = [r for r in self.runs if r.values == combo]
            if not runs:
                continue
            rows.append(
                {
                    "values": combo,
                    "runs": len(runs),
                    "pass_rate": sum(r.all_passed for r in runs) / len(runs),
                    "test_pass_rate": statistics.fmean(r.passed / r.total if r.total else 0.0 for r in runs),
                    "tokens": statistics.fmean(r.tokens for r in runs),
                    "calls": statistics.fmean(r.calls for r in runs),
                    "seconds": statistics.fmean(r.seconds for r in runs),
                }
            )
        return rows

    def table_markdown(self) -> str:
        keys = list(self.grid)
        head = "| " + " | ".join(keys) + " | runs | pass rate | test pass rate | tokens | calls | time (s) |"
        lines = [head, "|" + "---|" * (len(keys) + 6)]
        for row in self.rows():
            cells = [str(row["values"][k]) for k in keys]
            lines.append(
                "| " + " | ".join(cells) + f" | {row['runs']} | {row['pass_rate']:.2f} | {row['test_pass_rate']:.2f} | "
                f"{row['tokens']:.0f} | {row['calls']:.1f} | {row['seconds']:.1f} |"
            )
        return "\n".join(lines)


def _combinations(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]


def _slug(values: dict[str, Any]) -> str:
    return "_".join(f"{k.split('.')[-1]}-{v}" for k, v in values.items()).replace("/", "-") or "default"


def run_sweep(
    tasks: Sequence[Path],
    grid: dict[str, list[Any]],
    *,
    model: str | None = None,
    sandbox: str | None = None,
    out: Path = Path("sweep-out"),
    repeat: int = 1,
    config_file: Path | None = None,
    console: Console | None = None,
    jobs: int | None = None,
) -> SweepReport:
    """Run every task once per combination of ``grid`` values (``repeat`` times) and write the report.

    All runs happen on one event loop (``debatecode.run_sync``: in a notebook too)
    and share one sandbox (one Docker warm pool) and one store, opened before the
    first run and closed after the last. A combination that changes how the
    sandbox is built (``sandbox.backend``, ``sandbox.pool_size``...) or the
    ``store_url`` gets a sandbox or store of its own, also kept for the whole
    sweep. Each run gets a model client of its own.

    Up to ``jobs`` runs go at once; the default is 1 when any combination uses a
    ``local/...`` model (one loaded model; its calls would only queue), else
    ``min(cpu_count, 4)``. ``report.runs`` is in grid order either way. Lessons kept
    across runs (``memory.wisdom``) make a run depend on which runs finished first.

    Raises:
        ConfigError: an unknown key or invalid value in the grid, or ``jobs`` below 1
            (checked before anything runs).
        TaskError: a task file is missing or malformed (checked before anything runs).
        UnknownModelError, SandboxUnavailable, StoreError: a combination cannot run here
            (checked before anything runs).
    """
    from debatecode._api import run_sync
    from debatecode.bench._jobs import resolve_jobs
    from debatecode.config import load_config
    from debatecode.task import load_task

    parsed = [load_task(path) for path in tasks]
    combos = _combinations(grid)
    base: dict[str, Any] = {"model": model, "sandbox.backend": sandbox, "checkpoints.enabled": False}
    configs = [load_config(config_file, {**base, **combo}) for combo in combos]  # validates every value up front
    workers = min(resolve_jobs(jobs, config) for config in configs)
    out.mkdir(parents=True, exist_ok=True)
    report = SweepReport(grid=grid, command=_command(tasks, grid, model, sandbox, out, repeat))
    runs = [
        (combo, config, task, path, index)
        for combo, config in zip(combos, configs, strict=True)
        for task, path in zip(parsed, tasks, strict=True)
        for index in range(repeat)
    ]
    run_sync(lambda: _run_all(report, runs, configs, out, console, workers))
    _write(report, out)
    return report


async def _run_all(
    report: SweepReport,
    runs: Sequence[tuple[dict[str, Any], DebateConfig, Task, Path, int]],
    configs: Sequence[DebateConfig],
    out: Path,
    console: Console | None,
    jobs: int = 1,
) -> None:
    """Run ``runs`` (values, config, task, its path, repeat index), ``jobs`` at once, adding each to ``report`` in order."""
    from debatecode._api import solve_async
    from debatecode.bench._jobs import run_bounded

    async with _SharedServices(configs) as shared:
        with Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=False,
        ) as progress:
            bar = progress.add_task("", total=len(runs))
            finished: dict[int, SweepRun] = {}

            async def one(position: int) -> None:
                combo, config, task, path, index = runs[position]
                progress.update(bar, description=f"{_slug(combo)} · {path.stem} · run {index + 1}")
                run_config = config.model_copy(update={"out": out / _slug(combo) / f"{path.stem}-{index + 1}"})
                started = time.monotonic()
                async with shared.for_run(run_config) as services:
                    result = await solve_async(task, run_config, services=services)
                turns = services.store.turns(result.session.id)
                finished[position] = SweepRun(
                    values=combo,
                    task=path.name,
                    repeat=index + 1,
                    session_id=result.session.id,
                    status=result.status,
                    passed=result.passed,
                    total=result.total,
                    all_passed=result.all_passed,
                    tokens=result.session.prompt_tokens + result.session.completion_tokens,
                    calls=sum(1 for t in turns if t.provider not in ("tool", "human", "")),
                    seconds=round(time.monotonic() - started, 2),
                )
                progress.advance(bar)

            try:
                await run_bounded(range(len(runs)), jobs, one)
            finally:
                report.runs.extend(finished[position] for position in sorted(finished))


class _SharedServices:
    """The sandboxes and stores of a sweep, each opened once and kept for every run that can share it.

    Runs share a sandbox when their ``[sandbox]`` sections differ at most in
    per-job limits (``timeout_s``, ``memory_mb``...: each run passes its own
    with every job), and a store when their ``store_url`` is the same.
    """

    def __init__(self, configs: Sequence[DebateConfig]) -> None:
        self._configs = configs
        self._sandboxes: dict[str, Sandbox] = {}
        self._stores: dict[str, SessionStore] = {}
        self._opened = contextlib.AsyncExitStack()

    def _sandbox_key(self, config: DebateConfig) -> str:
        from debatecode.sandbox.base import Limits

        return config.sandbox.model_dump_json(exclude=set(Limits.model_fields))

    @contextlib.asynccontextmanager
    async def for_run(self, config: DebateConfig) -> AsyncIterator[Services]:
        """The services of one run of ``config``: the shared sandbox and store, and a model client of its own.

        The model client is closed when the run ends; the sandbox and store stay open for the next run.
        """
        from debatecode._api import Services
        from debatecode.llm.client import LLMClient

        async with LLMClient(config.llm, token_budget=config.token_budget) as llm:
            yield Services(
                llm=llm, sandbox=self._sandboxes[self._sandbox_key(config)], store=self._stores[config.store_url]
            )

    async def __aenter__(self) -> _SharedServices:
        """Check every model, then open every sandbox and store the sweep needs (all closed again on a failure)."""
        from debatecode.llm.client import validate_model
        from debatecode.sandbox import create_sandbox
        from debatecode.store import open_store

        async with contextlib.AsyncExitStack() as opening:
            for config in self._configs:
                validate_model(config.model)
                key = self._sandbox_key(config)
                if key not in self._sandboxes:
                    self._sandboxes[key] = await opening.enter_async_context(create_sandbox(config.sandbox))
                if config.store_url not in self._stores:
                    self._stores[config.store_url] = opening.enter_context(open_store(config.store_url))
            self._opened = opening.pop_all()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Close every sandbox (their warm containers) and every store."""
        await self._opened.aclose()


def _command(
    tasks: Sequence[Path], grid: dict[str, list[Any]], model: str | None, sandbox: str | None, out: Path, repeat: int
) -> str:
    parts = ["debatecode sweep", *(str(t) for t in tasks)]
    parts += [f"--set {k}={','.join(str(v) for v in values)}" for k, values in grid.items()]
    if model:
        parts.append(f"--model {model}")
    if sandbox:
        parts.append(f"--sandbox {sandbox}")
    if repeat > 1:
        parts.append(f"--repeat {repeat}")
    parts.append(f"--out {out}")
    return " ".join(parts)


def _write(report: SweepReport, out: Path) -> None:
    report.jsonl_path = out / "sweep.jsonl"
    report.jsonl_path.write_text("".join(json.dumps(asdict(run)) + "\n" for run in report.runs), encoding="utf-8")
    report.plot_path = out / "sweep.png"
    _plot(report, report.plot_path)
    report.markdown_path = out / "sweep.md"
    report.markdown_path.write_text(
        "# Sweep\n\n"
        f"Command: `{report.command}`\n\n"
        f"{len(report.runs)} runs. Pass rate: share of runs whose final code passes every test.\n\n"
        f"{report.table_markdown()}\n\n![pass rate, tokens and time per value](sweep.png)\n",
        encoding="utf-8",
    )


def _plot(report: SweepReport, path: Path) -> None:
    from debatecode.bench._plots import load_pyplot

    plt = load_pyplot(path)
    if plt is None:
        return
    rows = report.rows()
    labels = [", ".join(f"{k.split('.')[-1]}={v}" for k, v in row["values"].items()) for row in rows]
    figure, axes = plt.subplots(1, 3, figsize=(max(9, 1.6 * len(rows) * 3), 3.6))
    panels = (
        ("pass_rate", "pass rate", "tab:green"),
        ("tokens", "mean tokens", "tab:blue"),
        ("seconds", "mean time (s)", "tab:orange"),
    )
    for axis, (key, title, colour) in zip(axes, panels, strict=True):
        values = [row[key] for row in rows]
        axis.bar(range(len(rows)), values, color=colour)
        axis.set_xticks(range(len(rows)), labels, rotation=20, ha="right", fontsize=8)
        axis.set_title(title)
        if key == "pass_rate":
            axis.set_ylim(0, 1)
    figure.suptitle("debatecode sweep: " + ", ".join(report.grid))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
