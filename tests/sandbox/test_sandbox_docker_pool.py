"""The Docker backend for real: hardening by inspection and from inside, pool life cycle, hygiene."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import docker
import pytest

from debatecode.config import SandboxSettings
from debatecode.sandbox._hygiene import OwnerToken
from debatecode.sandbox.base import ExecJob, Limits
from debatecode.sandbox.docker import DockerSandbox

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("requires_docker")]

LIMITS = Limits(memory_mb=192, pids=48, cpus=0.5, disk_mb=24, timeout_s=20)


@pytest.fixture
def client() -> Iterator[docker.DockerClient]:
    instance = docker.from_env()
    yield instance
    instance.close()


@pytest.fixture
def run_label() -> dict[str, str]:
    return {"debatecode.test": uuid.uuid4().hex}


def ours(client: docker.DockerClient, label: dict[str, str]) -> list[Any]:
    """The containers carrying ``label``; a container removed between the listing and its inspection is retried."""
    ((key, value),) = label.items()
    for _ in range(10):
        try:
            return list(client.containers.list(all=True, filters={"label": f"{key}={value}"}))
        except docker.errors.NotFound:  # it exited (auto-remove) while the SDK inspected it: list again
            time.sleep(0.1)
    return list(client.containers.list(all=True, filters={"label": f"{key}={value}"}, sparse=True))


async def gone(client: docker.DockerClient, label: dict[str, str], within_s: float = 15.0) -> None:
    """Wait until no container carries ``label`` (or ``within_s`` passes)."""
    for _ in range(int(within_s / 0.2)):
        if not ours(client, label):
            return
        await asyncio.sleep(0.2)


@pytest.fixture
async def pooled(run_label: dict[str, str], client: docker.DockerClient) -> AsyncIterator[DockerSandbox]:
    sandbox = DockerSandbox(SandboxSettings(pool_size=1, sweep_on_start=False), labels=run_label)
    yield sandbox
    await sandbox.aclose()
    assert ours(client, run_label) == [], "aclose left containers behind"


INSIDE = """
import json, os
def read(path):
    try:
        return open(path).read().strip()
    except OSError as exc:
        return type(exc).__name__
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
try:
    open("/etc/dc-probe", "w")
    root = "WRITABLE"
