"""Parameter sweeps: run the same task set once per config value, then tabulate and plot."""

from __future__ import annotations

from pathlib import Path

import typer

from debatecode.cli.common import console, reporting_errors, sandbox_option, setup_logging
from debatecode.cli.output import plot_location

__all__ = ["sweep"]


def sweep(
    tasks: list[Path] = typer.Argument(..., help="Task files to run for every value.", show_default=False),
    sets: list[str] = typer.Option(
        ...,
        "--set",
        help="KEY=V1,V2,... : any config key (dotted for sections) and the values to try. Repeat for a grid.",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="Model for every run (else the config's)."),
    sandbox: str | None = sandbox_option(),
    out: Path = typer.Option(
        Path("sweep-out"),
        "--out",
        "-o",
        help="Folder for sweep.md, sweep.png, sweep.jsonl, runs.jsonl (read on a re-run) and each run's outputs.",
    ),
    repeat: int = typer.Option(
        1, "--repeat", min=1, help="Runs per task and value (different sessions; useful with sampling)."
    ),
    config_file: Path | None = typer.Option(
        None, "--config", help="Config file (default: ./debatecode.toml if present)."
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        min=1,
        help="Runs at once (default: min(CPUs, 4); with a local/ model, the calls its copies generate at once: 2 on 2 cores). "
        "With --executor ray: Ray tasks in flight (default: the cluster's CPUs; its nodes with a local/ model).",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="Where runs go: local (this process) or ray (Ray tasks; extra \\[ray]; see docs/scale-out.md).",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: the cluster to join (auto, HOST:6379, ray://HOST:10001); default RAY_ADDRESS, "
        "else a Ray instance of this machine. A cluster needs a PostgreSQL store_url.",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Run TASKS once per value of each --set key (a grid when several), and report pass rate, tokens and time per value.

    Re-running the same sweep into the same --out runs only the runs not in its runs.jsonl yet.

    Example: debatecode sweep examples/tasks/*.md --set reflexion.max_attempts=1,2,3 --set strategy=reflexion
    """
    from debatecode.bench.sweep import parse_sets, run_sweep

    setup_logging(verbose)
    with reporting_errors():
        grid = parse_sets(sets)
        report = run_sweep(
            tasks,
            grid,
            model=model,
            sandbox=sandbox,
            out=out,
            repeat=repeat,
            config_file=config_file,
            console=console,
            jobs=jobs,
            executor=executor,
            ray_address=ray_address,
        )
    console.print(report.table_markdown())
    console.print(
        f"table: {report.markdown_path}\nplot: {plot_location(report.plot_path)}\nruns: {report.jsonl_path}",
        markup=False,
    )
