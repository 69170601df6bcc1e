"""How the local backend confines a job: bubblewrap arguments, rlimits, the probes.

Kept apart from ``local.py`` so that the process plumbing there stays short.
Everything here is decided once per interpreter path and cached.
"""

from __future__ import annotations

import functools
import math
import os
import resource
import shutil
import site
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from debatecode.sandbox.base import Limits

__all__ = ["NOBODY", "IsolationProbe", "bwrap_command", "make_preexec", "probe_isolation"]

NOBODY = 65534
_MASKED_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers")
_DROP_AND_IMPORT = f"import os; os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY}); import pytest"
_TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


@dataclass(frozen=True)
class IsolationProbe:
    """What this machine allows for local jobs run with ``python``."""

    python: str
    bwrap: str | None
    """Path of a working ``bwrap``, or None."""
    bwrap_version: str
    bwrap_size: bool
    """``bwrap --size`` is supported (size-capped tmpfs)."""
    bwrap_problem: str
    """Why bubblewrap is not used (empty when it is)."""
    drop_to_nobody: bool
    """Running as root, and ``python`` works as uid 65534: plain jobs drop to it."""
    pytest_problem: str
    """Why ``python`` cannot import pytest (empty when it can)."""


def python_roots(python: str) -> list[str]:
    """Directories the interpreter needs, outside /usr and /etc (venv, pyenv, site-packages)."""
    candidates = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.abspath(python)),
        os.path.dirname(os.path.realpath(python)),
        *site.getsitepackages(),
    }
    roots: list[str] = []
    for path in sorted(os.path.realpath(p) for p in candidates if p):
        if not os.path.isdir(path) or path.startswith(("/usr/", "/etc/")) or path in ("/", "/usr", "/etc"):
            continue
        if any(path == root or path.startswith(root + os.sep) for root in roots):
            continue
        roots.append(path)
    # Also keep the unresolved venv paths reachable, so the interpreter finds pyvenv.cfg next to its symlink.
    for path in sorted({sys.prefix, os.path.dirname(os.path.abspath(python))}):
        if os.path.isdir(path) and not any(path == r or path.startswith(r + os.sep) for r in roots):
            roots.append(path)
    return roots


def bwrap_command(
    bwrap: str,
    python: str,
    workdir: str,
    limits: Limits,
    *,
    size_ok: bool,
) -> list[str]:
    """The ``bwrap`` argument list that runs ``python`` with the workdir as its only writable host path.

    As root there is no user namespace (root mapped into one would still be host
    root for file access and RLIMIT_NPROC); instead every capability but
    CAP_SETUID/CAP_SETGID is dropped and the runner switches to uid 65534 itself.
    """
    as_root = os.geteuid() == 0
    unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    args = [bwrap, *(unshare if as_root else ["--unshare-all"]), "--die-with-parent", "--new-session"]
    args += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in _TOP_LINKS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for masked in _MASKED_FILES:
        if os.path.exists(masked):
            args += ["--ro-bind", "/dev/null", masked]
    args += ["--dev", "/dev", "--proc", "/proc"]
    if size_ok:
        args += ["--size", str(max(16, limits.disk_mb // 2) * 1024 * 1024)]
    # The fresh /tmp comes before the interpreter binds: a venv or a checkout under /tmp stays visible.
    args += ["--tmpfs", "/tmp"]
    made: set[str] = set()
    for root in python_roots(python):
        args += _parent_dirs(root, made)
        args += ["--ro-bind", root, root]
    args += [*_parent_dirs(workdir, made), "--bind", workdir, workdir, "--chdir", workdir]
    if as_root:
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    args += ["--remount-ro", "/", "--"]
    return args


def _parent_dirs(path: str, made: set[str]) -> list[str]:
    """``--dir`` the missing parents of ``path`` as 0755: bwrap would make them 0700, which uid 65534 cannot cross."""
    args: list[str] = []
    parents = [str(parent) for parent in reversed(Path(path).parents)]
    for parent in parents:
        if parent in ("/", "/tmp", "/usr", "/etc") or parent.startswith(("/usr/", "/etc/")) or parent in made:
            continue
        made.add(parent)
        args += ["--perms", "0755", "--dir", parent]
    return args


def _count_processes(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


def make_preexec(limits: Limits, job_uid: int) -> Callable[[], None]:
    """A ``preexec_fn`` applying the job's rlimits (computed now, applied in the child).

    RLIMIT_NPROC counts every process of the uid, so it is set to the uid's current
    count plus ``limits.pids``, and only for non-root uids (root ignores it).
    """
    megabyte = 1024 * 1024
    cpu = math.ceil(limits.timeout_s) + 1
    settings = [
        (resource.RLIMIT_AS, limits.memory_mb * megabyte),
        (resource.RLIMIT_FSIZE, limits.disk_mb * megabyte),
        (resource.RLIMIT_NOFILE, 1024),
        (resource.RLIMIT_CORE, 0),
    ]
    if job_uid != 0:
        settings.append((resource.RLIMIT_NPROC, _count_processes(job_uid) + limits.pids))

    def apply() -> None:
        for kind, value in settings:
            _soft, hard = resource.getrlimit(kind)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        top = cpu + 1 if hard == resource.RLIM_INFINITY else min(cpu + 1, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, top), top))

    return apply


def _run_quietly(command: list[str], **kwargs: object) -> tuple[bool, str]:
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False, **kwargs)  # type: ignore[call-overload]
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    output = (completed.stderr or completed.stdout).strip()
    return completed.returncode == 0, output.splitlines()[-1] if output else f"exit code {completed.returncode}"


def _help_text(bwrap: str) -> str:
    try:
        return subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


@functools.cache
def probe_isolation(python: str) -> IsolationProbe:
    """Find out once which isolation works here for ``python``."""
    ok, why = _run_quietly([python, "-c", "import pytest"])
    pytest_problem = "" if ok else f"{python} cannot import pytest: {why}"
    bwrap = shutil.which("bwrap")
    version, size_ok, problem = "", False, ""
    if bwrap is None:
        problem = "bwrap is not on PATH (apt-get install bubblewrap)"
    else:
        _ok, version = _run_quietly([bwrap, "--version"])
        size_ok = "--size" in _help_text(bwrap)
        probe_dir = Path(os.environ.get("TMPDIR", "/tmp"))
        command = bwrap_command(bwrap, python, str(probe_dir), Limits(), size_ok=size_ok)
        ok, why = _run_quietly([*command, python, "-c", _DROP_AND_IMPORT if os.geteuid() == 0 else "import pytest"])
        if not ok:
            problem = f"bwrap does not work here: {why}"
            bwrap = None
    drop = False
    if os.geteuid() == 0:
        drop, _why = _run_quietly([python, "-c", "import pytest"], user=NOBODY, group=NOBODY, extra_groups=[], cwd="/")
    return IsolationProbe(
        python=python,
        bwrap=bwrap,
        bwrap_version=version,
        bwrap_size=size_ok,
        bwrap_problem=problem,
        drop_to_nobody=drop,
        pytest_problem=pytest_problem,
    )
