"""Per-job cgroups for the local backend: one job's memory (swap included) and process count, as a whole.

Where the cgroup tree is writable (root, cgroup v1 or v2), each job gets its own
cgroup, created as a child of the caller's own cgroup so that whatever limits
debatecode itself runs under still hold for its jobs:
``<memory hierarchy>/<own cgroup>/debatecode-job-<pidns>-<pid>-<hex>`` and the
same under the pids hierarchy (v1), or one such directory with ``memory.max``,
``memory.swap.max`` and ``pids.max`` (v2). The job's first process joins it
before it execs (``cgroup_procs`` in the ``preexec_fn``), so every process of
the job is inside from the start. After the job, whatever is left in it is
killed and the directories are removed.

Where it is not writable, ``systemd-run --scope`` does the same when a systemd
manager answers (``--user`` for non-root callers). Otherwise there is no per-job
cgroup and the per-process rlimits are all that remain; ``CgroupSupport.detail``
says why.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from typing import Literal

from debatecode.sandbox.base import Limits

__all__ = ["CgroupSupport", "JobCgroup", "probe_cgroups"]

logger = logging.getLogger(__name__)

CgroupKind = Literal["v1", "v2", "systemd", "none"]
_PREFIX = "debatecode-job-"
_MIB = 1024 * 1024
EXTRA_PIDS = 3
"""Processes the local backend adds to a bubblewrap job: bubblewrap's two and the runner."""


@dataclass(frozen=True)
class CgroupSupport:
    """How this process can give a job its own cgroup."""

    kind: CgroupKind
    detail: str
    """What is used (``cgroup v1: memory+swap, pids``) or why nothing is (then rlimits only)."""
    memory_parent: str = ""
    """The directory job cgroups are made in (v1: in the memory hierarchy; v2: the one directory)."""
    pids_parent: str = ""
    """v1 only: the directory in the pids hierarchy (empty: no pids controller mounted)."""
    systemd_run: tuple[str, ...] = ()
    """The ``systemd-run ... --scope`` command, for kind ``systemd``."""

    @property
    def enforced(self) -> bool:
        return self.kind != "none"


