"""Which chat prompt writes better code with the embedded model: ``code-only`` or ``explain-first``?

Greedy drafts of each prompt variant on the same tasks, scored on what the model is
allowed to see: HumanEval's *visible* docstring examples (never the hidden tests) and
the example tasks in ``examples/tasks/``. Checks run in the Docker sandbox.

Run (about 10 minutes on 2 cores for 40 problems):

    .venv/bin/python benchmarks/prompt_ab.py --limit 40 --out benchmarks/results/prompt-ab

It prints a table and writes ``results.jsonl`` (one row per task and variant) and
``README.md`` with the command, the commit and the table. The "plain" row is the
prompt of the issue's 59.1% measurement: no system prompt, "Complete the following
Python function. Reply with the whole function in one python block", the HumanEval
prompt in a fence.
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
from rich.table import Table

from debatecode.agents.prompts import render_prompt
from debatecode.agents.roles import get_role
from debatecode.bench.humaneval import load_problems, problem_task
from debatecode.execution.runner import TestRunner
from debatecode.llm.local import agenerate_local
from debatecode.llm.parsing import extract_code
from debatecode.llm.types import Message
from debatecode.sandbox import create_sandbox
from debatecode.sandbox.settings import SandboxSettings
from debatecode.task import Task, load_task

MODEL = "qwen2.5-coder-0.5b"
VARIANTS = ("plain", "explain-first", "code-only")


def _messages(variant: str, task: Task) -> list[Message]:
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


def _tasks(limit: int) -> list[tuple[str, Task]]:
    tasks: list[tuple[str, Task]] = []
    for path in sorted(Path("examples/tasks").glob("*.md")):
        tasks.append((f"examples/{path.stem}", load_task(path)))
    for problem in load_problems():
        task = problem_task(problem)
        if task.examples:
            tasks.append((problem["task_id"], task))
        if len(tasks) >= limit:
            break
    return tasks


def _done(rows_path: Path) -> set[tuple[str, str]]:
    if not rows_path.exists():
        return set()
    return {(r["task"], r["variant"]) for r in map(json.loads, rows_path.read_text().splitlines())}


async def _main(tasks: list[tuple[str, Task]], rows_path: Path, done: set[tuple[str, str]]) -> None:
    settings = SandboxSettings()
    async with create_sandbox(settings) as sandbox:
        with Progress() as progress, rows_path.open("a") as sink:
            bar = progress.add_task("drafts", total=len(tasks) * len(VARIANTS))
            for name, task in tasks:
                runner = TestRunner(task, sandbox, settings)
                for variant in VARIANTS:
                    progress.advance(bar)
                    if (name, variant) in done:
                        continue
                    started = time.perf_counter()
                    generation = await agenerate_local(
                        MODEL, _messages(variant, task), max_tokens=1024, temperature=0.0
                    )
                    seconds = time.perf_counter() - started
                    code = extract_code(generation.text, entry_point=task.entry_point)
                    if code is not None and task.code_prompt and f"def {task.entry_point}(" not in code:
                        code = None
                    report = await runner.run(task.with_prompt_context(code)) if code else None
                    row = {
                        "task": name,
                        "variant": variant,
                        "visible_pass": bool(report and report.all_passed),
                        "passed": report.passed if report else 0,
                        "total": report.total if report else len(task.examples),
                        "prompt_tokens": generation.prompt_tokens,
                        "completion_tokens": generation.completion_tokens,
                        "seconds": round(seconds, 2),
                    }
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()


def _table(rows: list[dict[str, Any]]) -> tuple[Table, str]:
    table = Table(title="Draft prompt A/B (greedy, visible checks only)")
    for column in (
        "variant",
        "tasks",
        "all visible pass",
        "completion tokens / task",
        "prompt tokens / task",
        "s / task",
    ):
        table.add_column(column)
    lines = [
        "| variant | tasks | all visible pass | completion tokens / task | prompt tokens / task | s / task |",
        "|---|---|---|---|---|---|",
    ]
    for variant in VARIANTS:
        mine = [r for r in rows if r["variant"] == variant]
        if not mine:
            continue
        n = len(mine)
        cells = (
            variant,
            str(n),
            f"{sum(r['visible_pass'] for r in mine)}/{n} ({100 * sum(r['visible_pass'] for r in mine) / n:.0f}%)",
            f"{sum(r['completion_tokens'] for r in mine) / n:.0f}",
            f"{sum(r['prompt_tokens'] for r in mine) / n:.0f}",
            f"{sum(r['seconds'] for r in mine) / n:.1f}",
        )
        table.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    return table, "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=40, help="tasks (the example tasks first, then HumanEval)")
    parser.add_argument("--out", default="benchmarks/results/prompt-ab")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "results.jsonl"
    asyncio.run(_main(_tasks(args.limit), rows_path, _done(rows_path)))
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    table, markdown = _table(rows)
    Console().print(table)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    command = "python " + " ".join(sys.argv)
    (Path(args.out) / "README.md").write_text(
        f"# Draft prompt A/B with local/{MODEL}\n\nCommand: `{command}` at commit {commit}, on 2 cores.\n"
        "Scored on visible checks only (HumanEval docstring examples, never the hidden tests; the example tasks' "
        f"examples and tests).\n\n{markdown}\n"
    )


if __name__ == "__main__":
    main()
