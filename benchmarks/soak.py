"""Soak: scripted debates back to back for a long time; RSS, open fds and containers must stay flat.

Usage: .venv/bin/python benchmarks/soak.py [--minutes 30] [--every 10] [--sandbox auto|docker|local|dummy]
       [--concurrency 1] [--write]

One process runs the scripted add.md debate (``tests.support.load``: a zero-latency
``scripted/...`` model, two agents, proposal, critique and convergence) over and
over on one set of services (one model client, one sandbox with its warm pool,
one SQLite store), the way a long ``bench`` run or the server does. Each debate's
output folder is removed after it ends, so the disk stays small. Every
``--every`` seconds it samples:

- **RSS** of this process (psutil, else ``VmRSS`` in /proc/self/status);
- **open fds** (the entries of /proc/self/fd, also counted by kind: sockets, pipes, files);
- **containers**: those of this soak (the Docker sandbox labels them
  ``debatecode.soak=<run id>``), and every ``debatecode``-labelled container on the
  engine (other users of the machine included), through the Docker SDK.

``auto`` uses Docker when its engine and sandbox image answer, else the local
(bubblewrap) sandbox, else the dummy one (host processes, no isolation: the
scripted debate's own code only).

Verdict. The first ``WARMUP_SHARE`` of the run (at least one sample interval) is
warm-up: imports, caches, the warm pool and SQLite's page cache fill there. Over
the rest, each resource gets a least-squares line; its *growth* is the line's
rise across that window. The run is **flat** when every debate completed and

- RSS grows by at most ``RSS_GROWTH_MB`` MiB or ``RSS_GROWTH_SHARE`` of the window's median RSS,
  whichever is larger;
- open fds grow by at most ``FD_GROWTH`` (a leak of one per debate would be hundreds);
- this soak's containers never exceed the warm pool's size plus the debates in flight,
  and none is left after the sandbox is closed.

``--write`` records the table, the verdict and every sample in
benchmarks/results/soak/<sandbox>-<minutes>min.md and .json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from tests.support.dummy_sandbox import DummySandbox  # noqa: E402
from tests.support.load import debate_config, load_services, scripted_model  # noqa: E402
from tests.support.scripted_solve import ADD_TASK  # noqa: E402

from debatecode import DebateResult, Services, solve_async  # noqa: E402
from debatecode.config import SandboxSettings  # noqa: E402
from debatecode.errors import SandboxUnavailable  # noqa: E402
from debatecode.sandbox import create_sandbox  # noqa: E402
from debatecode.sandbox.base import Sandbox  # noqa: E402
from debatecode.sandbox.docker import LABEL, DockerSandbox  # noqa: E402
from debatecode.task import load_task  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "soak"
WARMUP_SHARE = 0.2
RSS_GROWTH_MB = 16.0
RSS_GROWTH_SHARE = 0.05
FD_GROWTH = 4
SOAK_LABEL = "debatecode.soak"
SHOWN_SAMPLES = 24


@dataclass(frozen=True)
class Sample:
    """The soak's state at one moment."""

    elapsed_s: float
    debates: int
    failures: int
    rss_mb: float
    fds: int
    fd_kinds: dict[str, int]
    """The open fds by kind, to tell which kind grows when ``fds`` does."""
    containers: int | None
    """This soak's containers (None without Docker)."""
    all_containers: int | None
    """Every ``debatecode``-labelled container on the engine (None without Docker)."""


def rss_mb() -> float:
    """This process's resident set size in MiB."""
    try:
        import psutil
    except ImportError:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS in /proc/self/status") from None
    return float(psutil.Process().memory_info().rss) / 2**20