except OSError as exc:
    root = exc.strerror
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "cap_eff": status["CapEff"].strip(), "cap_bnd": status["CapBnd"].strip(),
    "no_new_privs": status["NoNewPrivs"].strip(), "root": root,
    "memory": read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
    "memsw": read("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"),
    "pids": read("/sys/fs/cgroup/pids/pids.max"),
    "cfs": [read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")],
    "work": os.statvfs("/work").f_blocks * os.statvfs("/work").f_frsize,
    "nofile": read("/proc/self/limits"),
    "ifaces": sorted(os.listdir("/sys/class/net")),
}))
"""


def check_inside(report: dict[str, Any]) -> None:
    assert (report["uid"], report["gid"]) == (10001, 10001)
    assert set(report["groups"]) <= {10001}, "no supplementary groups beyond its own"
    assert int(report["cap_eff"], 16) == 0 and int(report["cap_bnd"], 16) == 0
    assert report["no_new_privs"] == "1"
    assert report["root"] == "Read-only file system"
    assert int(report["memory"]) == 192 * 1024 * 1024
    if report["memsw"].isdigit():  # absent when the kernel accounts no swap
        assert int(report["memsw"]) == int(report["memory"]), "memory+swap equals memory: no swap"
    assert report["pids"] == "48"
    quota, period = (int(value) for value in report["cfs"])
    assert quota / period == pytest.approx(0.5)
    assert report["work"] == 24 * 1024 * 1024
    limits = {line.split("  ")[0]: line.split() for line in report["nofile"].splitlines()}
    assert limits["Max open files"][3:5] == ["1024", "1024"]
    assert limits["Max file size"][3] == str(24 * 1024 * 1024)
    assert report["ifaces"] == ["lo"]


@pytest.mark.parametrize("pool_size", [1, 0], ids=["warm", "fresh"])
async def test_hardening_seen_from_inside_the_job(pool_size: int, run_label: dict[str, str]) -> None:
    sandbox = DockerSandbox(SandboxSettings(pool_size=pool_size, sweep_on_start=False), labels=run_label)
    try:
        result = await sandbox.run(ExecJob(files={"p.py": INSIDE}, argv=["python3", "p.py"], limits=LIMITS))
    finally:
        await sandbox.aclose()
    assert result.status == "ok", result.stderr
    check_inside(json.loads(result.stdout))


async def test_warm_container_config_by_inspection(pooled: DockerSandbox, client: docker.DockerClient) -> None:
    await pooled.warm(limits=LIMITS)
    (container,) = ours(client, pooled._labels)
    host = container.attrs["HostConfig"]
    config = container.attrs["Config"]
    assert host["NetworkMode"] == "none" and host["IpcMode"] == "private"
    assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
    assert host["SecurityOpt"][0] == "no-new-privileges" and host["ReadonlyRootfs"] is True
    assert len(host["SecurityOpt"]) == 2 and host["SecurityOpt"][1].startswith("seccomp=")
    assert host["Privileged"] is False and host["AutoRemove"] is True
    assert host["Memory"] == host["MemorySwap"] == 192 * 1024 * 1024
    assert host["PidsLimit"] == 48 and host["NanoCpus"] == 500_000_000
    assert {u["Name"]: u["Hard"] for u in host["Ulimits"]} == {"nofile": 1024, "fsize": 24 * 1024 * 1024, "core": 0}
    assert host["Tmpfs"]["/work"].startswith("size=24m")
    assert host["LogConfig"]["Type"] == "none"
    assert config["User"] == "10001:10001" and config["StdinOnce"] is True
    assert config["Labels"]["debatecode.owner"] == OwnerToken.current().label()
    assert container.name.startswith("debatecode-pool-")


async def test_a_killed_warm_container_is_replaced_and_the_job_still_runs(
    pooled: DockerSandbox, client: docker.DockerClient
) -> None:
    first = await pooled.run(ExecJob(argv=["python3", "-c", "import socket; print(socket.gethostname())"]))
    (container,) = ours(client, pooled._labels)
    container.remove(force=True)
    second = await pooled.run(ExecJob(argv=["python3", "-c", "import socket; print(socket.gethostname())"]))
    assert second.status == "ok" and second.stdout != first.stdout
    third = await pooled.run(ExecJob(argv=["python3", "-c", "import socket; print(socket.gethostname())"]))
    assert third.status == "ok"
    live = ours(client, pooled._labels)
    assert len(live) == 1 and live[0].id != container.id, "a new warm container took the lost one's place"


async def test_an_idle_container_exits_by_itself_after_its_ttl(
    run_label: dict[str, str], client: docker.DockerClient
) -> None:
    settings = SandboxSettings(pool_size=1, sweep_on_start=False, pool_idle_ttl_s=1.0)
    sandbox = DockerSandbox(settings, labels=run_label)
    try:
        assert (await sandbox.run(ExecJob(argv=["true"]))).status == "ok"
        await gone(client, run_label)
        assert ours(client, run_label) == [], "the idle server exited and the container removed itself"
        assert (await sandbox.run(ExecJob(argv=["python3", "-c", "print('again')"]))).stdout == "again\n"
    finally:
        await sandbox.aclose()


async def test_the_reaper_removes_a_container_past_its_deadline(
    pooled: DockerSandbox, client: docker.DockerClient
) -> None:
    await pooled.warm()
    (container,) = ours(client, pooled._labels)
    pooled.reaper.watch(container.id, 0.2)
    await gone(client, pooled._labels)
    assert pooled.reaper.reaped == [container.id]
    assert ours(client, pooled._labels) == []


def test_process_exit_without_aclose_leaves_nothing(run_label: dict[str, str], client: docker.DockerClient) -> None:
    code = (
        "import asyncio, sys\n"
        "from debatecode.config import SandboxSettings\n"
        "from debatecode.sandbox.docker import DockerSandbox\n"
        f"sandbox = DockerSandbox(SandboxSettings(pool_size=2, sweep_on_start=False), labels={run_label!r})\n"
        "print(asyncio.run(sandbox.warm()), flush=True)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert completed.stdout.strip() == "2", completed.stderr
    assert ours(client, run_label) == [], "the atexit hook removed the warm containers"


def test_a_killed_owner_leaves_nothing_either(run_label: dict[str, str], client: docker.DockerClient) -> None:
    code = (
        "import asyncio, os\n"
        "from debatecode.config import SandboxSettings\n"
        "from debatecode.sandbox.docker import DockerSandbox\n"
        f"sandbox = DockerSandbox(SandboxSettings(pool_size=2, sweep_on_start=False), labels={run_label!r})\n"
        "print(asyncio.run(sandbox.warm()), flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == -9 and completed.stdout.strip() == "2", completed.stderr
    deadline = time.monotonic() + 20
    while ours(client, run_label) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ours(client, run_label) == [], "warm containers exit when their owner's connection drops"


def make_stray(client: docker.DockerClient, labels: dict[str, str]) -> Any:
    return client.containers.run(
        "debatecode/sandbox-python:latest",
        ["python3", "-c", "import time; time.sleep(120)"],
        labels={"debatecode": "1", **labels},
        network_mode="none",
        detach=True,
    )


async def test_start_up_sweep_removes_a_dead_owners_container_and_keeps_a_live_ones(
    run_label: dict[str, str], client: docker.DockerClient
) -> None:
    me = OwnerToken.current()
    dead = make_stray(client, {**run_label, "debatecode.owner": replace(me, boot_id="earlier-boot").label()})
    alive = make_stray(client, {**run_label, "debatecode.owner": me.label()})
    try:
        report = DockerSandbox(SandboxSettings(sweep_on_start=False)).sweep()
        assert dead.name in report.removed and "gone" in report.removed[dead.name]
        assert alive.name in report.kept
        assert [c.id for c in ours(client, run_label)] == [alive.id]
    finally:
        for container in ours(client, run_label):
            container.remove(force=True)
