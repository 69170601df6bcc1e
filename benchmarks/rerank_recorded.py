"""Re-rank recorded vote samples with today's visible tests and the shared ranking; no model is run.

The recorded vote drew 10 samples per HumanEval problem (``vote-samples.jsonl``). This
script asks what each way of *choosing* among the first N of them would have scored:

- ``recorded``: the recorded run's choice (its visible tests, then the most frequent code);
- ``examples``: today's visible tests (every example form ``debatecode.examples`` reads), earliest on ties;
- ``ranking``: the shared ranking (``execution/ranking.py``): today's visible tests, then
  agreement on generated inputs (``execution/inputs.py``) within the tier, then the earliest;
- ``ranking, old parser``: the shared ranking over the tests the old bridge made (``>>>`` doctests
  with an output line only, as the recorded run counted them): the parser's part of the ablation;
- ``behaviour only``: agreement on generated inputs alone, without the visible tests;
- ``oracle``: some sample passes (the best any choice among them can do).

Choices never see hidden tests. Hidden verdicts are re-checked in the sandbox with today's
checker and only *report* how good each choice was. On HumanEval the hidden tests often repeat
the docstring's examples, so a visible-example filter is unusually strong there.

    .venv/bin/python benchmarks/rerank_recorded.py \
        --samples benchmarks/results/humaneval-qwen/vote-samples.jsonl \
        --out benchmarks/results/rerank-recorded
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from debatecode.bench._stats import mcnemar_exact_p
from debatecode.bench.humaneval import check_samples, load_problems, problem_task
from debatecode.bench.humaneval.vote import read_vote_samples, vote_at
from debatecode.execution.cleaning import clean_solution
from debatecode.execution.inputs import generated_inputs
from debatecode.execution.probes import Prober
from debatecode.execution.ranking import Evidence, behaviour_of, rank_candidates
from debatecode.execution.tester import CandidateTester
from debatecode.sandbox import create_sandbox
from debatecode.sandbox.base import Limits, Sandbox
from debatecode.sandbox.settings import SandboxSettings

CHOICES = ("recorded", "examples", "ranking", "ranking, old parser", "behaviour only", "oracle")


async def score_problem(
    sandbox: Sandbox, problem: Mapping[str, Any], samples: Sequence[Mapping[str, Any]], inputs: int
) -> list[dict[str, Any]]:
    """Each sample with today's visible result, its behaviour on generated inputs and its hidden verdict."""
    task = problem_task(dict(problem))
    runner = CandidateTester(task, sandbox, SandboxSettings(timeout_s=3))
    probes = Prober(sandbox, Limits(timeout_s=60), per_call_s=1.0)
    calls = generated_inputs(task, limit=inputs, seed=0)
    codes = [clean_solution(str(problem["prompt"]) + str(s["completion"]), task.entry_point).code for s in samples]
    verdicts = await check_samples(
        sandbox,
        {problem["task_id"]: dict(problem)},
        [{"task_id": problem["task_id"], "completion": s["completion"]} for s in samples],
    )
    rows = []
    for sample, code, verdict in zip(samples, codes, verdicts, strict=True):
        report = await runner.run(code) if sample.get("code_key") else None
        behaviour = behaviour_of(await probes.run(code, calls)) if sample.get("code_key") else ()
        rows.append(
            {
                "task_id": problem["task_id"],
                "index": int(sample["index"]),
                "code_key": sample.get("code_key", ""),
                "recorded_visible": list(sample["visible"]),
                "visible": [report.passed_in("visible"), report.total_in("visible")] if report else [0, 0],
                "behaviour": list(behaviour),
                "inputs": len(calls),
                "passed": verdict.passed and bool(sample.get("code_key")),
            }
        )
    return rows


def choose(rows: Sequence[Mapping[str, Any]], n: int, how: str) -> bool:
    """Whether ``how``'s choice among the first ``n`` samples passes the hidden tests."""
    used = [r for r in rows[:n] if r["code_key"]]
    if not used:
        return False
    if how == "oracle":
        return any(r["passed"] for r in used)
    if how == "recorded":
        # The recorded run's rule: its own visible counts, then the most frequent code (no behaviour).
        recorded = [{**{k: v for k, v in r.items() if k != "behaviour"}, "visible": r["recorded_visible"],
                     "completion": "", "tokens": 0, "calls": 0, "seconds": 0, "status": "completed",
                     "session_id": ""} for r in used]  # fmt: skip
        return bool(vote_at(recorded, n)["passed"])
    evidence = [
        Evidence(
            position=r["index"],
            tests=_tests(r, how),
            behaviour=tuple(r["behaviour"]) if how in ("ranking", "ranking, old parser", "behaviour only") else (),
        )
        for r in used
    ]
    best = rank_candidates(evidence)[0].evidence.position
    return bool(next(r for r in used if r["index"] == best)["passed"])


