"""The local backend's job cgroups, cancellation and its refusal to run jobs as root.

The attacks on the same features are in ``tests-security/test_sandbox_attacks_bwrap_hardening.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
import time
from pathlib import Path

import pytest

from debatecode.errors import SandboxUnavailable
from debatecode.sandbox._cgroup import EXTRA_PIDS, CgroupSupport, JobCgroup, probe_cgroups
from debatecode.sandbox._isolation import IsolationProbe
from debatecode.sandbox.base import ExecJob, Limits
from debatecode.sandbox.local import LocalSandbox


def job_dirs(support: CgroupSupport) -> list[Path]:
    """This process's job cgroup directories."""
    found: list[Path] = []
    for parent in (support.memory_parent, support.pids_parent):
        if parent:
            found += [
                p
                for p in Path(parent).iterdir()
                if p.name.startswith("debatecode-job-") and f"-{os.getpid()}-" in p.name
            ]
    return found


def members(directory: Path) -> list[str]:
    return (directory / "cgroup.procs").read_text().split()


def processes_with(marker: str) -> list[str]:
    """Pids whose command line holds ``marker``."""
    found: list[str] = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.fixture
def direct_cgroups() -> CgroupSupport:
    support = probe_cgroups()
    if support.kind not in ("v1", "v2"):
        pytest.skip(f"no writable cgroup tree here: {support.detail}")
    return support


@pytest.fixture
def bubblewrap() -> LocalSandbox:
    sandbox = LocalSandbox(isolation="bubblewrap")
    if sandbox.probe.bwrap is None:
        pytest.skip(f"bubblewrap is not usable here: {sandbox.probe.bwrap_problem}")
    return sandbox


def test_a_job_cgroup_carries_the_limits_and_is_removed(direct_cgroups: CgroupSupport) -> None:
    job = JobCgroup.create(direct_cgroups, Limits(memory_mb=200, pids=40))
    try:
        memory = Path(job.dirs[0])
        if job.kind == "v1":
            assert (memory / "memory.limit_in_bytes").read_text().strip() == str(200 * 1024 * 1024)
            pids = Path(job.dirs[1]) / "pids.max"
        else:
            assert (memory / "memory.max").read_text().strip() == str(200 * 1024 * 1024)
            pids = memory / "pids.max"
        assert pids.read_text().strip() == str(40 + EXTRA_PIDS)
        assert job.oom_kills() == 0
        assert job.limits_pids
    finally:
        assert job.remove(wait_s=2.0)
    assert not memory.exists() and job_dirs(direct_cgroups) == []


async def test_a_job_runs_in_its_own_cgroup_which_is_gone_afterwards(
    bubblewrap: LocalSandbox, direct_cgroups: CgroupSupport
) -> None:
    task = asyncio.create_task(bubblewrap.run(ExecJob(argv=["python3", "-c", "import time; time.sleep(1.5)"])))
    seen: list[Path] = []
    for _ in range(100):
        seen = job_dirs(direct_cgroups)
        if seen and all(len(members(d)) >= 4 for d in seen):
            break
        await asyncio.sleep(0.02)
    assert seen, "no job cgroup appeared while the job ran"
    for directory in seen:
        assert len(members(directory)) == 4, "bwrap, bwrap's init, the runner and the job"
    result = await task
    assert result.status == "ok", result.stderr
    assert job_dirs(direct_cgroups) == []


@pytest.mark.parametrize("delay_s", [0.0, 0.002, 0.01, 0.05])
async def test_cancelling_a_job_at_any_moment_neither_hangs_nor_leaves_processes(
    bubblewrap: LocalSandbox, delay_s: float
) -> None:
    marker = f"dccancel{os.getpid()}x{int(delay_s * 1000)}"
    job = ExecJob(argv=["python3", "-c", f"import time; time.sleep(30)  # {marker}"], limits=Limits(timeout_s=20))
    task = asyncio.create_task(bubblewrap.run(job))
    await asyncio.sleep(delay_s)
    task.cancel()
    done, _pending = await asyncio.wait([task], timeout=10)
    assert done, "the cancelled job hung"
    await asyncio.sleep(0.3)
    support = probe_cgroups()
    if support.kind in ("v1", "v2"):
        assert job_dirs(support) == []
    assert processes_with(marker) == []


@pytest.mark.parametrize("delay_s", [0.0, 0.01, 0.1])
def test_shutting_the_event_loop_down_during_a_job_does_not_hang(bubblewrap: LocalSandbox, delay_s: float) -> None:
    """``asyncio.run`` cancels every task when it ends, the job's included, wherever it is (even mid-spawn)."""
    marker = f"dcshutdown{os.getpid()}x{int(delay_s * 1000)}"

    async def main() -> None:
        job = ExecJob(argv=["python3", "-c", f"import time; time.sleep(30)  # {marker}"], limits=Limits(timeout_s=20))
        asyncio.get_running_loop().create_task(bubblewrap.run(job))
        await asyncio.sleep(delay_s)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "asyncio.run hung on the job's cancellation"
    time.sleep(0.3)
    assert processes_with(marker) == []


def test_plain_mode_refuses_to_run_jobs_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = LocalSandbox(isolation="rlimits")
    unusable: IsolationProbe = dataclasses.replace(
        sandbox.probe, drop_to_nobody=False, drop_problem="uid 65534 cannot run python: Permission denied"
    )
    monkeypatch.setattr(LocalSandbox, "probe", property(lambda self: unusable))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(SandboxUnavailable) as info:
        sandbox.check()
    message = str(info.value)
    assert "as root" in message and "Permission denied" in message
    assert "apt-get install bubblewrap" in message and "non-root user" in message
    assert "refused" in sandbox.describe()


async def test_plain_mode_as_root_runs_jobs_as_uid_65534_when_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = LocalSandbox(isolation="rlimits")
    if os.geteuid() != 0 or not sandbox.probe.drop_to_nobody:
        pytest.skip("needs root and an interpreter uid 65534 can use")
    result = await sandbox.run(ExecJob(argv=["python3", "-c", "import os; print(os.getuid(), os.getgid())"]))
    assert result.stdout == "65534 65534\n"
