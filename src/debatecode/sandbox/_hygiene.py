"""Container hygiene: who owns a container, the orphan sweep, the TTL reaper.

Every container is labelled with its owner: this machine's boot id, the
owner's PID namespace, its pid and its start time. Together these name one
process for the life of the machine, even after its pid is reused. The sweep
removes a ``debatecode`` container, with its anonymous volumes, when

- its owner is dead: another boot, or same PID namespace and no process with
  that pid and start time; or
- it is a fresh job container past its ``debatecode.expires`` time; or
- its owner cannot be checked from here (another PID namespace, or no owner
  label: a container made by an older debatecode) and it is older than
  ``foreign_max_age_s``.

So a sweep never touches the containers of another live debatecode process on
the same machine, unless they have outlived any job they could be running.

The reaper is the in-process side: a daemon thread that kills containers this
process made once they pass their deadline, in case the code that should have
removed them is stuck.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from debatecode.sandbox._docker_spec import EXPIRES_LABEL, LABEL, OWNER_LABEL
from debatecode.sandbox._host_clock import HOST_CLOCK, RunningClock

__all__ = ["ContainerReaper", "OwnerToken", "SweepReport", "sweep_orphans"]

logger = logging.getLogger(__name__)

FOREIGN_MAX_AGE_S = 6 * 3600.0
_CURRENT: dict[int, OwnerToken] = {}
"""Age past which a container whose owner cannot be checked from here is an orphan."""


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def _start_ticks(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (field 22 of ``/proc/<pid>/stat``), or None."""
    try:
        stat = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True)
class OwnerToken:
    """One process on one machine, for the life of that machine's boot."""

    boot_id: str
    pid_namespace: int
    pid: int
    start_ticks: int

    @classmethod
    def current(cls) -> OwnerToken:
        """This process (cached per pid, so a forked child gets its own)."""
        pid = os.getpid()
        token = _CURRENT.get(pid)
        if token is None:
            token = _CURRENT[pid] = cls._of_this_process()
        return token

    @classmethod
    def _of_this_process(cls) -> OwnerToken:
        try:
            boot_id = _read("/proc/sys/kernel/random/boot_id").strip()
        except OSError:
            boot_id = "unknown"
        try:
            namespace = os.stat("/proc/self/ns/pid").st_ino
        except OSError:
            namespace = 0
        pid = os.getpid()
        return cls(boot_id=boot_id, pid_namespace=namespace, pid=pid, start_ticks=_start_ticks(pid) or 0)

    def label(self) -> str:
        return f"{self.boot_id}:{self.pid_namespace}:{self.pid}:{self.start_ticks}"

    @classmethod
    def parse(cls, text: str) -> OwnerToken | None:
        parts = text.split(":")
        if len(parts) != 4:
            return None
        try:
            return cls(boot_id=parts[0], pid_namespace=int(parts[1]), pid=int(parts[2]), start_ticks=int(parts[3]))
        except ValueError:
            return None

    def is_alive(self) -> bool | None:
        """True or False when it can be told from this process; None when it cannot (another PID namespace)."""
        me = OwnerToken.current()
        if self.boot_id != me.boot_id:
            return False
        if self.pid_namespace != me.pid_namespace:
            return None
        return _start_ticks(self.pid) == self.start_ticks


@dataclass
class SweepReport:
    """What a sweep did: container name -> why it was removed or kept."""

    removed: dict[str, str] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def _age_s(attrs: dict[str, Any], now: float) -> float:
    created = str(attrs.get("Created", ""))
    try:
        stamp = datetime.fromisoformat(created[:26].rstrip("Z") + "+00:00" if created else "")
    except ValueError:
        return 0.0
    return max(0.0, now - stamp.timestamp())


def orphan_reason(labels: dict[str, str], age_s: float, now: float, foreign_max_age_s: float) -> str:
    """Why a container is an orphan, or "" when it must be kept."""
    expires = labels.get(EXPIRES_LABEL)
    if expires and expires.isdigit() and now > int(expires):
        return "outlived its job (past debatecode.expires)"
    owner = OwnerToken.parse(labels.get(OWNER_LABEL, ""))
    alive = owner.is_alive() if owner is not None else None
    if alive is False:
        return "its owner process is gone"
    if alive is None and age_s > foreign_max_age_s:
        return f"owner unknown from here and older than {foreign_max_age_s:.0f}s"
    return ""


