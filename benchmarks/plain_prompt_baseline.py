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
        --single benchmarks/results/humaneval-qwen/results.jsonl \
        --out benchmarks/results/plain-prompt-baseline

This reads hidden-test outcomes. It is a report after the choice of prompt was made, never a tuning signal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

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
BARE_N_CTX = 2048
RUNTIMES = ("product", "bare")
INSTRUCTION = "Complete the following Python function. Reply with the whole function in one python block."


def plain_messages(prompt: str) -> list[Message]:
    """The issue's prompt: no system message, the instruction, the HumanEval prompt in a fence."""
    return [{"role": "user", "content": f"{INSTRUCTION}\n```python\n{prompt.rstrip()}\n```"}]


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class Generated:
    text: str
    prompt_tokens: int
    completion_tokens: int


class BareLlama:
    """llama-cpp-python as the issue used it: a plain ``Llama`` with its defaults, the GGUF's chat template."""

    def __init__(self) -> None:
        from llama_cpp import Llama

        from debatecode.llm.local import LOCAL_MODELS, assemble
        from debatecode.llm.local_amx import avoid_amx_weights

        avoid_amx_weights()

        chunks = LOCAL_MODELS[MODEL].chunks
        if chunks is None:
            raise SystemExit(f"{MODEL} has no chunk packages to assemble")
        path = assemble(chunks)
        self.llama = Llama(model_path=str(path), n_ctx=BARE_N_CTX, seed=0, verbose=False)

    async def generate(self, messages: list[Message]) -> Generated:
        out: Any = await asyncio.to_thread(
            self.llama.create_chat_completion, messages=cast(Any, messages), max_tokens=MAX_TOKENS, temperature=0.0
        )
        usage = out["usage"]
        return Generated(out["choices"][0]["message"]["content"], usage["prompt_tokens"], usage["completion_tokens"])


async def product_generate(messages: list[Message]) -> Generated:
    generation = await agenerate_local(MODEL, messages, max_tokens=MAX_TOKENS, temperature=0.0)
    return Generated(generation.text, generation.prompt_tokens, generation.completion_tokens)


async def run(problems: list[dict[str, Any]], rows_path: Path, runtime: str) -> None:
    done = {row["task_id"] for row in read_rows(rows_path)}
    todo = [p for p in problems if p["task_id"] not in done]
    if not todo:
        return
    generate = BareLlama().generate if runtime == "bare" else product_generate
    async with create_sandbox(SandboxSettings()) as sandbox:
        with Progress() as progress, rows_path.open("a", encoding="utf-8") as sink:
            bar = progress.add_task(
                f"plain prompt, greedy, {runtime}", total=len(problems), completed=len(problems) - len(todo)
            )
            for problem in todo:
                started = time.perf_counter()
                generation = await generate(plain_messages(problem["prompt"]))
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
                    "text": generation.text,
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


RUNTIME_TEXT = {
    "product": "debatecode's runtime (`agenerate_local`)",
    "bare": f"bare llama-cpp-python (`Llama` defaults, n_ctx {BARE_N_CTX})",
}


def _order(task_id: str) -> int:
    return int(task_id.split("/")[1])


FENCE = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)


def first_block(text: str) -> str:
    """The first fenced block of a reply as it is (the reply itself when it has none)."""
    found = FENCE.search(text)
    return found.group(1) if found else text


