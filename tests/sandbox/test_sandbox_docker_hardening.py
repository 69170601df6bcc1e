"""Docker hardening without an engine: the seccomp profile's content, no core dumps, the host-share clamp."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import docker.errors
import pydantic
import pytest

from debatecode.config import SandboxSettings
from debatecode.errors import SandboxError
from debatecode.sandbox import _docker_spec
from debatecode.sandbox._docker_spec import ContainerShape, HostResources, container_spec
from debatecode.sandbox._seccomp import (
    ALLOWED,
    CLONE_NAMESPACE_FLAGS,
    DENIED,
    ENOSYS,
    EPERM,
    seccomp_profile,
    seccomp_profile_json,
)
from debatecode.sandbox.base import ExecJob, Limits
from debatecode.sandbox.docker import DockerSandbox

TEN_TB_MB = 10 * 1024 * 1024
UNISTD_64 = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
NEWER_THAN_HEADERS = {"fchmodat2"}
"""Calls newer than the kernel headers of some build machines (Linux 6.6)."""


def rules_for(name: str) -> list[dict[str, Any]]:
    return [rule for rule in seccomp_profile()["syscalls"] if name in rule["names"]]


def unconditionally_allowed() -> set[str]:
    return {
        name
        for rule in seccomp_profile()["syscalls"]
        if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args")
        for name in rule["names"]
    }


# --- the seccomp profile -----------------------------------------------------------------------------------------


def test_profile_is_an_allowlist_that_denies_with_eperm() -> None:
    profile = seccomp_profile()
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO" and profile["defaultErrnoRet"] == EPERM == 1
    actions = {rule["action"] for rule in profile["syscalls"]}
    assert actions == {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO"}, "no rule may kill, trap or log"


def test_profile_covers_x86_64_and_aarch64_without_32_bit_compat() -> None:
    arches = {entry["architecture"]: entry["subArchitectures"] for entry in seccomp_profile()["archMap"]}
    assert arches == {"SCMP_ARCH_X86_64": [], "SCMP_ARCH_AARCH64": []}


@pytest.mark.parametrize(
    "name",
    [
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "unshare",
        "setns",
        "mount",
        "umount2",
        "pivot_root",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "open_by_handle_at",
        "name_to_handle_at",
    ],
)
def test_high_risk_calls_have_no_allow_rule(name: str) -> None:
    assert name in DENIED
    assert name not in ALLOWED
    assert rules_for(name) == [], f"{name} must fall through to the default EPERM"


def test_denied_and_allowed_are_disjoint() -> None:
    assert ALLOWED.isdisjoint(DENIED)
    assert unconditionally_allowed() == ALLOWED


def test_clone3_returns_enosys_so_glibc_falls_back_to_clone() -> None:
    (rule,) = rules_for("clone3")
    assert rule == {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS}
    assert ENOSYS == 38


def test_clone_is_allowed_only_without_namespace_flags() -> None:
    (rule,) = rules_for("clone")
    assert rule["action"] == "SCMP_ACT_ALLOW"
    (arg,) = rule["args"]
    assert arg == {"index": 0, "op": "SCMP_CMP_MASKED_EQ", "value": CLONE_NAMESPACE_FLAGS, "valueTwo": 0}
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert CLONE_NAMESPACE_FLAGS & flag, hex(flag)
    # What threads, fork and posix_spawn pass must get through.
    thread_flags = 0x3D0F00  # CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
    for flags in (thread_flags, 0x01200011, 0x4111):  # threads, fork(), posix_spawn (CLONE_VM|CLONE_VFORK|SIGCHLD)
        assert flags & CLONE_NAMESPACE_FLAGS == 0, hex(flags)


def test_personality_allows_only_the_default_persona_and_the_query() -> None:
    rules = rules_for("personality")
    assert {rule["action"] for rule in rules} == {"SCMP_ACT_ALLOW"}
    values = sorted(arg["value"] for rule in rules for arg in rule["args"] if arg["op"] == "SCMP_CMP_EQ")
    assert values == [0, 0xFFFFFFFF]
    assert all(len(rule["args"]) == 1 and rule["args"][0]["index"] == 0 for rule in rules)


@pytest.mark.parametrize(
    "name",
    [
        # What CPython, threads, subprocess (close_range, vfork/clone), multiprocessing, asyncio and pytest call.
        "read",
        "write",
        "openat",
        "close_range",
        "newfstatat",
        "statx",
        "getrandom",
        "futex",
        "rseq",
        "set_robust_list",
        "execve",
        "wait4",
        "pipe2",
        "epoll_wait",
        "socketpair",
        "mknodat",
        "prlimit64",
        "sched_getaffinity",
        "pidfd_open",
        "shmget",
        "mq_open",
    ],
)
def test_what_python_needs_is_allowed(name: str) -> None:
    assert name in ALLOWED


@pytest.mark.skipif(not UNISTD_64.exists(), reason="no x86_64 kernel headers here to check names against")
def test_every_name_is_a_real_x86_64_system_call() -> None:
    known = set(re.findall(r"#define __NR_(\w+) \d+", UNISTD_64.read_text()))
    named = {name for rule in seccomp_profile()["syscalls"] for name in rule["names"]} | DENIED
    assert named - known - NEWER_THAN_HEADERS == set(), "typo, or a call that does not exist"


def test_profile_json_round_trips_and_is_cached() -> None:
    assert json.loads(seccomp_profile_json()) == seccomp_profile()
    assert seccomp_profile_json() is seccomp_profile_json()


# --- the container spec --------------------------------------------------------------------------------------------


def make_spec(shape: ContainerShape) -> dict[str, Any]:
    return container_spec("img", shape, kind="job", command=["true"], environment={}, owner="o", labels={})


def test_spec_passes_no_new_privileges_and_the_profile_inline() -> None:
    spec = make_spec(ContainerShape(256, 64, 0.5, 32))
    no_new_privileges, seccomp = spec["security_opt"]
    assert no_new_privileges == "no-new-privileges"
    assert seccomp.startswith("seccomp=") and json.loads(seccomp.removeprefix("seccomp=")) == seccomp_profile()


def test_spec_turns_core_dumps_off_for_good() -> None:
    ulimits = {u["Name"]: (u["Soft"], u["Hard"]) for u in make_spec(ContainerShape(256, 64, 0.5, 32))["ulimits"]}
    assert ulimits["core"] == (0, 0)


# --- the clamp -----------------------------------------------------------------------------------------------------

HOST = HostResources(memory_mb=8000, cpus=4)


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget which clamps were already logged, so each test sees its own WARNING."""
    monkeypatch.setattr(_docker_spec, "_CLAMPS_LOGGED", set())