@dataclass
class JobCgroup:
    """One job's cgroup directories. Create with ``JobCgroup.create``; ``remove`` when the job is over."""

    kind: CgroupKind
    dirs: tuple[str, ...] = ()
    command_prefix: list[str] = field(default_factory=list)
    """Put in front of the job's command (``systemd-run --scope``), for kind ``systemd``."""

    @classmethod
    def create(
        cls, support: CgroupSupport, limits: Limits, *, uid: int | None = None, extra_pids: int = EXTRA_PIDS
    ) -> JobCgroup:
        """Make the cgroup(s) of one job, with its limits set.

        ``uid``: for kind ``systemd``, the uid ``systemd-run`` switches the job to
        (a scope is registered by its caller, so the caller cannot drop it first).
        ``extra_pids``: the processes of the backend's own in the cgroup, on top of ``limits.pids``.

        Raises:
            OSError: the cgroup tree refused a directory or a limit (the directories made so far are removed).
        """
        memory = limits.memory_mb * _MIB
        pids = limits.pids + extra_pids
        if support.kind == "systemd":
            properties = [f"MemoryMax={memory}", "MemorySwapMax=0", f"TasksMax={pids}"]
            prefix = [*support.systemd_run]
            if uid is not None:
                prefix += [f"--uid={uid}", f"--gid={uid}"]
            for prop in properties:
                prefix += ["-p", prop]
            return cls("systemd", command_prefix=[*prefix, "--"])
        if support.kind == "none":
            return cls("none")
        name = _job_name()
        job = cls(support.kind)
        try:
            if support.kind == "v1":
                job.dirs = (_make(support.memory_parent, name),)
                _write(job.dirs[0], "memory.limit_in_bytes", memory)
                _write(job.dirs[0], "memory.memsw.limit_in_bytes", memory, optional=True)
                if support.pids_parent:
                    job.dirs += (_make(support.pids_parent, name),)
                    _write(job.dirs[1], "pids.max", pids)
            else:
                job.dirs = (_make(support.memory_parent, name),)
                _write(job.dirs[0], "memory.max", memory)
                _write(job.dirs[0], "memory.swap.max", 0, optional=True)
                _write(job.dirs[0], "pids.max", pids)
        except OSError:
            job.remove(wait_s=0.5)
            raise
        return job

    @property
    def limits_pids(self) -> bool:
        """The job's process count is capped as a whole (a pids controller, or systemd's TasksMax)."""
        return self.kind in ("v2", "systemd") or (self.kind == "v1" and len(self.dirs) == 2)

    @property
    def cgroup_procs(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files the job's first process writes its pid into before it execs."""
        return tuple(os.path.join(path, "cgroup.procs") for path in self.dirs)

    def oom_kills(self) -> int | None:
        """How many processes the kernel's OOM killer killed in this cgroup, or None where that cannot be told."""
        if not self.dirs:
            return None
        counters = "memory.oom_control" if self.kind == "v1" else "memory.events"
        try:
            with open(os.path.join(self.dirs[0], counters)) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            return None
        return None

    def kill(self) -> None:
        """SIGKILL every process in the cgroup now (one round; ``remove`` repeats until it is empty)."""
        for path in self.dirs:
            _kill_members(path)

    def remove(self, wait_s: float = 0.0) -> bool:
        """Kill whatever is still in the cgroup and remove its directories; True once they are gone.

        Tries once, then keeps trying for up to ``wait_s`` seconds (processes take a moment to exit).
        """
        deadline = time.monotonic() + wait_s
        while True:
            self.dirs = tuple(path for path in self.dirs if not _kill_and_rmdir(path))
            if not self.dirs or time.monotonic() >= deadline:
                return not self.dirs
            time.sleep(0.005)


def _job_name() -> str:
    return f"{_PREFIX}{_pid_namespace()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _make(parent: str, name: str) -> str:
    path = os.path.join(parent, name)
    os.mkdir(path, 0o755)
    return path


def _write(directory: str, name: str, value: int, *, optional: bool = False) -> None:
    path = os.path.join(directory, name)
    if optional and not os.path.exists(path):
        return
    with open(path, "w") as handle:
        handle.write(str(value))


def _members(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as handle:
            return [int(line) for line in handle if line.strip()]
    except (OSError, ValueError):
        return []


def _kill_members(path: str) -> None:
    members = _members(path)
    if members and os.path.exists(os.path.join(path, "cgroup.kill")):
        with contextlib.suppress(OSError), open(os.path.join(path, "cgroup.kill"), "w") as handle:
            handle.write("1")
    for pid in members:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _kill_and_rmdir(path: str) -> bool:
    """One round: SIGKILL every member, then try to remove the directory. True when it is gone."""
    _kill_members(path)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount root, mount point, super options) of every cgroup mount."""
    found: list[tuple[str, str, str, set[str]]] = []
    try:
        with open("/proc/self/mountinfo") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((tail[0], fields[3], fields[4], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """Controller (``""`` for v2) -> this process's cgroup path, from ``/proc/self/cgroup``."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                _hierarchy, _, rest = line.rstrip("\n").partition(":")
                controllers, _, path = rest.partition(":")
                for controller in controllers.split(",") if controllers else [""]:
                    paths[controller] = path
    except OSError:
        pass
    return paths


def _locate(root: str, mount_point: str, own: str) -> str:
    relative = own[len(root) :] if root != "/" and (own == root or own.startswith(root + "/")) else own
    return os.path.normpath(mount_point + "/" + relative.lstrip("/"))


def _direct_support() -> CgroupSupport:
    """v1 (memory, and pids when mounted) or v2 directories under this process's own cgroup, if writable."""
    own = _own_paths()
    mounts = _mounts()
    v1 = {controller: (root, point) for kind, root, point, opts in mounts if kind == "cgroup" for controller in opts}
    if "memory" in v1 and "memory" in own:
        memory_parent = _locate(*v1["memory"], own["memory"])
        pids_parent = _locate(*v1["pids"], own["pids"]) if "pids" in v1 and "pids" in own else ""
        what = "memory+swap, pids" if pids_parent else "memory+swap (no pids controller mounted)"
        return CgroupSupport("v1", f"cgroup v1 ({what})", memory_parent, pids_parent)
    unified = [(root, point) for kind, root, point, _opts in mounts if kind == "cgroup2"]
    if unified and "" in own:
        parent = _locate(*unified[0], own[""])
        try:
            with open(os.path.join(parent, "cgroup.subtree_control")) as handle:
                enabled = set(handle.read().split())
        except OSError as exc:
            return CgroupSupport("none", f"cgroup v2 at {parent} is not readable: {exc.strerror}")
        missing = {"memory", "pids"} - enabled
        if missing:
            try:
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as handle:
                    handle.write(" ".join(f"+{name}" for name in sorted(missing)))
            except OSError as exc:
                return CgroupSupport(
                    "none",
                    f"cgroup v2: cannot enable {'+'.join(sorted(missing))} below {parent} ({exc.strerror}; "
                    "a cgroup that holds processes cannot delegate controllers)",
                )
        return CgroupSupport("v2", "cgroup v2 (memory+swap, pids)", parent)
    return CgroupSupport("none", "no cgroup memory controller is mounted")


def _systemd_support(why: str) -> CgroupSupport:
    systemd_run = shutil.which("systemd-run")
    if systemd_run is None:
        return CgroupSupport("none", f"{why}; systemd-run is not available")
    command = (systemd_run, *(() if os.geteuid() == 0 else ("--user",)), "--scope", "--quiet", "--collect")
    probe = [*command, "-p", "MemoryMax=67108864", "-p", "MemorySwapMax=0", "-p", "TasksMax=16", "--", "true"]
    try:
        completed = subprocess.run(probe, capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return CgroupSupport("none", f"{why}; systemd-run failed: {exc}")
    if completed.returncode != 0:
        output = (completed.stderr or completed.stdout).strip().splitlines()
        return CgroupSupport("none", f"{why}; systemd-run --scope failed: {output[-1] if output else 'no output'}")
    return CgroupSupport("systemd", "systemd-run --scope (memory+swap, pids)", systemd_run=command)


@functools.cache
def probe_cgroups() -> CgroupSupport:
    """Find out once how jobs get their own cgroup here, and remove job cgroups that dead owners left behind."""
    support = _direct_support()
    if support.enforced:
        try:
            trial = JobCgroup.create(support, Limits())
        except OSError as exc:
            support = CgroupSupport("none", f"{support.detail} is not writable here: {exc.strerror or exc}")
        else:
            trial.remove(wait_s=1.0)
            _sweep(support)
    if not support.enforced:
        support = _systemd_support(support.detail)
    return support


def _sweep(support: CgroupSupport) -> None:
    """Remove job cgroups of this PID namespace whose owner process is gone (killing what is left in them)."""
    namespace = f"{_PREFIX}{_pid_namespace()}-"
    for parent in (support.memory_parent, support.pids_parent):
        if not parent:
            continue
        with contextlib.suppress(OSError):
            for name in os.listdir(parent):
                if not name.startswith(namespace):
                    continue
                owner = name[len(namespace) :].split("-", 1)[0]
                if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                    stale = JobCgroup(support.kind, (os.path.join(parent, name),))
                    if not stale.remove(wait_s=1.0):
                        logger.warning("could not remove the stale job cgroup %s", os.path.join(parent, name))