def _tests(row: Mapping[str, Any], how: str) -> tuple[int, ...]:
    """The visible tests ``how`` ranks by: none, the old doctest-only ones, or today's examples."""
    if how == "behaviour only":
        return ()
    if how == "ranking, old parser":
        return (int(row["recorded_visible"][0]),)
    return (int(row["visible"][0]),)


def report(rows_by_task: Mapping[str, list[dict[str, Any]]], sizes: Sequence[int], ids: Sequence[str]) -> Table:
    table = Table(title=f"choosing among recorded vote samples ({len(ids)} problems)")
    table.add_column("choice")
    for n in sizes:
        table.add_column(f"N={n}", justify="right")
    for how in CHOICES:
        cells = []
        for n in sizes:
            wins = sum(choose(rows_by_task[t], n, how) for t in ids)
            cells.append(f"{wins} ({100 * wins / max(1, len(ids)):.1f}%)")
        table.add_row(how, *cells)
    return table


def paired(rows_by_task: Mapping[str, list[dict[str, Any]]], n: int, a: str, b: str, ids: Sequence[str]) -> str:
    wins = sum(choose(rows_by_task[t], n, a) and not choose(rows_by_task[t], n, b) for t in ids)
    losses = sum(choose(rows_by_task[t], n, b) and not choose(rows_by_task[t], n, a) for t in ids)
    return f"{a} vs {b} at N={n}: {wins} wins, {losses} losses, exact McNemar p = {mcnemar_exact_p(wins, losses):.2g}"


def coverage(rows_by_task: Mapping[str, list[dict[str, Any]]], ids: Sequence[str]) -> str:
    with_tests = sum(1 for t in ids if rows_by_task[t] and rows_by_task[t][0]["visible"][1] > 0)
    with_inputs = sum(1 for t in ids if rows_by_task[t] and rows_by_task[t][0]["inputs"] > 0)
    return f"problems with >= 1 visible test: {with_tests}/{len(ids)}; with generated inputs: {with_inputs}/{len(ids)}"


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=Path, default=Path("benchmarks/results/humaneval-qwen/vote-samples.jsonl"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/rerank-recorded"))
    parser.add_argument("--inputs", type=int, default=24, help="generated inputs per problem")
    parser.add_argument("--limit", type=int, default=None, help="only the first LIMIT problems")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.jsonl"
    done: dict[str, list[dict[str, Any]]] = {}
    if rows_path.is_file():  # resumable: a problem's rows are written together once it is scored
        for line in rows_path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done.setdefault(row["task_id"], []).append(row)
    samples = read_vote_samples(args.samples)
    problems = {p["task_id"]: p for p in load_problems(limit=args.limit)}
    ids = [t for t in problems if t in samples]
    sandbox = create_sandbox(SandboxSettings())
    started = time.monotonic()
    try:
        with Progress(console=Console(stderr=True)) as progress, rows_path.open("a", encoding="utf-8") as out:
            bar = progress.add_task("scoring samples", total=len(ids), completed=sum(t in done for t in ids))
            for task_id in ids:
                if task_id in done:
                    continue
                rows = await score_problem(sandbox, problems[task_id], samples[task_id], args.inputs)
                out.write("".join(json.dumps(r) + "\n" for r in rows))
                out.flush()
                done[task_id] = rows
                progress.advance(bar)
    finally:
        await sandbox.aclose()
    sizes = [1, 3, 5, 10]
    console = Console(record=True, width=120)
    console.print(report(done, sizes, ids))
    design = [t for t in ids if int(t.split("/")[1]) < 40]
    held_out = [t for t in ids if int(t.split("/")[1]) >= 40]
    console.print(f"design set HumanEval/0-39 ({len(design)} problems):")
    console.print(report(done, sizes, design))
    console.print(f"held out HumanEval/40-163 ({len(held_out)} problems):")
    console.print(report(done, sizes, held_out))
    lines = [
        coverage(done, ids),
        paired(done, 10, "ranking", "recorded", ids),
        paired(done, 10, "examples", "recorded", ids),
        paired(done, 10, "ranking", "examples", ids),
        paired(done, 10, "ranking", "ranking, old parser", ids),
        paired(done, 10, "behaviour only", "recorded", ids),
    ]
    for line in lines:
        console.print(line)
    commit = _commit()
    command = " ".join(["python", *sys.argv])
    (args.out / "README.md").write_text(
        "# Choosing among the recorded vote samples, re-ranked\n\n"
        f"Command: `{command}` at commit {commit}, {time.monotonic() - started:.0f} s.\n\n"
        + (__doc__ or "").split("\n\n", 1)[1].split("\n\n    .venv")[0]
        + "\n\n```\n"
        + console.export_text()
        + "```\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    asyncio.run(main())
