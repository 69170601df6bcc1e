"""Parameter sweeps: the same task set, once per config value, with a table and a plot.

``--set reflexion.max_attempts=1,2,3`` runs every task three times, once per
value; several ``--set`` options form a grid. Each run is an ordinary,
stored session. The report gives, per value: the share of tasks whose final
code passes every test, the mean test pass rate, mean tokens, mean model
calls and mean wall time.

``jobs`` runs go at once (``--jobs N``; default ``_jobs.default_jobs``: with a
``local/...`` model the calls its copies generate at once, else ``min(cpu_count, 4)``); runs start in grid order and the
report lists them in that order whatever order they finish in. Each run is a
``WorkItem`` (``sweep_run``), so ``executor="ray"`` runs them as Ray tasks
(``_ray``), each building its own services; results come back here.

A sweep resumes: every finished run is appended to ``runs.jsonl`` at once, with a
fingerprint of its config and task. Running the same sweep into the same folder
again skips every run whose fingerprint is there and reports it as recorded, so an
interrupted sweep loses only the runs in flight, and a sweep extended with more
values runs only the new ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import statistics
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from debatecode.errors import ConfigError

if TYPE_CHECKING:
    from debatecode._api import Services
    from debatecode.bench._jobs import Executor, WorkItem
    from debatecode.config import DebateConfig
    from debatecode.sandbox.base import Sandbox
    from debatecode.store.repository import SessionStore
    from debatecode.task import Task

__all__ = ["RUNS_FILE", "SweepReport", "SweepRun", "parse_sets", "run_sweep", "sweep_run"]

RUNS_FILE = "runs.jsonl"
"""One line per finished run (its ``SweepRun`` and ``fingerprint``), appended as it finishes; read on resume."""


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
    executor: str = "local"
    """Where the runs ran: ``local`` (this event loop) or ``ray`` (Ray tasks)."""
    ray_address: str | None = None
    """With ``executor="ray"``: the cluster joined (None: ``RAY_ADDRESS``, else a Ray instance of this machine)."""
    recorded: int = 0
    """Runs an earlier sweep into the same folder had finished, taken from ``runs.jsonl`` instead of run again."""

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


@dataclass(frozen=True)
class _PlannedRun:
    """One run of the grid, before it runs: what ``sweep_run`` gets, and how ``runs.jsonl`` knows it."""

    values: dict[str, Any]
    config: DebateConfig
    """The combination's config, with the run's own output folder."""
    task: Task
    path: Path
    repeat: int
    """1-based."""

    @property
    def fingerprint(self) -> str:
        """The run's config and task: a recorded run with the same fingerprint is this run."""
        text = self.config.model_dump_json() + self.task.text_hash + str(self.repeat)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        return f"{_slug(self.values)} · {self.path.stem} · run {self.repeat}"


