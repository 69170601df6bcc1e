"""What a sandbox container looks like: its hardening, labels and name.

One place for the container spec, so that fresh job containers and warm pool
containers are locked down the same way:

- no network (``network_mode=none``), a private IPC namespace;
- every capability dropped, ``no-new-privileges``, uid 10001 (not root);
- a read-only root; size-capped tmpfs mounts for ``/work``, ``/tmp`` and ``/dev/shm``;
- cgroup limits: memory equal to memory+swap, a pids limit, a CPU quota;
- ulimits on open files and on file size.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from docker.types import Ulimit

from debatecode.sandbox.base import Limits

__all__ = [
    "EXPIRES_LABEL",
    "JOB_LABEL",
    "KIND_LABEL",
    "LABEL",
    "OWNER_LABEL",
    "SANDBOX_UID",
    "ContainerShape",
    "container_spec",
]

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

ContainerKind = Literal["job", "pool"]


@dataclass(frozen=True)
class ContainerShape:
    """The limits fixed when a container is created; jobs share a warm container only when these match."""

    memory_mb: int
    pids: int
    cpus: float
    disk_mb: int

    @classmethod
    def of(cls, limits: Limits) -> ContainerShape:
        return cls(memory_mb=limits.memory_mb, pids=limits.pids, cpus=limits.cpus, disk_mb=limits.disk_mb)


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
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            Ulimit(name="nofile", soft=NOFILE, hard=NOFILE),
            Ulimit(name="fsize", soft=file_size, hard=file_size),
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
