"""What a sandbox container looks like: its hardening, labels and name.

One place for the container spec, so that fresh job containers and warm pool
containers are locked down the same way:

- no network (``network_mode=none``), a private IPC namespace;
- every capability dropped, ``no-new-privileges``, uid 10001 (not root);
- debatecode's own seccomp allowlist (``_seccomp.py``): no io_uring, key rings,
  eBPF, perf events, userfaultfd, ptrace, namespaces or mounts;
- a read-only root; size-capped tmpfs mounts for ``/work``, ``/tmp`` and ``/dev/shm``;
- cgroup limits: memory equal to memory+swap, a pids limit, a CPU quota, the
  memory and CPU clamped to ``max_host_share`` of this machine (``ContainerShape.of``);
- ulimits on open files and on file size, and no core dumps (soft = hard = 0).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from docker.types import Ulimit

from debatecode.sandbox._seccomp import seccomp_profile_json
from debatecode.sandbox.base import Limits
from debatecode.sandbox.settings import SandboxSettings

__all__ = [
    "EXPIRES_LABEL",
    "JOB_LABEL",
    "KIND_LABEL",
    "LABEL",
    "OWNER_LABEL",
    "SANDBOX_UID",
    "ContainerShape",
    "HostResources",
    "container_spec",
]

logger = logging.getLogger(__name__)

LABEL = "debatecode"
"""Every sandbox container carries ``debatecode=1``."""
OWNER_LABEL = "debatecode.owner"
"""The owning process (``boot id:pid namespace:pid:start time``), see ``_hygiene.OwnerToken``."""
KIND_LABEL = "debatecode.kind"
"""``job`` (a fresh container for one job) or ``pool`` (a warm container)."""
JOB_LABEL = "debatecode.job"
EXPIRES_LABEL = "debatecode.expires"
"""Unix time after which a ``job`` container has outlived its job, whoever owns it."""
SANDBOX_UID = "10001:10001"
NOFILE = 1024
MIN_TMP_MB = 16
MIN_MEMORY_MB = 32
"""A clamped memory limit never goes below ``Limits``' own floor."""
MIN_CPUS = 0.01
"""The smallest CPU quota Docker accepts."""
DEFAULT_MAX_HOST_SHARE: float = SandboxSettings.model_fields["max_host_share"].default

ContainerKind = Literal["job", "pool"]


@dataclass(frozen=True)
class ContainerShape:
    """The limits fixed when a container is created; jobs share a warm container only when these match."""

    memory_mb: int
    pids: int
    cpus: float
    disk_mb: int

    @classmethod
    def of(
        cls, limits: Limits, *, max_host_share: float = DEFAULT_MAX_HOST_SHARE, host: HostResources | None = None
    ) -> ContainerShape:
        """The shape of a container for jobs with ``limits``.

        Memory and CPUs are clamped to ``max_host_share`` of ``host`` (default: this
        machine), so that no job can ask for the whole host; each distinct clamp is
        logged once, as a WARNING.
        """
        host = host or HostResources.current()
        memory_mb, cpus = limits.memory_mb, limits.cpus
        if host.memory_mb is not None:
            cap_mb = max(MIN_MEMORY_MB, int(host.memory_mb * max_host_share))
            if memory_mb > cap_mb:
                _warn_clamped("memory_mb", memory_mb, cap_mb, max_host_share, f"{host.memory_mb} MiB of memory")
                memory_mb = cap_mb
        if host.cpus is not None:
            cap_cpus = max(MIN_CPUS, math.floor(host.cpus * max_host_share * 100) / 100)
            if cpus > cap_cpus:
                _warn_clamped("cpus", cpus, cap_cpus, max_host_share, f"{host.cpus} CPUs")
                cpus = cap_cpus
        return cls(memory_mb=memory_mb, pids=limits.pids, cpus=cpus, disk_mb=limits.disk_mb)


@dataclass(frozen=True)
class HostResources:
    """The memory and CPUs of the machine, which container requests are clamped against (``None``: unknown)."""

    memory_mb: int | None
    cpus: int | None

    @staticmethod
    @functools.cache
    def current() -> HostResources:
        """This machine's resources: ``MemTotal`` of ``/proc/meminfo`` and the CPU count (read once)."""
        return HostResources(memory_mb=_host_memory_mb(), cpus=os.cpu_count())


def _host_memory_mb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                name, _, value = line.partition(":")
                if name == "MemTotal":
                    return int(value.split()[0]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (OSError, ValueError, AttributeError):
        return None


_CLAMPS_LOGGED: set[tuple[str, float, float]] = set()


def _warn_clamped(name: str, requested: float, allowed: float, share: float, host: str) -> None:
    key = (name, requested, allowed)
    if key in _CLAMPS_LOGGED:
        return
    _CLAMPS_LOGGED.add(key)
    logger.warning(
        "sandbox %s of %s clamped to %s: a container gets at most sandbox.max_host_share=%s of this host's %s",
        name,
        requested,
        allowed,
        share,
        host,
    )


def container_spec(
    image: str,
    shape: ContainerShape,
    *,
    kind: ContainerKind,
    command: list[str],
    environment: Mapping[str, str],
    owner: str,
    labels: Mapping[str, str],
    expires_at: float | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.create``: a locked-down sandbox container.

    ``pool`` containers keep stdin open for the host's requests and close it when the
    host's connection drops (``stdin_open`` without ``detach`` sets the engine's
    ``StdinOnce``), keep no log and remove themselves when they exit. ``job`` containers keep their log, which holds the runner's result.
    """
    memory = f"{shape.memory_mb}m"
    file_size = shape.disk_mb * 1024 * 1024
    token = uuid.uuid4().hex
    all_labels = {
        **labels,
        LABEL: "1",
        KIND_LABEL: kind,
        OWNER_LABEL: owner,
        JOB_LABEL: token,
    }
    if expires_at is not None:
        all_labels[EXPIRES_LABEL] = str(int(expires_at))
    spec: dict[str, Any] = {
        "image": image,
        "command": command,
        "environment": dict(environment),
        "name": f"debatecode-{kind}-{token[:12]}",
        "labels": all_labels,
        "network_mode": "none",
        "ipc_mode": "private",
        "user": SANDBOX_UID,
        "read_only": True,
        "tmpfs": {
            "/work": f"size={shape.disk_mb}m,mode=1777,exec",
            "/tmp": f"size={max(MIN_TMP_MB, shape.disk_mb // 2)}m,mode=1777",
        },
        "shm_size": f"{max(MIN_TMP_MB, shape.disk_mb // 2)}m",
        "working_dir": "/work",
        "mem_limit": memory,
        "memswap_limit": memory,
        "pids_limit": shape.pids,
        "nano_cpus": int(shape.cpus * 1_000_000_000),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges", f"seccomp={seccomp_profile_json()}"],
        "ulimits": [
            Ulimit(name="nofile", soft=NOFILE, hard=NOFILE),
            Ulimit(name="fsize", soft=file_size, hard=file_size),
            # No core dumps: with a file core_pattern a crash would write its memory into /work; pipe handlers
            # (systemd-coredump, apport) are told the limit and store nothing. hard = 0: the job cannot raise it.
            Ulimit(name="core", soft=0, hard=0),
        ],
        "tty": False,
    }
    if kind == "pool":
        spec.update(stdin_open=True, auto_remove=True, log_config={"type": "none", "config": {}})
    else:
        spec.update(stdin_open=False)
    return spec


def job_expiry(timeout_s: float, grace_s: float, margin_s: float) -> float:
    """When a fresh job container has outlived its job (Unix time)."""
    return time.time() + timeout_s + grace_s + margin_s
