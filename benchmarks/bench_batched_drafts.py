"""Batched drafts: N samples of one prompt in one batched decode against N samples one after another.

Usage: nice -n 5 .venv/bin/python benchmarks/bench_batched_drafts.py [--rounds R] [--max-tokens T] [--ns 1,4,8]
       [--threads K] [--write]

One HumanEval draft prompt (the single-agent recipe's messages around ``HumanEval/<--problem>``'s prompt),
``local/qwen2.5-coder-0.5b``, temperature 0.8, the seeds 1000..1000+N-1. For each N, in one process:

- **batched**: ``generate_local_batch(name, messages, N, ...)``: the prompt evaluated once, then all N
  sequences decoded together, one ``llama_decode`` per step;
- **one after another**: N calls of ``generate_local`` with the same settings, one per seed, starting
  from a cold prompt cache (the model is reset first; later calls reuse the batch-aligned prefix, as in
  the product).

The two alternate within each round (which goes first flips every round) so they share the machine's
noise. The figure is total generated tokens / wall seconds of the whole call(s), prompt evaluation
included; the ratio is batched / one after another, per round, and its median. ``--threads K`` gives
llama.cpp K threads on both sides (default: the model's setting, all cores but one). ``--write`` records the
table in benchmarks/results/batched-drafts/README.md, or threads-K.md with ``--threads K``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from debatecode.bench.humaneval import load_problems
from debatecode.llm import local
from debatecode.llm.local_batch import generate_local_batch
from debatecode.llm.types import Message

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-0.5b"
OUT = ROOT / "benchmarks" / "results" / "batched-drafts"
TEMPERATURE = 0.8
SEED0 = 1000


def draft_messages(problem_id: str) -> list[Message]:
    """The single-agent recipe's draft prompt around one HumanEval prompt."""
    prompt = load_problems(ids=[problem_id])[0]["prompt"]
    return [
        {"role": "system", "content": "You are an expert Python programmer."},
        {
            "role": "user",
            "content": "Complete the following Python function. Reply with the whole function in one ```python block."
            f"\n\n```python\n{prompt}```",
        },
    ]


@dataclass
class Run:
    tokens: int
    seconds: float
    cpu_seconds: float
    texts: list[str]

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds

    @property
    def cpu_rate(self) -> float:
        return self.tokens / self.cpu_seconds


def batched(messages: list[Message], n: int, max_tokens: int) -> Run:
    started, cpu = time.perf_counter(), time.process_time()
    out = generate_local_batch(
        MODEL, messages, n, max_tokens=max_tokens, temperature=TEMPERATURE, seeds=range(SEED0, SEED0 + n)
    )
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return Run(sum(g.completion_tokens for g in out), seconds, cpu, [g.text for g in out])


def one_after_another(messages: list[Message], n: int, max_tokens: int) -> Run:
    local._load(MODEL).llama.reset()  # a cold prompt cache, like the batch's fresh evaluation
    started, cpu = time.perf_counter(), time.process_time()
    out = [
        local.generate_local(MODEL, messages, max_tokens=max_tokens, temperature=TEMPERATURE, seed=SEED0 + i)
        for i in range(n)
    ]
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return Run(sum(g.completion_tokens for g in out), seconds, cpu, [g.text for g in out])


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def machine() -> str:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    import llama_cpp

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"nproc {os.cpu_count()}, CPU {model or platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, llama-cpp-python {llama_cpp.__version__}; load average at start {load}"
    )