async def other_extractions(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many replies pass when the program is taken another way: the first block alone, or prompt + block."""
    by_id = {p["task_id"]: p for p in load_problems(ids=[row["task_id"] for row in rows])}
    ways = {
        "the first fenced block as the whole program": lambda row: first_block(row["text"]),
        "the HumanEval prompt, then the first fenced block": lambda row: (
            by_id[row["task_id"]]["prompt"] + "\n" + first_block(row["text"])
        ),
    }
    counts = {}
    async with create_sandbox(SandboxSettings()) as sandbox:
        for name, program in ways.items():
            samples = [{"task_id": row["task_id"], "solution": program(row)} for row in rows]
            verdicts = await check_samples(sandbox, by_id, samples)
            counts[name] = sum(verdict.passed for verdict in verdicts)
    return counts


def report(
    runs: dict[str, list[dict[str, Any]]],
    single: dict[str, bool],
    command: str,
    commit: str,
    extractions: dict[str, dict[str, int]] | None = None,
) -> str:
    lines = [
        "# The issue's plain prompt, greedy, on HumanEval, against the recorded `single` run",
        "",
        f"Command: `{command}` (once per runtime) at commit {commit}, on 2 cores.",
        "",
        "Reads hidden-test outcomes: a report after the prompt was chosen (on visible checks), never a tuning signal."
        " Answers are extracted and scored as `bench humaneval` does (`extract_code`, the prompt's imports, the"
        " Docker sandbox, `clean_solution`).",
        "",
        "| prompt, runtime | problems | pass@1 (hidden) | mean prompt tokens | mean completion tokens"
        " | passed only here | passed only by single | exact McNemar p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    shared_all = set(single)
    for rows in runs.values():
        shared_all &= {row["task_id"] for row in rows}
    n = len(shared_all)

    def share(count: int) -> str:
        return f"{count}/{n} ({100 * count / n:.1f}%)" if n else "-"

    details = []
    for runtime, rows in runs.items():
        passed = {row["task_id"]: bool(row["passed"]) for row in rows if row["task_id"] in shared_all}
        only_here = sorted((t for t in passed if passed[t] and not single[t]), key=_order)
        only_single = sorted((t for t in passed if single[t] and not passed[t]), key=_order)
        kept = [row for row in rows if row["task_id"] in shared_all]
        prompt = sum(row["prompt_tokens"] for row in kept) / max(len(kept), 1)
        completion = sum(row["completion_tokens"] for row in kept) / max(len(kept), 1)
        lines.append(
            f"| plain, {RUNTIME_TEXT[runtime]} | {n} | {share(sum(passed.values()))} | {prompt:.0f} | {completion:.0f}"
            f" | {len(only_here)} | {len(only_single)} | {mcnemar_exact_p(len(only_here), len(only_single)):.3f} |"
        )
        details += [
            "",
            f"plain, {runtime}: passed only here: {', '.join(only_here) or '-'}; only by single:"
            f" {', '.join(only_single) or '-'}.",
        ]
    lines.append(
        f"| code-only, debatecode's runtime (the recorded `single` run) | {n}"
        f" | {share(sum(single[t] for t in shared_all))} | - | - | - | - | - |"
    )
    for runtime, counts in (extractions or {}).items():
        total = len(runs[runtime])
        ways = "; ".join(f"{name}: {count}/{total}" for name, count in counts.items())
        details += ["", f"plain, {runtime}, the same replies extracted other ways: {ways}."]
    return "\n".join([*lines, *details, ""])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--single", type=Path, required=True, help="a results.jsonl holding a recorded `single` run")
    parser.add_argument("--out", type=Path, required=True, help="folder for <runtime>.jsonl and README.md")
    parser.add_argument("--runtime", choices=RUNTIMES, default="product", help="who generates (default: product)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    asyncio.run(run(load_problems(limit=args.limit), args.out / f"{args.runtime}.jsonl", args.runtime))
    single = {row["task_id"]: bool(row["passed"]) for row in read_rows(args.single) if row.get("strategy") == "single"}
    runs = {runtime: read_rows(args.out / f"{runtime}.jsonl") for runtime in RUNTIMES}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    command = "python benchmarks/plain_prompt_baseline.py " + " ".join(sys.argv[1:])
    extractions = {
        runtime: asyncio.run(other_extractions(rows))
        for runtime, rows in runs.items()
        if rows and all("text" in row for row in rows)
    }
    found = {k: v for k, v in runs.items() if v}
    text = report(found, single, command, commit.stdout.strip() or "unknown", extractions)
    (args.out / "README.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
