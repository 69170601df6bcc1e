"""How fast the CLI answers, against a bare interpreter measured in the same run.

Usage: .venv/bin/python benchmarks/bench_cli_startup.py [--runs N] [--write]

Prints a table of median and p95 wall times and the ratio to ``python -c pass``.
``--write`` also records the table in benchmarks/results/cli_startup.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXE = str(Path(sys.executable).with_name("debatecode"))

CASES: list[tuple[str, list[str]]] = [
    ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
    ("python -c 'import typer, rich'", [sys.executable, "-c", "import typer, rich"]),
    ("debatecode --help", [EXE, "--help"]),
    ("debatecode solve --help", [EXE, "solve", "--help"]),
    ("debatecode sandbox --help", [EXE, "sandbox", "--help"]),
]


def measure(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    baseline = None
    for name, argv in CASES:
        measure(argv, 2)  # warm the page cache
        times = sorted(measure(argv, args.runs))
        median = statistics.median(times)
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        baseline = baseline or median
        rows.append((name, median, p95, median / baseline))
    lines = [
        "| command | median | p95 | × baseline |",
        "|---|---|---|---|",
        *[
            f"| `{name}` | {median * 1000:.0f} ms | {p95 * 1000:.0f} ms | {ratio:.1f} |"
            for name, median, p95, ratio in rows
        ],
    ]
    table = "\n".join(lines)
    print(table)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "cli_startup.md"
        out.write_text(
            "# CLI start-up\n\n"
            f"Command: `.venv/bin/python benchmarks/bench_cli_startup.py --runs {args.runs} --write`\n\n"
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on a 2-core machine.\n\n" + table + "\n"
        )
        print(f"recorded in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