def sweep_orphans(
    client: Any,
    *,
    foreign_max_age_s: float = FOREIGN_MAX_AGE_S,
    everything: bool = False,
    dry_run: bool = False,
) -> SweepReport:
    """Remove orphaned ``debatecode`` containers (and their anonymous volumes) and labelled volumes.

    ``everything`` removes every ``debatecode`` container, live owners included.
    Never raises for a single container; engine errors on listing propagate.

    Raises:
        docker.errors.DockerException, requests.exceptions.RequestException: the engine cannot list containers.
    """
    import docker.errors
    import requests.exceptions

    now = time.time()
    report = SweepReport()
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        labels = dict(container.labels or {})
        reason = "--all" if everything else orphan_reason(labels, _age_s(container.attrs, now), now, foreign_max_age_s)
        name = str(container.name)
        if not reason:
            report.kept[name] = "its owner is alive" if labels.get(OWNER_LABEL) else "recent, owner unknown"
            continue
        if dry_run:
            report.removed[name] = reason
            continue
        try:
            container.remove(force=True, v=True)
            report.removed[name] = reason
        except docker.errors.NotFound:
            report.removed[name] = reason
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            report.failed[name] = str(exc)
    for volume in client.volumes.list(filters={"label": LABEL}):
        labels = dict(volume.attrs.get("Labels") or {})
        reason = "--all" if everything else orphan_reason(labels, 0.0, now, foreign_max_age_s)
        if reason and not dry_run:
            with contextlib.suppress(docker.errors.DockerException, requests.exceptions.RequestException):
                volume.remove(force=True)
        (report.removed if reason else report.kept)[f"volume:{volume.name}"] = reason or "its owner is alive"
    if report.removed:
        logger.info("sandbox sweep removed %d orphaned containers or volumes", len(report.removed))
    return report


class ContainerReaper:
    """Kills containers of this process that pass their deadline, from one daemon thread.

    Deadlines run on the host's running time (``RunningClock``): while this process is
    stopped, no container's time runs out.

    Args:
        kill: removes a container by id; called from the reaper thread, must not raise.
        clock: the running time deadlines are measured on.
    """

    def __init__(self, kill: Callable[[str], None], clock: RunningClock = HOST_CLOCK) -> None:
        self._kill = kill
        self._clock = clock
        self._deadlines: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.reaped: list[str] = []
        """Ids of containers the reaper had to kill (for logs and tests)."""

    def watch(self, container_id: str, within_s: float) -> None:
        """Kill ``container_id`` once ``within_s`` seconds of running time have passed, unless unwatched first."""
        deadline = self._clock.now() + within_s
        with self._wake:
            self._deadlines[container_id] = deadline
            heapq.heappush(self._heap, (deadline, container_id))
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._loop, name="debatecode-sandbox-reaper", daemon=True)
                self._thread.start()
            self._wake.notify()

    def unwatch(self, container_id: str) -> None:
        with self._wake:
            self._deadlines.pop(container_id, None)

    def close(self) -> None:
        """Stop the thread; containers still watched are left to their owner's cleanup."""
        with self._wake:
            self._closed = True
            self._deadlines.clear()
            self._wake.notify()

    def _due(self) -> list[str]:
        now = self._clock.now()
        due: list[str] = []
        while self._heap and self._heap[0][0] <= now:
            deadline, container_id = heapq.heappop(self._heap)
            if self._deadlines.get(container_id) == deadline:
                del self._deadlines[container_id]
                due.append(container_id)
        return due

    def _loop(self) -> None:
        while True:
            with self._wake:
                if self._closed:
                    return
                due = self._due()
                if not due:
                    # A stop of this process holds the clock still: look again at least every second.
                    wait = min(1.0, max(0.0, self._heap[0][0] - self._clock.now())) if self._heap else None
                    self._wake.wait(wait)
                    continue
            for container_id in due:
                logger.warning("sandbox container %s outlived its deadline; the reaper removes it", container_id[:12])
                self.reaped.append(container_id)
                self._kill(container_id)