def _position(run: SweepRun | _PlannedRun) -> tuple[str, str, int]:
    """What places a run in the grid: its values, task file name and repeat."""
    task = run.task if isinstance(run, SweepRun) else run.path.name
    return json.dumps(run.values, sort_keys=True, default=str), task, run.repeat


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
    executor: str = "local",
    ray_address: str | None = None,
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

    With ``executor="ray"`` each run is a Ray task whose worker builds its own model
    client, sandbox and store from the run's config (``debatecode.bench._ray``);
    ``jobs`` then defaults to the cluster's CPUs, and ``ray_address`` picks the
    cluster (default ``RAY_ADDRESS``, else a Ray instance of this machine; a cluster
    needs a shared PostgreSQL ``store_url``).

    Runs already in ``out / runs.jsonl`` with the same config and task (an earlier,
    interrupted or smaller sweep into ``out``) are not run again; the report counts
    them (``report.recorded``).

    Raises:
        ConfigError: an unknown key or invalid value in the grid, ``jobs`` below 1, an unknown
            executor, or a Ray setup that cannot work (checked before anything runs).
        TaskError: a task file is missing or malformed (checked before anything runs).
        UnknownModelError, SandboxUnavailable, StoreError: a combination cannot run here
            (checked before anything runs).
        ClusterUnreachable: ``ray_address`` does not answer.
    """
    from debatecode._api import run_sync
    from debatecode.bench._jobs import RAY, check_executor, resolve_jobs
    from debatecode.config import load_config
    from debatecode.task import load_task

    check_executor(executor, ray_address)
    parsed = [load_task(path) for path in tasks]
    combos = _combinations(grid)
    base: dict[str, Any] = {"model": model, "sandbox.backend": sandbox, "checkpoints.enabled": False}
    configs = [load_config(config_file, {**base, **combo}) for combo in combos]  # validates every value up front
    if executor == RAY:
        workers = resolve_jobs(jobs, configs[0]) if jobs is not None else None  # Ray's default: the cluster's CPUs
    else:
        workers = min(resolve_jobs(jobs, config) for config in configs)
    out.mkdir(parents=True, exist_ok=True)
    report = SweepReport(
        grid=grid,
        command=_command(tasks, grid, model, sandbox, out, repeat, executor, ray_address),
        executor=executor,
        ray_address=ray_address,
    )
    planned = [
        _PlannedRun(
            values=combo,
            config=config.model_copy(update={"out": out / _slug(combo) / f"{path.stem}-{index + 1}"}),
            task=task,
            path=path,
            repeat=index + 1,
        )
        for combo, config in zip(combos, configs, strict=True)
        for task, path in zip(parsed, tasks, strict=True)
        for index in range(repeat)
    ]
    recorded = _recorded_runs(out / RUNS_FILE)
    report.runs = [recorded[run.fingerprint] for run in planned if run.fingerprint in recorded]
    report.recorded = len(report.runs)
    pending = [run for run in planned if run.fingerprint not in recorded]
    try:
        run_sync(lambda: _run_all(report, pending, configs, out, console, workers))
    finally:
        order = {_position(run): index for index, run in enumerate(planned)}
        report.runs.sort(key=lambda run: order[_position(run)])
    _write(report, out)
    return report


def _recorded_runs(path: Path) -> dict[str, SweepRun]:
    """The runs of ``runs.jsonl`` by fingerprint (the first line of a fingerprint wins)."""
    runs: dict[str, SweepRun] = {}
    if not path.is_file():
        return runs
    names = {f.name for f in fields(SweepRun)}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            runs.setdefault(str(record["fingerprint"]), SweepRun(**{k: v for k, v in record.items() if k in names}))
    return runs


def _append(path: Path, record: Mapping[str, Any]) -> None:
    # On the event loop's thread only, between awaits: concurrent runs append whole lines, one after the other.
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


async def sweep_run(
    services: Services,
    config: DebateConfig,
    *,
    task: Mapping[str, Any],
    task_name: str,
    values: Mapping[str, Any],
    repeat: int,
) -> dict[str, Any]:
    """One run of a sweep (``task`` as ``Task.model_dump(mode="json")``), as a ``SweepRun`` dict.

    A ``WorkItem``'s work: it runs on this event loop or in a Ray worker, and writes no results file.
    """
    from debatecode._api import solve_async
    from debatecode.task import Task

    started = time.monotonic()
    result = await solve_async(Task.model_validate(dict(task)), config, services=services)
    turns = services.store.turns(result.session.id)
    run = SweepRun(
        values=dict(values),
        task=task_name,
        repeat=repeat,
        session_id=result.session.id,
        status=result.status,
        passed=result.passed,
        total=result.total,
        all_passed=result.all_passed,
        tokens=result.session.prompt_tokens + result.session.completion_tokens,
        calls=sum(1 for t in turns if t.provider not in ("tool", "human", "")),
        seconds=round(time.monotonic() - started, 2),
    )
    return asdict(run)


async def _run_all(
    report: SweepReport,
    runs: Sequence[_PlannedRun],
    configs: Sequence[DebateConfig],
    out: Path,
    console: Console | None,
    jobs: int | None = 1,
) -> None:
    """Run ``runs``, ``jobs`` at once, where ``report.executor`` says; record each in ``runs.jsonl`` and ``report``.

    ``jobs`` ``None`` is the Ray executor's default (the cluster's CPUs).
    """
    from debatecode.bench._jobs import WorkItem

    if not runs:
        return
    async with _executor(report, configs, jobs) as executor:
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

            def record(item: WorkItem, result: dict[str, Any]) -> list[WorkItem]:
                planned: _PlannedRun = item.context
                _append(out / RUNS_FILE, {**result, "fingerprint": planned.fingerprint})
                report.runs.append(SweepRun(**result))
                progress.advance(bar)
                return []

            def started(item: WorkItem) -> None:
                progress.update(bar, description=item.label)

            items = [
                WorkItem(
                    sweep_run,
                    run.config,
                    {
                        "task": run.task.model_dump(mode="json"),
                        "task_name": run.path.name,
                        "values": run.values,
                        "repeat": run.repeat,
                    },
                    label=run.label,
                    context=run,
                )
                for run in runs
            ]
            await executor.run(items, record, on_start=started)


@contextlib.asynccontextmanager
async def _executor(report: SweepReport, configs: Sequence[DebateConfig], jobs: int | None) -> AsyncIterator[Executor]:
    """Ray's executor, or this loop's with the sweep's shared sandboxes and stores (closed after)."""
    from debatecode.bench._jobs import RAY, LocalExecutor

    if report.executor == RAY:
        from debatecode.bench._ray import RayExecutor

        async with RayExecutor.connect(configs, jobs=jobs, address=report.ray_address) as ray:
            yield ray
        return
    async with _SharedServices(configs) as shared:
        yield LocalExecutor(shared.for_run, jobs if jobs is not None else 1)


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
    tasks: Sequence[Path],
    grid: dict[str, list[Any]],
    model: str | None,
    sandbox: str | None,
    out: Path,
    repeat: int,
    executor: str = "local",
    ray_address: str | None = None,
) -> str:
    parts = ["debatecode sweep", *(str(t) for t in tasks)]
    parts += [f"--set {k}={','.join(str(v) for v in values)}" for k, values in grid.items()]
    if model:
        parts.append(f"--model {model}")
    if sandbox:
        parts.append(f"--sandbox {sandbox}")
    if repeat > 1:
        parts.append(f"--repeat {repeat}")
    if executor != "local":
        parts.append(f"--executor {executor}")
    if ray_address:
        parts.append(f"--ray-address {ray_address}")
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
        f"{len(report.runs)} runs{_recorded_note(report)}. Pass rate: share of runs whose final code passes every test.\n\n"
        f"{report.table_markdown()}\n\n![pass rate, tokens and time per value](sweep.png)\n",
        encoding="utf-8",
    )


def _recorded_note(report: SweepReport) -> str:
    if not report.recorded:
        return ""
    return f" ({report.recorded} recorded by an earlier run of this sweep, in {RUNS_FILE})"


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