HEADER = [
    "N",
    "batched tokens",
    "batched s",
    "batched tok/s",
    "one-by-one tokens",
    "one-by-one s",
    "one-by-one tok/s",
    "ratio per round",
    "ratio (median)",
    "CPU-time ratio (median)",
    "distinct drafts b / o",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", default="HumanEval/0")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=192)
    parser.add_argument("--ns", default="1,4,8", help="comma-separated draft counts")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads on both sides")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.threads is not None:
        local.LOCAL_MODELS[MODEL] = dataclasses.replace(local.LOCAL_MODELS[MODEL], n_threads=args.threads)
    threads = local._llama_settings(local.LOCAL_MODELS[MODEL])["n_threads"]
    ns = [int(x) for x in args.ns.split(",")]
    console = Console()
    about = machine()
    started_at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=False
    ).stdout.strip()
    messages = draft_messages(args.problem)
    rss_before = rss_mb()
    local._load(MODEL)
    rss_loaded = rss_mb()
    batched(messages, 2, 4)  # makes the batch context, so its cost is not in the first measurement
    rss_batch = rss_mb()
    prompt_tokens = local.count_local_tokens(MODEL, messages)
    runs: dict[int, list[tuple[Run, Run]]] = {n: [] for n in ns}
    for round_no in range(args.rounds):
        for n in ns:
            if (round_no + n) % 2 == 0:
                b = batched(messages, n, args.max_tokens)
                o = one_after_another(messages, n, args.max_tokens)
            else:
                o = one_after_another(messages, n, args.max_tokens)
                b = batched(messages, n, args.max_tokens)
            runs[n].append((b, o))
            console.print(
                f"round {round_no + 1} N={n}: batched {b.tokens} tok in {b.seconds:.1f}s ({b.rate:.1f} tok/s), "
                f"one by one {o.tokens} tok in {o.seconds:.1f}s ({o.rate:.1f} tok/s), ratio {b.rate / o.rate:.2f} "
                f"(CPU time {b.cpu_seconds:.1f}s vs {o.cpu_seconds:.1f}s, ratio {b.cpu_rate / o.cpu_rate:.2f}), "
                f"load {os.getloadavg()[0]:.2f}"
            )
    rss_end = rss_mb()
    rows = []
    for n in ns:
        pairs = runs[n]
        ratios = [b.rate / o.rate for b, o in pairs]
        cpu_ratios = [b.cpu_rate / o.cpu_rate for b, o in pairs]
        b_tok = sum(b.tokens for b, _ in pairs)
        b_s = sum(b.seconds for b, _ in pairs)
        o_tok = sum(o.tokens for _, o in pairs)
        o_s = sum(o.seconds for _, o in pairs)
        rows.append(
            [
                str(n),
                str(b_tok),
                f"{b_s:.1f}",
                f"{b_tok / b_s:.1f}",
                str(o_tok),
                f"{o_s:.1f}",
                f"{o_tok / o_s:.1f}",
                " · ".join(f"{r:.2f}" for r in ratios),
                f"**{statistics.median(ratios):.2f}**",
                f"{statistics.median(cpu_ratios):.2f}",
                f"{len(set(pairs[-1][0].texts))} / {len(set(pairs[-1][1].texts))}",
            ]
        )
    table = Table(title=f"Batched drafts vs one after another ({MODEL}, {args.problem}, T={TEMPERATURE})")
    for column in HEADER:
        table.add_column(column)
    for row in rows:
        table.add_row(*(cell.replace("**", "") for cell in row))
    console.print(table)
    memory = (
        f"Resident memory: {rss_before:.0f} MB before loading, {rss_loaded:.0f} MB with the model loaded, "
        f"{rss_batch:.0f} MB after the batch context was made, {rss_end:.0f} MB at the end."
    )
    console.print(memory)
    load_end = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.write:
        OUT.mkdir(parents=True, exist_ok=True)
        lines = [
            "# Batched drafts (qwen2.5-coder-0.5b)",
            "",
            f"Command: `.venv/bin/python benchmarks/bench_batched_drafts.py --rounds {args.rounds} "
            f"--max-tokens {args.max_tokens} --ns {args.ns}"
            + (f" --threads {args.threads}" if args.threads is not None else "")
            + f" --write` at commit {commit} "
            "(with the working tree of this change).",
            "",
            f"Measured {started_at} on: {about}; at the end {load_end}. llama.cpp threads: {threads} on both sides.",
            "Compare the ratios, which pair runs taken back to back: other work on the machine shows in the load.",
            "",
            f"The prompt: the single-agent recipe's draft messages around `{args.problem}` ({prompt_tokens} prompt "
            f"tokens). Temperature {TEMPERATURE}, top-p 0.95, at most {args.max_tokens} new tokens per draft, seeds "
            f"{SEED0}..{SEED0}+N-1. **Batched**: one `generate_local_batch` call (prompt evaluated once, N sequences "
            "decoded together). **One by one**: N `generate_local` calls from a cold prompt cache. Tokens/s is the "
            "generated tokens of all N drafts over the wall time of the whole call(s), prompt evaluation included. "
            f"{args.rounds} rounds; within a round the two alternate, and which goes first flips every round. "
            "Tokens are summed over the rounds; the ratio is batched tok/s / one-by-one tok/s. The CPU-time ratio "
            "is the same ratio with the process's CPU seconds (all its threads) in place of wall seconds: it shows "
            "the work saved whatever share of the cores the run got.",
            "",
            "| " + " | ".join(HEADER) + " |",
            "|" + "---|" * len(HEADER),
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
            memory,
            "",
        ]
        target = OUT / ("README.md" if args.threads is None else f"threads-{args.threads}.md")
        target.write_text("\n".join(lines))
        console.print(f"wrote {target}")


if __name__ == "__main__":
    main()
