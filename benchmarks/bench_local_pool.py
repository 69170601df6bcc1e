"""Concurrent calls to the embedded model: a pool of one copy against a pool of two, in one run.

Usage: .venv/bin/python benchmarks/bench_local_pool.py [--rounds R] [--streams K] [--calls C] [--max-tokens T] [--write]

K streams (asyncio tasks, as a benchmark's ``--jobs K`` problems or a debate's parallel authors) each make C
greedy calls through ``agenerate_local``, the product's async path, on the recipe's draft prompts around
HumanEval/0, 1, ... (stream s asks about problems s*C .. s*C+C-1). **One copy**: the pool holds one
``Llama``, so the calls take turns. **Two copies**: the pool may hold two, each on one thread. Both sides use
the same loaded copies (the second is loaded before timing) and one llama.cpp thread per copy. The figure is
total completion tokens over the wall time of all K*C calls; the two sides alternate within each round, and
which goes first flips every round. The replies of both sides must be equal: a copy never changes a reply.
``--write`` records the table in benchmarks/results/local-pool/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import subprocess
import time
from pathlib import Path

from bench_batched_drafts import draft_messages, machine
from rich.console import Console
from rich.table import Table

from debatecode.llm import local

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-0.5b"
OUT = ROOT / "benchmarks" / "results" / "local-pool"


async def _streams(streams: int, calls: int, max_tokens: int) -> tuple[list[str], int]:
    async def stream(s: int) -> list[str]:
        texts = []
        for c in range(calls):
            messages = draft_messages(f"HumanEval/{s * calls + c}")
            generation = await local.agenerate_local(MODEL, messages, max_tokens=max_tokens, temperature=0.0)
            texts.append(generation.text)
            tokens.append(generation.completion_tokens)
        return texts

    tokens: list[int] = []
    replies = await asyncio.gather(*(stream(s) for s in range(streams)))
    return [text for texts in replies for text in texts], sum(tokens)


def side(pool: local._Pool, copies: int, streams: int, calls: int, max_tokens: int) -> tuple[float, int, list[str]]:
    """(seconds, completion tokens, replies) of one timed side with a pool of ``copies``."""
    local.LOCAL_MODELS[MODEL] = dataclasses.replace(local.LOCAL_MODELS[MODEL], instances=copies)
    local._loaded[MODEL] = local._Pool(MODEL, copies, pool.copies[0])
    local._loaded[MODEL].copies = pool.copies[:copies]
    for model in pool.copies:
        model.llama.reset()  # a cold prompt cache on both sides
    started = time.perf_counter()
    texts, tokens = asyncio.run(_streams(streams, calls, max_tokens))
    return time.perf_counter() - started, tokens, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--streams", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3, help="calls per stream")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    console = Console()
    about = machine()
    started_at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=False
    ).stdout.strip()
    local.LOCAL_MODELS[MODEL] = dataclasses.replace(local.LOCAL_MODELS[MODEL], n_threads=1, instances=2)
    pool = local._pool(MODEL)
    with pool.copy(), pool.copy():  # loads the second copy before anything is timed
        pass
    assert len(pool.copies) == 2
    results: dict[int, list[tuple[float, int]]] = {1: [], 2: []}
    replies: dict[int, list[str]] = {}
    for round_no in range(args.rounds):
        order = (1, 2) if round_no % 2 == 0 else (2, 1)
        for copies in order:
            seconds, tokens, texts = side(pool, copies, args.streams, args.calls, args.max_tokens)
            results[copies].append((seconds, tokens))
            replies.setdefault(copies, texts)
            console.print(
                f"round {round_no + 1}, {copies} cop{'y' if copies == 1 else 'ies'}: {tokens} tokens in "
                f"{seconds:.1f}s ({tokens / seconds:.1f} tok/s), load {os.getloadavg()[0]:.2f}"
            )
    same = replies[1] == replies[2]
    ratios = [(t2 / s2) / (t1 / s1) for (s1, t1), (s2, t2) in zip(results[1], results[2], strict=True)]
    header = ["copies", "tokens", "seconds", "tok/s", "ratio per round", "ratio (median)"]
    rows = []
    for copies in (1, 2):
        seconds = sum(s for s, _ in results[copies])
        tokens = sum(t for _, t in results[copies])
        per_round = " · ".join(f"{r:.2f}" for r in ratios) if copies == 2 else "-"
        median = f"**{statistics.median(ratios):.2f}**" if copies == 2 else "1.00"
        rows.append([str(copies), str(tokens), f"{seconds:.1f}", f"{tokens / seconds:.1f}", per_round, median])
    table = Table(title=f"{args.streams} streams x {args.calls} greedy calls, one copy against two ({MODEL})")
    for column in header:
        table.add_column(column)
    for row in rows:
        table.add_row(*(cell.replace("**", "") for cell in row))
    console.print(table)
    console.print(f"replies equal on both sides: {same}")
    if args.write:
        OUT.mkdir(parents=True, exist_ok=True)
        load_end = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        lines = [
            "# Concurrent calls: a pool of one copy of the embedded model against two",
            "",
            f"Command: `.venv/bin/python benchmarks/bench_local_pool.py --rounds {args.rounds} --streams "
            f"{args.streams} --calls {args.calls} --max-tokens {args.max_tokens} --write` at commit {commit} "
            "(with the working tree of this change).",
            "",
            f"Measured {started_at} on: {about}; at the end {load_end}.",
            "",
            f"{args.streams} streams, each making {args.calls} greedy calls (at most {args.max_tokens} tokens) through "
            "`agenerate_local` on the recipe's draft prompts around HumanEval/0, 1, ...; one llama.cpp thread per "
            "copy. Tokens/s is the completion tokens of all calls over the wall time of all of them. The ratio is "
            "two copies' tokens/s over one copy's, per round (the sides alternate, which goes first flips).",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
            f"Replies equal on both sides: **{'yes' if same else 'no'}**.",
            "",
        ]
        (OUT / "README.md").write_text("\n".join(lines))
        console.print(f"wrote {OUT / 'README.md'}")


if __name__ == "__main__":
    main()
