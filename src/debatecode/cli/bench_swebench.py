"""``debatecode bench swebench``: grade SWE-bench predictions offline, or solve the instances and grade that."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from debatecode.cli.common import console, reporting_errors, setup_logging

if TYPE_CHECKING:
    from debatecode.bench._ray import RayExecutor
    from debatecode.bench.swebench import HarnessEvent, Prediction, RunSummary, SWEBenchHarness, SWEBenchInstance
    from debatecode.bench.swebench.predictions import ResumePlan
    from debatecode.config import DebateConfig

__all__ = ["swebench"]

SOLVE_STRATEGIES = ("single", "debate")
_STATUS_STYLE = {"resolved": "green", "unresolved": "yellow", "patch_failed": "red", "error": "bold red"}


def swebench(
    dataset: str = typer.Option(
        ...,
        "--dataset",
        "-d",
        help="SWE-bench instances: a JSON or JSONL file (instance_id, repo, base_commit, ...), or a Hugging Face "
        "dataset name such as princeton-nlp/SWE-bench_Verified (needs the network, or datasets' cache).",
    ),
    split: str = typer.Option("test", "--split", help="The split of a Hugging Face dataset."),
    repos_dir: Path | None = typer.Option(
        None,
        "--repos-dir",
        help="Git sources of the repositories (owner__name/, owner__name.git/ or owner__name.bundle); "
        "default: repos/ next to the dataset file (./repos for a Hugging Face dataset).",
    ),
    predictions: str | None = typer.Option(
        None,
        "--predictions",
        "-p",
        help="gold (reference patches), empty (no patch), or a predictions file (instance_id, model_name_or_path, "
        "model_patch). Omitted: solve the instances first (solve mode).",
    ),
    instances: str | None = typer.Option(None, "--instances", help="Comma-separated instance ids (default: all)."),
    out: Path = typer.Option(Path("bench-out/swebench"), "--out", "-o", help="Output folder (reports, summary)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Solve mode: the model of every agent."),
    strategy: str | None = typer.Option(None, "--strategy", help="Solve mode: single or debate (default debate)."),
    budget: int | None = typer.Option(None, "--budget", min=1, help="Solve mode: token budget per instance."),
    config_file: Path | None = typer.Option(None, "--config", help="Solve mode: config file for the base settings."),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        "--max-workers",
        min=1,
        help="Instances graded (and solved) at once; --max-workers is swebench's name for it. Default: min(CPUs, 4); "
        "when solving with a local/ model, the calls its copies generate at once (2 on 2 cores). With --executor ray: Ray tasks "
        "in flight (default: the cluster's CPUs; its nodes with a local/ model).",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="Where instances are graded (and solved): local (this process) or ray (one Ray task each, whose files "
        "come back to this process; extra \\[ray]; see docs/scale-out.md).",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: the cluster to join (auto, HOST:6379, ray://HOST:10001); default RAY_ADDRESS, "
        "else a Ray instance of this machine. Every node needs Docker and the --repos-dir sources at the same path.",
    ),
    run_id: str = typer.Option(
        "debatecode",
        "--run-id",
        help="Names swebench's log folder (<out>/logs/run_evaluation/RUN_ID/) and run reports (<out>/<model>.RUN_ID.json).",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Grade SWE-bench predictions in locally built, hardened images (no network); or solve, then grade."""
    from debatecode.bench._jobs import RAY, check_executor
    from debatecode.bench.swebench import default_repos_dir, load_predictions, select_instances
    from debatecode.bench.swebench.harness import default_grading_jobs
    from debatecode.bench.swebench.hub import is_hub_name, load_dataset_source
    from debatecode.bench.swebench.swebench_logs import check_run_id
    from debatecode.errors import ConfigError

    setup_logging(verbose)
    with reporting_errors():
        check_run_id(run_id)
        check_executor(executor, ray_address)
        on_ray = executor == RAY
        ids = [item.strip() for item in instances.split(",") if item.strip()] if instances else None
        dataset_items = load_dataset_source(dataset, split=split)
        chosen = select_instances(dataset_items, ids)
        if repos_dir is not None:
            repos = repos_dir
        else:
            repos = Path("repos").resolve() if is_hub_name(dataset) else default_repos_dir(Path(dataset))
        if predictions is not None:
            solve_flags = [
                flag
                for flag, value in (("--model", model), ("--strategy", strategy), ("--budget", budget))
                if value is not None
            ] + (["--config"] if config_file is not None else [])
            if solve_flags:
                raise ConfigError(
                    f"{', '.join(solve_flags)} only apply to solve mode; drop them, or drop --predictions to solve"
                )
            graded = load_predictions(predictions, dataset_items, chosen)
            if on_ray:
                summary = asyncio.run(_grade_on_ray(chosen, graded, repos, out, predictions, jobs, ray_address, run_id))
            else:
                workers = default_grading_jobs(jobs)
                summary = asyncio.run(
                    _grade(chosen, graded, repos, out, source=predictions, jobs=workers, run_id=run_id)
                )
        else:
            chosen_strategy = strategy or "debate"
            if chosen_strategy not in SOLVE_STRATEGIES:
                raise ConfigError(f"unknown --strategy {chosen_strategy!r}; known: {', '.join(SOLVE_STRATEGIES)}")
            from debatecode.bench._jobs import resolve_jobs
            from debatecode.config import load_config

            config = load_config(config_file, {"model": model, "token_budget": budget})
            from debatecode.bench.swebench.solve import model_name
            from debatecode.safe_paths import check_model_name

            check_model_name(model_name(chosen_strategy, config), "the predictions' model_name_or_path")
            if on_ray:
                summary = asyncio.run(
                    _solve_and_grade_on_ray(chosen, repos, out, config, chosen_strategy, jobs, ray_address, run_id)
                )
            else:
                workers = resolve_jobs(jobs, config)
                summary = asyncio.run(_solve_and_grade(chosen, repos, out, config, chosen_strategy, workers, run_id))
    print_summary(summary, out, console, run_id=run_id)


