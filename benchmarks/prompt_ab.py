"""Which chat draft prompt writes better code with the embedded model, judged on visible checks only?

Greedy drafts of each prompt variant on the same tasks, scored on what the model is
allowed to see: HumanEval's *visible* docstring examples (the examples ``problem_task``
reads, never the hidden tests) and the example tasks in ``examples/tasks/``. Checks run
in the sandbox (Docker when an engine answers). The answer is taken from the reply as a
session takes it (``extract_code``, ``clean_solution``, the prompt's missing imports and
helpers put in front).

Run (about 30 minutes per variant on 2 cores for all 164 problems; resumable: rows
already in ``results.jsonl`` are kept):

    nice -n 10 .venv/bin/python benchmarks/prompt_ab.py --limit 164 --out benchmarks/results/prompt-ab-164

It prints a table and writes ``results.jsonl`` (one row per task and variant, with the
reply) and ``README.md`` with the command, the commit and the tables. Variants:

- ``code-only``, ``explain-first``, ``function-only``: the product's draft prompt with that
  ``llm.code_reply``; ``function-only`` is the standalone greedy recipe of issue 32 (system
  "You are an expert Python programmer.", the function to complete in a fence);
- ``plain``: the prompt of issue 12's 59.1% measurement: no system prompt, "Complete the
  following Python function. Reply with the whole function in one python block", the
  HumanEval prompt in a fence.

A HumanEval problem whose docstring gives no example has no visible check: it is counted
apart and never in a pass rate. ``--rescore`` re-runs the visible checks of every kept answer
with the examples ``problem_task`` reads now, without calling the model (for a run that spans
a change of the example parser, so every variant is judged by the same checks); ``--table-only``
writes the tables from the kept rows alone. The README pairs every two variants on the tasks both
answered (who alone passes every visible check there, exact McNemar p).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from debatecode.agents.prompts import render_prompt
from debatecode.agents.roles import get_role
from debatecode.bench._stats import paired_test
from debatecode.bench.humaneval import load_problems, problem_task
from debatecode.execution.cleaning import clean_solution
from debatecode.execution.tester import CandidateTester
from debatecode.llm.local import agenerate_local
from debatecode.llm.parsing import extract_code
from debatecode.llm.types import Message
from debatecode.sandbox import create_sandbox
from debatecode.sandbox.settings import SandboxSettings
from debatecode.task import Task, load_task

MODEL = "qwen2.5-coder-0.5b"
VARIANTS = ("plain", "explain-first", "code-only", "function-only")
DEFAULT_VARIANTS = ("code-only", "function-only", "plain")
MAX_TOKENS = 512
"""As `benchmarks/configs/humaneval-qwen.toml` and the recipe: a HumanEval function fits."""


def messages(variant: str, task: Task) -> list[Message]:
    """The chat messages of ``variant``'s draft prompt for ``task``."""
    if variant == "plain":
        body = task.code_prompt or f'{task.signature or ""}\n    """{task.description}"""\n'
        return [
            {
                "role": "user",
                "content": "Complete the following Python function. Reply with the whole function in one python block.\n"
                f"```python\n{body.rstrip()}\n```",
            }
        ]
    prompt = render_prompt("draft", style="chat", role=get_role("generator"), task=task, code_reply=variant)
    return prompt.messages


def answer(reply: str, task: Task) -> str | None:
    """The code a session keeps from ``reply`` (as ``protocol.run``'s ``_code_from`` for a chat prompt)."""
    code = extract_code(reply, entry_point=task.entry_point)
    if code is None:
        return None
    return task.with_prompt_context(clean_solution(code, task.entry_point).code)


def _tasks(limit: int, example_tasks: bool) -> list[tuple[str, Task]]:
    tasks: list[tuple[str, Task]] = []
    if example_tasks:
        for path in sorted(Path("examples/tasks").glob("*.md")):
            tasks.append((f"examples/{path.stem}", load_task(path)))
    tasks.extend((problem["task_id"], problem_task(problem)) for problem in load_problems(limit=limit))
    return tasks


def _done(rows_path: Path) -> set[tuple[str, str]]:
    if not rows_path.exists():
        return set()
    return {(r["task"], r["variant"]) for r in map(json.loads, rows_path.read_text().splitlines())}


async def _main(
    tasks: list[tuple[str, Task]], variants: list[str], rows_path: Path, done: set[tuple[str, str]], max_tokens: int
) -> None:
    settings = SandboxSettings()
    async with create_sandbox(settings) as sandbox:
        with Progress() as progress, rows_path.open("a") as sink:
            bar = progress.add_task("drafts", total=len(tasks) * len(variants))
            # Variant by variant, so a partial run already compares whole variants on the first tasks.
            for variant in variants:
                for name, task in tasks:
                    progress.advance(bar)
                    if (name, variant) in done:
                        continue
                    started = time.perf_counter()
                    generation = await agenerate_local(
                        MODEL, messages(variant, task), max_tokens=max_tokens, temperature=0.0
                    )
                    seconds = time.perf_counter() - started
                    code = answer(generation.text, task)
                    checks = len(task.test_names)
                    report = await CandidateTester(task, sandbox, settings).run(code) if code and checks else None
                    row = {
                        "task": name,
                        "variant": variant,
                        "visible_pass": bool(report and report.all_passed),
                        "passed": report.passed if report else 0,
                        "total": checks,
                        "prompt_tokens": generation.prompt_tokens,
                        "completion_tokens": generation.completion_tokens,
                        "finish_reason": generation.finish_reason,
                        "seconds": round(seconds, 2),
                        "text": generation.text,
                        "code": code,
                    }
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()