def open_fds() -> dict[str, int]:
    """This process's open fds by kind (``socket``, ``pipe``, ``anon_inode``, ``file``), from /proc/self/fd."""
    kinds: dict[str, int] = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed between the listing and the look (the listing's own fd, for one)
            continue
        kind = target.split(":", 1)[0] if ":" in target and not target.startswith("/") else "file"
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


class ContainerCounter:
    """Counts containers through the Docker SDK; ``None`` counts when no engine answers."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._client: Any = None
        with contextlib.suppress(Exception):  # no SDK, no engine: the soak runs without container counts
            import docker

            self._client = docker.from_env(timeout=10)
            self._client.ping()

    def count(self, label: str) -> int | None:
        if self._client is None:
            return None
        try:
            # sparse: one request, no inspect per container (which races with other users' removals and
            # would leave the client's connections to pile up in this process's fds, the very thing measured)
            return len(self._client.containers.list(all=True, sparse=True, filters={"label": label}))
        except Exception:  # the engine went away mid-soak: show the gap, do not stop the soak
            return None

    def ours(self) -> int | None:
        return self.count(f"{SOAK_LABEL}={self.run_id}")

    def everyone(self) -> int | None:
        return self.count(LABEL)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def pick_sandbox(choice: str, run_id: str) -> Sandbox:
    """The sandbox for ``--sandbox``: Docker (labelled for this soak), local, or the dummy one."""
    settings = SandboxSettings()
    if choice in ("auto", "docker"):
        docker_sandbox = DockerSandbox(settings, labels={SOAK_LABEL: run_id})
        try:
            docker_sandbox.check()
            return docker_sandbox
        except SandboxUnavailable as exc:
            if choice == "docker":
                sys.exit(f"--sandbox docker: {exc}")
            print(f"Docker is not usable ({exc}); trying the local sandbox", flush=True)
    if choice in ("auto", "local"):
        try:
            return create_sandbox(settings, "local")
        except SandboxUnavailable as exc:
            if choice == "local":
                sys.exit(f"--sandbox local: {exc}")
            print(f"the local sandbox is not usable ({exc}); using the dummy sandbox", flush=True)
    return DummySandbox()


def growth(samples: list[Sample], value: Callable[[Sample], float]) -> float:
    """The rise of the least-squares line of ``value`` over ``samples``, from the first to the last."""
    if len(samples) < 2:
        return 0.0
    xs = [s.elapsed_s for s in samples]
    ys = [value(s) for s in samples]
    slope = statistics.linear_regression(xs, ys).slope if len(set(xs)) > 1 else 0.0
    return slope * (xs[-1] - xs[0])


def verdict(samples: list[Sample], pool_size: int, concurrency: int, left: int | None) -> dict[str, Any]:
    """Each resource's growth over the steady window, its limit, and whether the run is flat."""
    start = samples[0].elapsed_s + WARMUP_SHARE * (samples[-1].elapsed_s - samples[0].elapsed_s)
    steady = [s for s in samples if s.elapsed_s >= start] or samples[-2:]
    rss_limit = max(RSS_GROWTH_MB, RSS_GROWTH_SHARE * statistics.median(s.rss_mb for s in steady))
    counted = [s.containers for s in samples if s.containers is not None]
    container_cap = pool_size + concurrency
    checks: dict[str, dict[str, Any]] = {
        "debates": {
            "value": f"{samples[-1].debates} completed, {samples[-1].failures} failed",
            "limit": "0 failed and at least 1 completed",
            "ok": samples[-1].failures == 0 and samples[-1].debates > 0,
        },
        "rss": {
            "value": f"{growth(steady, lambda s: s.rss_mb):+.1f} MiB",
            "limit": f"≤ {rss_limit:.1f} MiB",
            "ok": growth(steady, lambda s: s.rss_mb) <= rss_limit,
        },
        "fds": {
            "value": f"{growth(steady, lambda s: s.fds):+.1f}",
            "limit": f"≤ {FD_GROWTH}",
            "ok": growth(steady, lambda s: s.fds) <= FD_GROWTH,
        },
    }
    if counted:
        checks["containers"] = {
            "value": f"at most {max(counted)} during the run, {left} left after close",
            "limit": f"≤ {container_cap} (pool {pool_size} + {concurrency} in flight), 0 after close",
            "ok": max(counted) <= container_cap and left == 0,
        }
    return {
        "steady_from_s": start,
        "checks": checks,
        "flat": all(check["ok"] for check in checks.values()),
    }


async def soak(args: argparse.Namespace, folder: Path) -> tuple[list[Sample], dict[str, Any], str]:
    run_id = uuid.uuid4().hex[:12]
    counter = ContainerCounter(run_id)
    sandbox = pick_sandbox(args.sandbox, run_id)
    pool_size = SandboxSettings().pool_size if isinstance(sandbox, DockerSandbox) else 0
    store_url = f"sqlite:///{folder / 'soak.db'}"
    services: Services = load_services(store_url, sandbox)
    task = load_task(ADD_TASK)
    samples: list[Sample] = []
    done = failures = 0
    started = time.monotonic()
    deadline = started + args.minutes * 60

    def sample() -> None:
        kinds = open_fds()
        samples.append(
            Sample(
                elapsed_s=time.monotonic() - started,
                debates=done,
                failures=failures,
                rss_mb=rss_mb(),
                fds=sum(kinds.values()),
                fd_kinds=kinds,
                containers=counter.ours(),
                all_containers=counter.everyone(),
            )
        )
        s = samples[-1]
        print(
            f"{s.elapsed_s:7.0f} s  {s.debates:5d} debates  {s.failures} failed  RSS {s.rss_mb:7.1f} MiB  "
            f"fds {s.fds:4d}  containers {s.containers if s.containers is not None else '-'} "
            f"(all debatecode: {s.all_containers if s.all_containers is not None else '-'})",
            flush=True,
        )

    async def sampler() -> None:
        while True:
            await asyncio.sleep(args.every)
            await asyncio.to_thread(sample)

    with scripted_model() as model:

        async def worker() -> None:
            nonlocal done, failures
            while time.monotonic() < deadline:
                out = folder / f"out-{uuid.uuid4().hex[:8]}"
                try:
                    result: DebateResult = await solve_async(
                        task, debate_config(model, store_url, out), services=services
                    )
                    if result.status == "completed":
                        done += 1
                    else:
                        failures += 1
                        print(f"debate {result.session.id} ended {result.status}: {result.error}", flush=True)
                except Exception as exc:  # counted and shown: a soak reports failures instead of stopping
                    failures += 1
                    print(f"debate failed: {type(exc).__name__}: {exc}", flush=True)
                await asyncio.to_thread(shutil.rmtree, out, True)

        sample()
        watcher = asyncio.create_task(sampler())
        try:
            await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            sample()
            await services.aclose()
    left = counter.ours()
    counter.close()
    return samples, verdict(samples, pool_size, args.concurrency, left), sandbox.name


def sample_table(samples: list[Sample]) -> list[Sample]:
    """At most ``SHOWN_SAMPLES`` samples, evenly spread, the first and last included."""
    if len(samples) <= SHOWN_SAMPLES:
        return samples
    step = (len(samples) - 1) / (SHOWN_SAMPLES - 1)
    return [samples[round(i * step)] for i in range(SHOWN_SAMPLES)]


def show(samples: list[Sample], result: dict[str, Any]) -> None:
    console = Console()
    table = Table(title="Soak samples")
    for column in ("elapsed (s)", "debates", "failed", "RSS (MiB)", "open fds", "containers (ours / all)"):
        table.add_column(column, justify="right")
    for s in sample_table(samples):
        table.add_row(
            f"{s.elapsed_s:.0f}",
            str(s.debates),
            str(s.failures),
            f"{s.rss_mb:.1f}",
            str(s.fds),
            f"{'-' if s.containers is None else s.containers} / {'-' if s.all_containers is None else s.all_containers}",
        )
    console.print(table)
    checks = Table(
        title=f"Verdict: {'flat' if result['flat'] else 'NOT flat'} (steady from {result['steady_from_s']:.0f} s)"
    )
    for column in ("resource", "growth over the steady window", "limit", "ok"):
        checks.add_column(column)
    for name, check in result["checks"].items():
        checks.add_row(name, check["value"], check["limit"], "yes" if check["ok"] else "[bold red]NO[/]")
    console.print(checks)


def markdown(samples: list[Sample], result: dict[str, Any], args: argparse.Namespace, sandbox: str) -> str:
    load = os.getloadavg()
    lines = [
        f"# Soak: {args.minutes:g} minutes of scripted debates, sandbox {sandbox}",
        "",
        f"Command: `.venv/bin/python benchmarks/soak.py --minutes {args.minutes:g} --every {args.every:g} "
        f"--sandbox {args.sandbox} --concurrency {args.concurrency} --write`",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}; load average "
        f"at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}. "
        f"{samples[-1].debates} debates in {samples[-1].elapsed_s:.0f} s.",
        "",
        f"## Verdict: **{'flat' if result['flat'] else 'NOT flat'}**",
        "",
        f"Steady window from {result['steady_from_s']:.0f} s (the first {WARMUP_SHARE:.0%} is warm-up); growth is the "
        "rise of the least-squares line across it (see the script's docstring).",
        "",
        "| resource | growth over the steady window | limit | ok |",
        "|---|---|---|---|",
        *(
            f"| {name} | {check['value']} | {check['limit']} | {'yes' if check['ok'] else 'NO'} |"
            for name, check in result["checks"].items()
        ),
        "",
        "## Samples",
        "",
        "| elapsed (s) | debates | failed | RSS (MiB) | open fds | containers (ours / all debatecode) |",
        "|---|---|---|---|---|---|",
        *(
            f"| {s.elapsed_s:.0f} | {s.debates} | {s.failures} | {s.rss_mb:.1f} | {s.fds} | "
            f"{'-' if s.containers is None else s.containers} / {'-' if s.all_containers is None else s.all_containers} |"
            for s in sample_table(samples)
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to run debates (default 30)")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples (default 10)")
    parser.add_argument("--sandbox", choices=("auto", "docker", "local", "dummy"), default="auto")
    parser.add_argument("--concurrency", type=int, default=1, help="debates at a time (default 1: back to back)")
    parser.add_argument("--write", action="store_true", help="record the result in benchmarks/results/soak/")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        samples, result, sandbox = asyncio.run(soak(args, Path(tmp)))
    show(samples, result)
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        name = f"{sandbox}-{args.minutes:g}min"
        (RESULTS / f"{name}.md").write_text(markdown(samples, result, args, sandbox), encoding="utf-8")
        record = {"args": vars(args), "sandbox": sandbox, "verdict": result, "samples": [asdict(s) for s in samples]}
        (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"written to {RESULTS.relative_to(ROOT)}/{name}.md")
    sys.exit(0 if result["flat"] else 1)


if __name__ == "__main__":
    main()
