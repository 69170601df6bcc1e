"""Memory retrieval latency and embedding throughput, against baselines measured in the same run.

Usage: .venv/bin/python benchmarks/bench_memory.py [--queries N] [--sizes 10000,100000] [--write]

What is measured:

- **top-5 retrieval**: ``VectorIndex.search(query, 5)`` over N random unit vectors of 384
  dimensions (the size of all-MiniLM-L6-v2), p50 and p95 over ``--queries`` random queries.
  Baselines on the same matrix and queries: the bare matrix-vector product ``M @ q`` (the floor:
  no selection at all) and ``M @ q`` followed by a full ``np.argsort`` (the naive numpy top-k).
  Targets: under 5 ms at 10k and under 50 ms at 100k.
- **end to end**: ``EpisodicMemory.search`` on a SQLite store holding 1000 episodes (the default
  ``max_episodes``): embedding the query (hashing), syncing with the table, the index search and
  reading the hits back.
- **embedding throughput**: texts per second for a batch of 256 short failure descriptions, for the
  sentence-transformers (all-MiniLM-L6-v2, CPU, model already loaded) and hashing embedders; the
  median of 5 batches, each of new texts. Hashing caches the bucket of each feature (word, word pair,
  n-gram) it has seen, so it is measured with that cache warm and cleared before each batch.

``--write`` records the tables in benchmarks/results/memory.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from debatecode.memory import Episode, EpisodicMemory, HashingEmbedder, MemorySettings, VectorIndex
from debatecode.memory import embeddings as embeddings_module
from debatecode.memory.embeddings import Embedder, SentenceTransformerEmbedder

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]
DIM = 384
K = 5
TARGETS_MS = {10_000: 5.0, 100_000: 50.0}
SUBJECTS = ["loop", "parser", "cache", "date", "regex", "sort", "index", "recursion"]
PROBLEMS = ["off by one", "wrong type", "missing edge case", "timeout", "bad rounding", "unhandled None"]


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def timed(call: Callable[[T], object], inputs: Sequence[T]) -> list[float]:
    """Wall time of ``call(item)`` for each item."""
    times = []
    for item in inputs:
        start = time.perf_counter()
        call(item)
        times.append(time.perf_counter() - start)
    return times


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def retrieval_rows_of(size: int, queries: int, rng: np.random.Generator) -> list[str]:
    matrix = unit_rows(rng, size)
    index = VectorIndex(DIM)
    index.add([f"e{i}" for i in range(size)], matrix)
    probes = list(unit_rows(rng, queries))
    for probe in probes[:10]:  # warm the caches, and check the index against the naive answer
        expected = [f"e{i}" for i in np.argsort(-(matrix @ probe), kind="stable")[:K]]
        assert [hit[0] for hit in index.search(probe, K)] == expected
    dot = percentiles(timed(lambda q: matrix @ q, probes))
    full_sort = percentiles(timed(lambda q: np.argsort(-(matrix @ q))[:K], probes))
    ours = percentiles(timed(lambda q: index.search(q, K), probes))
    target = TARGETS_MS.get(size)
    verdict = "" if target is None else ("✓" if ours[0] * 1000 < target else "✗") + f" < {target:g} ms"
    rows = (
        ("`M @ q` (baseline: no selection)", dot, ""),
        ("`M @ q` + full `argsort` (naive top-5)", full_sort, ""),
        ("`VectorIndex.search` (argpartition top-5)", ours, verdict),
    )
    return [
        f"| {size:,} | {name} | {p50 * 1000:.2f} ms | {p95 * 1000:.2f} ms | {p50 / dot[0]:.2f} | {note} |"
        for name, (p50, p95), note in rows
    ]


def retrieval_rows(sizes: list[int], queries: int) -> list[str]:
    rng = np.random.default_rng(0)
    return [line for size in sizes for line in retrieval_rows_of(size, queries, rng)]


def end_to_end_row(queries: int) -> str:
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        settings = MemorySettings(embedder="hashing")
        with EpisodicMemory(url, settings, HashingEmbedder(settings.hashing_dim)) as memory:
            for i in range(settings.max_episodes):
                subject, problem = rng.choice(SUBJECTS), rng.choice(PROBLEMS)
                memory.add(
                    Episode(
                        session_id=f"s{i % 20}",
                        agent_id=f"agent-{i % 3}",
                        task_title=f"task {i}",
                        reflection=f"the {subject} code had a {problem} bug in case {i}",
                    )
                )
            texts = [f"{rng.choice(PROBLEMS)} in the {rng.choice(SUBJECTS)}" for _ in range(queries)]
            memory.search(texts[0], k=K)
            p50, p95 = percentiles(timed(lambda text: memory.search(text, k=K), texts))
    return f"| `EpisodicMemory.search`, {settings.max_episodes} episodes, hashing | {p50 * 1000:.2f} ms | {p95 * 1000:.2f} ms |"


def throughput_rows(batch: int) -> list[str]:
    def texts(rep: int) -> list[str]:
        return [
            f"{PROBLEMS[i % len(PROBLEMS)]} in the {SUBJECTS[i % len(SUBJECTS)]} of task {rep * batch + i}"
            for i in range(batch)
        ]

    def cold_hashing(embedder: HashingEmbedder) -> Callable[[list[str]], object]:
        def embed(batch_texts: list[str]) -> object:
            embeddings_module._bucket.cache_clear()
            return embedder.embed(batch_texts)

        return embed

    hashing = HashingEmbedder(512)
    cases: list[tuple[str, Embedder, Callable[[list[str]], object]]] = []
    minilm = SentenceTransformerEmbedder()
    cases.append(("sentence-transformers (all-MiniLM-L6-v2, CPU)", minilm, minilm.embed))
    cases.append(("hashing (512 dimensions), feature-hash cache warm", hashing, hashing.embed))
    cases.append(("hashing (512 dimensions), feature-hash cache cleared per batch", hashing, cold_hashing(hashing)))
    lines = []
    for name, embedder, call in cases:
        start = time.perf_counter()
        embedder.embed(texts(99)[:8])  # loads the model, if any
        first = time.perf_counter() - start
        median = statistics.median(timed(call, [texts(rep) for rep in range(5)]))
        lines.append(f"| {name} | {batch} | {median * 1000:.0f} ms | {batch / median:,.0f} | {first:.2f} s |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sizes = [int(size) for size in args.sizes.split(",")]

    retrieval = [
        "| stored vectors | method | p50 | p95 | p50 × baseline | target |",
        "|---|---|---|---|---|---|",
        *retrieval_rows(sizes, args.queries),
    ]
    end_to_end = ["| search | p50 | p95 |", "|---|---|---|", end_to_end_row(args.queries)]
    throughput = [
        "| embedder | batch | time per batch (median of 5) | texts/s | first call (incl. model load) |",
        "|---|---|---|---|---|",
        *throughput_rows(args.batch),
    ]
    report = (
        f"## Top-{K} retrieval, {DIM} dimensions, {args.queries} queries\n\n"
        + "\n".join(retrieval)
        + "\n\n## End to end\n\n"
        + "\n".join(end_to_end)
        + "\n\n## Embedding throughput\n\n"
        + "\n".join(throughput)
        + "\n"
    )
    print(report)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "memory.md"
        machine = (
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}"
        )
        command = " ".join(["benchmarks/bench_memory.py", *sys.argv[1:]])
        out.write_text(
            "# Memory: retrieval latency and embedding throughput\n\n"
            f"Command: `.venv/bin/python {command}`\n\n"
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine}.\n"
            "The baseline of each size is the bare matrix-vector product over the same matrix, in the same run.\n\n"
            + report
        )
        print(f"recorded in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
