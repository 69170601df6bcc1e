"""The issue's own greedy measurement, re-run through debatecode's local runtime: the plain prompt on all of HumanEval.

Issue 12 measured Qwen2.5-Coder-0.5B at 97/164 = 59.1% greedy pass@1 with a bare llama-cpp-python loop
and a one-line prompt ("Complete the following Python function. Reply with the whole function in one
python block", the HumanEval prompt in a fence, no system message). The recorded `single` strategy uses
the product's `code-only` draft prompt (chosen on visible checks only, `benchmarks/results/prompt-ab/`)
and scored 87/164. This script sends the plain prompt through the same runtime `single` uses
(`agenerate_local`: the same GGUF, prompt cache, threads and batch size; greedy; 512 new tokens like
`benchmarks/configs/humaneval-qwen.toml`), extracts and scores the answer as `bench humaneval` does, and
compares it problem by problem with a recorded `single` run. So the gap between 53% and 59% is
attributed to the prompt or to the runtime.

Run (about 20 minutes on 2 cores; resumable: rows already in the output are kept):

    .venv/bin/python benchmarks/plain_prompt_baseline.py \
        --single benchmarks/results/humaneval-qwen-partial/results.jsonl \
        --out benchmarks/results/plain-prompt-baseline

This reads hidden-test outcomes. It is a report after the choice of prompt was made, never a tuning signal.
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

from rich.progress import Progress

from debatecode.bench._stats import mcnemar_exact_p
from debatecode.bench.humaneval import check_samples, completion_of, load_problems, problem_task
from debatecode.llm.local import agenerate_local
from debatecode.llm.parsing import extract_code
from debatecode.llm.types import Message
from debatecode.sandbox import create_sandbox
from debatecode.sandbox.settings import SandboxSettings

MODEL = "qwen2.5-coder-0.5b"
MAX_TOKENS = 512
INSTRUCTION = "Complete the following Python function. Reply with the whole function in one python block."


def plain_messages(prompt: str) -> list[Message]:
    """The issue's prompt: no system message, the instruction, the HumanEval prompt in a fence."""
    return [{"role": "user", "content": f"{INSTRUCTION}\n```python\n{prompt.rstrip()}\n```"}]


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def run(problems: list[dict[str, Any]], rows_path: Path) -> None:
    done = {row["task_id"] for row in read_rows(rows_path)}
    todo = [p for p in problems if p["task_id"] not in done]
    async with create_sandbox(SandboxSettings()) as sandbox:
        with Progress() as progress, rows_path.open("a", encoding="utf-8") as sink:
            bar = progress.add_task("plain prompt, greedy", total=len(problems), completed=len(problems) - len(todo))
            for problem in todo:
                started = time.perf_counter()
                generation = await agenerate_local(
                    MODEL, plain_messages(problem["prompt"]), max_tokens=MAX_TOKENS, temperature=0.0
                )
                seconds = time.perf_counter() - started
                task = problem_task(problem)
                code = extract_code(generation.text, entry_point=task.entry_point)
                program = task.with_prompt_context(code) if code else ""
                completion = completion_of(program, problem["prompt"]) if program else ""
                [verdict] = await check_samples(
                    sandbox, {problem["task_id"]: problem}, [{"task_id": problem["task_id"], "completion": completion}]
                )
                row = {
                    "task_id": problem["task_id"],
                    "completion": completion,
                    "passed": verdict.passed,
                    "result": verdict.result,
                    "prompt_tokens": generation.prompt_tokens,
                    "completion_tokens": generation.completion_tokens,
                    "seconds": round(seconds, 2),
                }
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                progress.advance(bar)


def report(rows: list[dict[str, Any]], single: dict[str, bool], command: str, commit: str) -> str:
    plain = {row["task_id"]: bool(row["passed"]) for row in rows}
    shared = sorted(set(plain) & set(single), key=lambda t: int(t.split("/")[1]))
    plain_only = [t for t in shared if plain[t] and not single[t]]
    single_only = [t for t in shared if single[t] and not plain[t]]
    p_value = mcnemar_exact_p(len(plain_only), len(single_only))
    n = len(shared)

    def share(count: int) -> str:
        return f"{count}/{n} ({100 * count / n:.1f}%)" if n else "-"

    completion = sum(row["completion_tokens"] for row in rows) / max(len(rows), 1)
    prompt = sum(row["prompt_tokens"] for row in rows) / max(len(rows), 1)
    return "\n".join(
        [
            "# The issue's plain prompt through debatecode's local runtime (greedy, HumanEval)",
            "",
            f"Command: `{command}` at commit {commit}, on 2 cores.",
            "",
            "Reads hidden-test outcomes: a report after the prompt was chosen (on visible checks), never a tuning signal.",
            "",
            "| prompt | problems | pass@1 (hidden) | mean prompt tokens | mean completion tokens |",
            "|---|---|---|---|---|",
            f"| plain (the issue's 59.1% prompt) | {n} | {share(sum(plain[t] for t in shared))} | {prompt:.0f} |"
            f" {completion:.0f} |",
            f"| code-only (the recorded `single` run) | {n} | {share(sum(single[t] for t in shared))} | - | - |",
            "",
            f"Passed by plain only: {len(plain_only)}; by code-only only: {len(single_only)}; "
            f"exact McNemar p = {p_value:.3f}.",
            "",
            f"Plain only: {', '.join(plain_only) or '-'}.",
            "",
            f"Code-only only: {', '.join(single_only) or '-'}.",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--single", type=Path, required=True, help="a results.jsonl holding a recorded `single` run")
    parser.add_argument("--out", type=Path, required=True, help="folder for results.jsonl and README.md")
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "results.jsonl"
    asyncio.run(run(load_problems(limit=args.limit), rows_path))
    single = {row["task_id"]: bool(row["passed"]) for row in read_rows(args.single) if row.get("strategy") == "single"}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    command = "python benchmarks/plain_prompt_baseline.py " + " ".join(sys.argv[1:])
    text = report(read_rows(rows_path), single, command, commit.stdout.strip() or "unknown")
    (args.out / "README.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