def test_huge_requests_are_clamped_to_the_host_share(fresh_warnings: None, caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits(memory_mb=TEN_TB_MB, cpus=64, pids=99, disk_mb=77)
    with caplog.at_level(logging.WARNING, logger=_docker_spec.__name__):
        shape = ContainerShape.of(limits, max_host_share=0.5, host=HOST)
    assert shape == ContainerShape(memory_mb=4000, pids=99, cpus=2.0, disk_mb=77)
    messages = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(messages) == 2
    assert any(str(TEN_TB_MB) in m and "4000" in m and "memory_mb" in m and "max_host_share=0.5" in m for m in messages)
    assert any("cpus of 64" in m and "2.0" in m for m in messages)


def test_the_clamp_warns_once_per_distinct_clamp(fresh_warnings: None, caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits(memory_mb=TEN_TB_MB)
    with caplog.at_level(logging.WARNING, logger=_docker_spec.__name__):
        for _ in range(3):
            ContainerShape.of(limits, max_host_share=0.5, host=HOST)
        ContainerShape.of(Limits(memory_mb=TEN_TB_MB - 1), max_host_share=0.5, host=HOST)
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2


def test_requests_within_the_share_are_untouched(fresh_warnings: None, caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits(memory_mb=4000, cpus=2.0)
    with caplog.at_level(logging.WARNING, logger=_docker_spec.__name__):
        shape = ContainerShape.of(limits, max_host_share=0.5, host=HOST)
    assert (shape.memory_mb, shape.cpus) == (4000, 2.0)
    assert caplog.records == []


def test_the_clamp_keeps_usable_floors(fresh_warnings: None) -> None:
    tiny = HostResources(memory_mb=40, cpus=1)
    shape = ContainerShape.of(Limits(memory_mb=512, cpus=1), max_host_share=0.01, host=tiny)
    assert (shape.memory_mb, shape.cpus) == (32, 0.01)


def test_unknown_host_resources_clamp_nothing(fresh_warnings: None) -> None:
    shape = ContainerShape.of(Limits(memory_mb=TEN_TB_MB, cpus=64), host=HostResources(None, None))
    assert (shape.memory_mb, shape.cpus) == (TEN_TB_MB, 64)


def test_equal_clamped_requests_share_a_warm_shape(fresh_warnings: None) -> None:
    one = ContainerShape.of(Limits(memory_mb=TEN_TB_MB, cpus=64), host=HOST)
    other = ContainerShape.of(Limits(memory_mb=TEN_TB_MB // 2, cpus=32), host=HOST)
    assert one == other


def test_host_resources_read_this_machine() -> None:
    host = HostResources.current()
    assert host.cpus is not None and host.cpus >= 1
    assert host.memory_mb is not None and host.memory_mb > 0
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        total_kb = int(
            next(line for line in meminfo.read_text().splitlines() if line.startswith("MemTotal:")).split()[1]
        )
        assert host.memory_mb == total_kb // 1024


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5])
def test_max_host_share_must_be_a_share(share: float) -> None:
    with pytest.raises(pydantic.ValidationError):
        SandboxSettings(max_host_share=share)


class RecordingContainers:
    """``client.containers`` that records each spec and refuses to create anything."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []

    def create(self, **spec: Any) -> None:
        self.created.append(spec)
        raise docker.errors.APIError("refused by the test")


class RecordingClient:
    def __init__(self) -> None:
        self.containers = RecordingContainers()

    def close(self) -> None:
        pass


async def test_warm_and_fresh_containers_both_get_the_configured_clamp(fresh_warnings: None) -> None:
    client = RecordingClient()
    settings = SandboxSettings(image="debatecode/test:1", pool_size=1, sweep_on_start=False, max_host_share=0.25)
    sandbox = DockerSandbox(settings, client=client)
    try:
        with pytest.raises(SandboxError):
            await sandbox.run(ExecJob(argv=["true"], limits=Limits(memory_mb=TEN_TB_MB, cpus=64)))
    finally:
        await sandbox.aclose()
    host = HostResources.current()
    assert host.memory_mb is not None and host.cpus is not None
    kinds = {spec["labels"]["debatecode.kind"] for spec in client.containers.created}
    assert kinds == {"pool", "job"}, "the job was tried in a warm container, then in a fresh one"
    for spec in client.containers.created:
        assert spec["mem_limit"] == spec["memswap_limit"] == f"{max(32, int(host.memory_mb * 0.25))}m"
        assert spec["nano_cpus"] <= host.cpus * 0.25 * 1_000_000_000