class _Display:
    """A progress bar over predictions (or instances, while solving), with the latest step of those in flight."""

    def __init__(self, progress: Progress, label: str, total: int) -> None:
        self.progress = progress
        self.task: TaskID = progress.add_task(label, total=total, step="")
        self.running = 0

    def __call__(self, event: HarnessEvent) -> None:
        where = f"{event.instance_id} ({event.model})" if event.model else event.instance_id
        if event.kind == "start":
            self.running += 1
            self.progress.update(self.task, step=self._step(where))
        elif event.kind == "step":
            self.progress.update(self.task, step=self._step(f"{where} · {event.message}"))
        else:
            resumed = event.message == "resumed"
            if not resumed:
                self.running = max(0, self.running - 1)
                if not self.running:
                    self.progress.update(self.task, step="")
            if event.report is not None:
                status = event.report.status
                style = _STATUS_STYLE.get(status, "")
                note = " (resumed)" if resumed else ""
                self.progress.console.print(f"  [{style}]{status:<12}[/] {where}{note}")
            elif event.message:
                self.progress.console.print(f"  {event.message:<12} {where}")
            self.progress.advance(self.task)

    def _step(self, text: str) -> str:
        return f"[{self.running} running] {text}" if self.running > 1 else text


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[step]}"),
        console=console,
        transient=False,
    )


async def _grade(
    chosen: Sequence[SWEBenchInstance],
    predictions: Sequence[Prediction],
    repos: Path,
    out: Path,
    *,
    source: str,
    jobs: int,
    run_id: str,
    harness: SWEBenchHarness | None = None,
    ray: RayExecutor | None = None,
) -> RunSummary:
    """Grade ``predictions`` with a live display, here (``jobs`` at once) or as ``ray``'s tasks (``ray.jobs`` at once)."""
    from debatecode.bench.swebench import SWEBenchHarness
    from debatecode.bench.swebench.remote import RayGrading

    own = harness is None
    harness = harness or SWEBenchHarness(chosen, repos_dir=repos, out=out, run_id=run_id)
    grade_with = RayGrading(ray, harness) if ray is not None else None
    jobs = ray.jobs if ray is not None else jobs
    where = " on Ray" if ray is not None else ""
    try:
        with _progress() as progress:
            harness.listener = _Display(
                progress, f"grading ({jobs} at once{where})" if jobs > 1 else f"grading{where}", len(predictions)
            )
            return await harness.grade(predictions, source=source, jobs=jobs, grade_with=grade_with)
    finally:
        harness.listener = None
        if own:
            await harness.aclose()


async def _grade_on_ray(
    chosen: Sequence[SWEBenchInstance],
    predictions: Sequence[Prediction],
    repos: Path,
    out: Path,
    source: str,
    jobs: int | None,
    address: str | None,
    run_id: str,
) -> RunSummary:
    """``_grade`` with each prediction a Ray task (no store, no model: nothing to check but Ray and the address)."""
    from debatecode.bench.swebench.remote import connect_ray

    ray = connect_ray(None, jobs=jobs, address=address)
    try:
        return await _grade(chosen, predictions, repos, out, source=source, jobs=ray.jobs, run_id=run_id, ray=ray)
    finally:
        await ray.aclose()


async def _solve_and_grade_on_ray(
    chosen: Sequence[SWEBenchInstance],
    repos: Path,
    out: Path,
    config: DebateConfig,
    strategy: str,
    jobs: int | None,
    address: str | None,
    run_id: str,
) -> RunSummary:
    """``_solve_and_grade`` with each instance solved, then graded, as a Ray task."""
    from debatecode.bench.swebench.remote import connect_ray

    ray = connect_ray(config, jobs=jobs, address=address)
    try:
        return await _solve_and_grade(chosen, repos, out, config, strategy, ray.jobs, run_id, ray=ray)
    finally:
        await ray.aclose()


