"""``bench humaneval --predictions canonical``: ``--jobs 2`` against ``--jobs 1``, interleaved in one run.

Usage: .venv/bin/python benchmarks/bench_jobs.py [--rounds N] [--sandbox auto|docker|local] [--write]

Each round runs the real console script once with ``--jobs 1`` and once with
``--jobs 2`` (alternating which goes first), scoring the 164 canonical solutions
on their hidden tests, so background load hits both alike. The wall time is the
whole command's, CLI start-up included. Prints a table of the medians and their
ratio; ``--write`` also records it, with the command and every timing, in
benchmarks/results/bench-jobs/results-<sandbox>.md and .json.

The commands run as in a user's shell: ``PYTHONDONTWRITEBYTECODE`` is taken out
of their environment (some development shells set it; every command would then
compile debatecode's modules again, about 0.4 s of start-up on both sides), and
one untimed scoring run of a single problem first fills the bytecode cache and
the sandbox's image cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXE = str(Path(sys.executable).with_name("debatecode"))
RESULTS = ROOT / "benchmarks" / "results" / "bench-jobs"
TARGET = 1.6


def command(jobs: int, sandbox: str) -> list[str]:
    return [EXE, "bench", "humaneval", "--predictions", "canonical", "--jobs", str(jobs), "--sandbox", sandbox]


def user_environment() -> dict[str, str]:
    """This process's environment as a user's shell would have it: Python may cache bytecode."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def warm_up(sandbox: str, cwd: Path) -> None:
    """One untimed run of one problem: bytecode and image caches filled before the first timed command."""
    argv = [*command(1, sandbox), "--problems", "0", "--out", str(cwd / "warm-up")]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, env=user_environment())
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")


def run_once(argv: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, env=user_environment())
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    summary = " ".join(proc.stdout.split())
    if "164/164 problems solved" not in summary:
        sys.exit(f"{' '.join(argv)}: not every canonical solution passed: {summary}")
    return elapsed, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    times: dict[int, list[float]] = {1: [], 2: []}
    order: list[int] = []
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as tmp:
        warm_up(args.sandbox, Path(tmp))
        for round_ in range(args.rounds):
            for jobs in (1, 2) if round_ % 2 == 0 else (2, 1):
                load = os.getloadavg()[0]
                elapsed, summary = run_once(command(jobs, args.sandbox), Path(tmp))
                times[jobs].append(elapsed)
                order.append(jobs)
                loads.append(load)
                print(
                    f"round {round_ + 1} --jobs {jobs}: {elapsed:.2f} s, load {load:.2f} before ({summary})", flush=True
                )

    median = {jobs: statistics.median(values) for jobs, values in times.items()}
    ratio = median[1] / median[2]
    pairwise = [a / b for a, b in zip(times[1], times[2], strict=True)]
    lines = [
        "| --jobs | runs | median (s) | min (s) | max (s) |",
        "|---|---|---|---|---|",
        *(
            f"| {jobs} | {len(v)} | {median[jobs]:.2f} | {min(v):.2f} | {max(v):.2f} |"
            for jobs, v in sorted(times.items())
        ),
        "",
        f"speed-up --jobs 2 over --jobs 1 (ratio of medians): **{ratio:.2f}x** "
        f"(target {TARGET}x: {'met' if ratio >= TARGET else 'NOT met'}); "
        f"per round: {', '.join(f'{r:.2f}x' for r in pairwise)}",
    ]
    table = "\n".join(lines)
    print(table)
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        load = os.getloadavg()
        header = (
            "# bench humaneval --predictions canonical: --jobs 2 against --jobs 1\n\n"
            f"Produced by: `.venv/bin/python benchmarks/bench_jobs.py --rounds {args.rounds} "
            f"--sandbox {args.sandbox} --write`\n\n"
            f"Each timed command: `{' '.join(['debatecode', *command(2, args.sandbox)[1:]])}` "
            "(and `--jobs 1`), 164 canonical samples scored on their hidden tests, whole-command wall time "
            "including CLI start-up, after one untimed warm-up run, with bytecode caching on (as in a user's "
            "shell); runs interleaved, order "
            f"{' '.join(str(j) for j in order)}; 1-minute load average before each: "
            f"{' '.join(f'{x:.1f}' for x in loads)}.\n\n"
            f"Machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}; "
            f"load average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
            "(other work was running on the machine: see the per-round spread).\n\n"
        )
        (RESULTS / f"results-{args.sandbox}.md").write_text(header + table + "\n", encoding="utf-8")
        (RESULTS / f"results-{args.sandbox}.json").write_text(
            json.dumps(
                {
                    "command": command(2, args.sandbox)[1:],
                    "rounds": args.rounds,
                    "order": order,
                    "load_before": loads,
                    "seconds": {str(k): v for k, v in times.items()},
                    "median_seconds": {str(k): v for k, v in median.items()},
                    "ratio": ratio,
                    "target": TARGET,
                    "cpus": os.cpu_count(),
                    "loadavg": load,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"written to {RESULTS.relative_to(ROOT)}/results-{args.sandbox}.md")


if __name__ == "__main__":
    main()
