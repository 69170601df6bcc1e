"""The warm pool under load: many mixed jobs, hostile ones among them, from many callers at once.

Every job must get the result its code deserves, whatever its neighbours did;
the pool must stay within its size, and nothing may be left afterwards.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import time
import uuid

import pytest

from debatecode.config import SandboxSettings
from debatecode.sandbox.base import ExecJob, ExecResult, Limits
from debatecode.sandbox.docker import DockerSandbox

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("requires_docker")]

KINDS: dict[str, tuple[str, str]] = {
    "ok": ("import os\nprint(os.environ['TAG'])\n", "ok"),
    "fail": ("import os\nprint(os.environ['TAG'])\nraise SystemExit(3)\n", "error"),
    "timeout": ("import os, time\nprint(os.environ['TAG'], flush=True)\ntime.sleep(30)\n", "timeout"),
    "oom": ("import os\nprint(os.environ['TAG'], flush=True)\nb = [bytearray(32 << 20) for _ in range(64)]\n", "oom"),
    "daemon": (
        "import os, time\nprint(os.environ['TAG'], flush=True)\n"
        "if os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n",
        "ok",
    ),
    "litter": (
        "import os\nprint(os.environ['TAG'], flush=True)\n"
        "open('/tmp/litter', 'w').write('x')\nopen('litter', 'w').write('x')\n",
        "ok",
    ),
    "check-clean": (
        "import os\nprint(os.environ['TAG'], flush=True)\n"
        "assert not os.path.exists('/tmp/litter') and os.listdir('.') == ['main.py'], os.listdir('.')\n"
        "others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]\n"
        "assert not others, others\n",
        "ok",
    ),
}


def containers(label: str) -> list[str]:
    command = ["docker", "ps", "-aq", "--filter", f"label=debatecode.test={label}"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()


async def test_mixed_hostile_load_on_a_small_pool() -> None:
    label = uuid.uuid4().hex
    settings = SandboxSettings(pool_size=2, sweep_on_start=False)
    sandbox = DockerSandbox(settings, labels={"debatecode.test": label})
    rng = random.Random(7)
    plan = ["ok"] * 60 + ["fail"] * 15 + ["litter"] * 15 + ["check-clean"] * 20 + ["daemon"] * 10
    plan += ["timeout"] * 4 + ["oom"] * 4
    rng.shuffle(plan)
    limits = Limits(timeout_s=2, memory_mb=128)
    jobs = [
        ExecJob(
            files={"main.py": KINDS[kind][0]}, argv=["python3", "main.py"], env={"TAG": f"{kind}-{i}"}, limits=limits
        )
        for i, kind in enumerate(plan)
    ]
    started = time.monotonic()
    try:
        half = len(jobs) // 2
        # Two batches and a stream of single runs, all at once, all sharing the pool.
        first, second, singles = await asyncio.gather(
            sandbox.run_batch(jobs[:half], concurrency=2),
            sandbox.run_batch(jobs[half:-10], concurrency=2),
            asyncio.gather(*(sandbox.run(job) for job in jobs[-10:])),
        )
        results: list[ExecResult] = [*first, *second, *singles]
        assert len(containers(label)) <= 2, "the pool stays within its size"
    finally:
        await sandbox.aclose()
    elapsed = time.monotonic() - started
    for kind, job, result in zip(plan, jobs, results, strict=True):
        expected = KINDS[kind][1]
        assert result.status == expected, f"{job.env['TAG']}: {result}"
        assert result.stdout.startswith(job.env["TAG"]), f"{job.env['TAG']} got another job's output: {result.stdout!r}"
    assert containers(label) == []
    assert elapsed < 120, f"{len(jobs)} jobs took {elapsed:.0f}s"