async def _rescore(tasks: list[tuple[str, Task]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with their visible checks run again on each kept answer, against ``tasks`` as they are now."""
    by_name = dict(tasks)
    settings = SandboxSettings()
    rescored = []
    async with create_sandbox(settings) as sandbox:
        with Progress() as progress:
            bar = progress.add_task("rescore", total=len(rows))
            for row in rows:
                progress.advance(bar)
                task = by_name.get(row["task"])
                if task is None:
                    rescored.append(row)
                    continue
                checks = len(task.test_names)
                code = row["code"]
                report = await CandidateTester(task, sandbox, settings).run(code) if code and checks else None
                passed = report.passed if report else 0
                rescored.append(
                    {**row, "visible_pass": bool(report and report.all_passed), "passed": passed, "total": checks}
                )
    return rescored


def table(rows: list[dict[str, Any]], variants: list[str], humaneval: bool) -> str:
    """A markdown table per variant: tasks with a visible check, how many pass them all, tokens and time."""
    lines = [
        "| variant | tasks | with a visible check | all visible checks pass | examples passed | "
        "completion tokens / task | prompt tokens / task | s / task |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant in variants:
        mine = [r for r in rows if r["variant"] == variant and r["task"].startswith("HumanEval/") == humaneval]
        if not mine:
            continue
        n = len(mine)
        checked = [r for r in mine if r["total"]]
        passing = sum(r["visible_pass"] for r in checked)
        share = f" ({100 * passing / len(checked):.1f}%)" if checked else ""
        cells = (
            variant,
            str(n),
            str(len(checked)),
            f"{passing}/{len(checked)}{share}",
            f"{sum(r['passed'] for r in checked)}/{sum(r['total'] for r in checked)}",
            f"{sum(r['completion_tokens'] for r in mine) / n:.0f}",
            f"{sum(r['prompt_tokens'] for r in mine) / n:.0f}",
            f"{sum(r['seconds'] for r in mine) / n:.1f}",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired(rows: list[dict[str, Any]], variants: list[str]) -> str:
    """Each pair of ``variants`` on the tasks with a visible check that both answered: who alone passes them all.

    The last column is the exact McNemar p of those discordant pairs.
    """
    passes: dict[str, dict[str, bool]] = {variant: {} for variant in variants}
    for row in rows:
        if row["total"] and row["variant"] in passes:
            passes[row["variant"]][row["task"]] = bool(row["visible_pass"])
    lines = [
        "| A | B | tasks both answered | A passes | B passes | A only / B only | McNemar p |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, a in enumerate(variants):
        for b in variants[i + 1 :]:
            test = paired_test(a, passes[a], b, passes[b])
            if not test.problems:
                continue
            both = [task for task in passes[a] if task in passes[b]]
            cells = (
                f"`{a}`",
                f"`{b}`",
                str(test.problems),
                str(sum(passes[a][t] for t in both)),
                str(sum(passes[b][t] for t in both)),
                f"{test.b} / {test.c}",
                f"{test.p:.2g}",
            )
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=164, help="the first N HumanEval problems (all 164 by default)")
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help=f"comma-separated, of {VARIANTS}")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    parser.add_argument("--no-example-tasks", action="store_true", help="leave out examples/tasks/*.md")
    parser.add_argument("--out", default="benchmarks/results/prompt-ab-164")
    parser.add_argument("--rescore", action="store_true", help="re-run the visible checks of the kept answers only")
    parser.add_argument("--table-only", action="store_true", help="write the tables from the kept rows; run nothing")
    args = parser.parse_args()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "results.jsonl"
    if args.rescore:
        tasks = _tasks(args.limit, not args.no_example_tasks)
        rows = asyncio.run(_rescore(tasks, [json.loads(line) for line in rows_path.read_text().splitlines()]))
        rows_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    elif not args.table_only:
        tasks = _tasks(args.limit, not args.no_example_tasks)
        asyncio.run(_main(tasks, variants, rows_path, _done(rows_path), args.max_tokens))
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    humaneval, examples, pairs = table(rows, variants, True), table(rows, variants, False), paired(rows, variants)
    for text in (humaneval, examples, pairs):
        Console().print(text)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    command = "python " + " ".join(sys.argv)
    (out / "README.md").write_text(
        f"# Draft prompt A/B with local/{MODEL}\n\nCommand: `{command}` at commit {commit}, on 2 cores.\n"
        "Scored on visible checks only (HumanEval docstring examples, never the hidden tests; the example tasks' "
        f"examples and tests).\n\nHumanEval:\n\n{humaneval}\n\nexamples/tasks:\n\n{examples}\n\n"
        "Paired, on every task with a visible check that both variants answered (all its checks pass or not):\n\n"
        f"{pairs}\n"
    )


if __name__ == "__main__":
    main()