async def _solve_and_grade(
    chosen: Sequence[SWEBenchInstance],
    repos: Path,
    out: Path,
    config: DebateConfig,
    strategy: str,
    jobs: int,
    run_id: str,
    ray: RayExecutor | None = None,
) -> RunSummary:
    from debatecode.bench.swebench import SWEBenchHarness
    from debatecode.bench.swebench.predictions import PREDICTIONS_FILE
    from debatecode.bench.swebench.remote import RaySolving
    from debatecode.errors import ConfigError

    try:
        from debatecode.bench.swebench.solve import generate_predictions, model_name
    except ImportError as exc:
        raise ConfigError(
            "solve mode is not available in this installation (debatecode.bench.swebench.solve is missing); "
            "pass --predictions gold, empty or a predictions file to grade instead"
        ) from exc
    harness = SWEBenchHarness(chosen, repos_dir=repos, out=out, run_id=run_id)
    try:
        harness.check_inputs([instance.instance_id for instance in chosen])
        with _progress() as progress:
            display = _Display(progress, f"solving ({strategy})", len(chosen))
            path = out / PREDICTIONS_FILE
            name = model_name(strategy, config)
            solved = await generate_predictions(
                harness,
                chosen,
                config=config,
                strategy=strategy,
                out=out,
                listener=display,
                jobs=jobs,
                on_resume=lambda plan: _print_resume(plan, path, name, progress.console),
                solve_with=RaySolving(ray, harness, config, strategy) if ray is not None else None,
            )
        console.print(f"{len(solved)} predictions written to {path}", soft_wrap=True)
        return await _grade(
            chosen,
            solved,
            repos,
            out,
            source=f"solve:{strategy}:{config.model}",
            jobs=jobs,
            run_id=run_id,
            harness=harness,
            ray=ray,
        )
    finally:
        await harness.aclose()


def _print_resume(plan: ResumePlan, path: Path, model: str, target: Console) -> None:
    """What solving takes from an earlier run's ``path``: reused, replaced and retried predictions.

    Says nothing when ``path`` held no prediction of this run's instances.
    """
    if not (plan.reused or plan.replaced or plan.retried):
        return
    target.print(f"resumed {len(plan.reused)} of {plan.total} predictions from {path}", soft_wrap=True)
    if plan.replaced:
        by_model = Counter(entry.prediction.model_name_or_path for entry in plan.replaced)
        made = ", ".join(
            f"{count} by {name}" + (", other settings" if name == model else "") for name, count in by_model.items()
        )
        target.print(
            f"[yellow]replaced {len(plan.replaced)} earlier prediction(s) made with another model, strategy or "
            f"settings ({escape(made)}); solving their instances again[/]",
            soft_wrap=True,
        )
    if plan.retried:
        target.print(f"solving {len(plan.retried)} instance(s) again whose earlier solve failed (status error)")


def summary_table(summary: RunSummary) -> Table:
    """One row per graded prediction: status, how the patch applied, tests passed, restored files, time.

    The model column appears only when the predictions come from several models.
    """
    several = len(summary.by_model) > 1
    table = Table(title=f"SWE-bench · {summary.source}", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("instance", no_wrap=True, overflow="ellipsis")
    if several:
        table.add_column("model", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("patch", no_wrap=True)
    table.add_column("tests", justify="right", no_wrap=True)
    table.add_column("restored", justify="right", no_wrap=True)
    table.add_column("s", justify="right", no_wrap=True)
    for row in summary.rows:
        style = _STATUS_STYLE.get(row.status, "")
        cells = [row.instance_id, *([row.model] if several else [])]
        cells += [
            f"[{style}]{row.status}[/]",
            row.patch,
            row.tests_passed,
            str(row.protected_restored),
            f"{row.duration_s:.1f}",
        ]
        table.add_row(*cells)
    return table


def print_summary(summary: RunSummary, out: Path, target: Console, *, run_id: str = "debatecode") -> None:
    """The summary table, a resolved count per model, and where the reports are (ours and swebench's)."""
    target.print(summary_table(summary))
    for name, tally in summary.by_model.items():
        extra = ", ".join(
            f"{count} {label}"
            for label, count in (
                ("unresolved", tally.unresolved),
                ("patch failed", tally.patch_failed),
                ("error", tally.error),
            )
            if count
        )
        target.print(
            f"[bold]{name}[/]: {tally.resolved}/{tally.total} resolved ({tally.rate:.0%})"
            + (f"; {extra}" if extra else "")
        )
    target.print(
        f"{summary.resolved}/{summary.total} resolved in {summary.duration_s:.1f}s "
        f"({summary.images_built} image layer(s) built)"
    )
    if summary.resumed:
        target.print(f"{summary.resumed} of them graded by an earlier run into {out} (results.jsonl)")
    target.print(f"reports: {out}/<model>/<instance>/report.json", soft_wrap=True)
    target.print(f"summary: {out / 'summary.md'}", soft_wrap=True)
    target.print(
        f"swebench format: {out}/logs/run_evaluation/{run_id}/<model>/<instance>/report.json, "
        f"{out}/<model>.{run_id}.json",
        soft_wrap=True,
    )
    sys.stdout.flush()
