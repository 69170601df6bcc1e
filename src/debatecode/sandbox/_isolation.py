"""How the local backend confines a job: bubblewrap arguments, rlimits, the probes.

Kept apart from ``local.py`` so that the process plumbing there stays short.
Everything here is decided once per interpreter path and cached.
"""

from __future__ import annotations

import functools
import math
import os
import platform
import resource
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from debatecode.errors import SandboxUnavailable
from debatecode.sandbox._seccomp_bpf import job_filter
from debatecode.sandbox.base import Limits

__all__ = ["NOBODY", "IsolationProbe", "bwrap_command", "make_preexec", "probe_isolation", "seccomp_pipe"]

NOBODY = 65534
SECCOMP_MACHINES = ("x86_64", "aarch64")
"""Machines the seccomp filter has syscall numbers for."""
_MIB = 1024 * 1024
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
    seccomp: bool
    """bubblewrap jobs get the seccomp filter (``_seccomp_bpf``)."""
    seccomp_problem: str
    """Why bubblewrap jobs run without the seccomp filter (empty when they have it)."""
    drop_to_nobody: bool
    """Running as root, and ``python`` works as uid 65534: plain jobs drop to it."""
    drop_problem: str
    """Running as root, why ``python`` does not work as uid 65534 (empty otherwise)."""
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
    seccomp_fd: int | None = None,
) -> list[str]:
    """The ``bwrap`` argument list that runs ``python`` with the workdir as its only writable path besides tmpfs.

    As root there is no user namespace (root mapped into one would still be host
    root for file access and RLIMIT_NPROC); instead every capability but
    CAP_SETUID/CAP_SETGID is dropped and the runner switches to uid 65534 itself.

    With ``size_ok`` (``bwrap --size``), the work dir, ``/tmp`` and ``/dev/shm`` are
    size-capped tmpfs (``disk_mb``, and half of it, at least 16 MiB), world-writable
    like Docker's; the runner writes the job's files into the work dir and reads
    ``collect`` back from it, so the host dir at the same path stays empty. Without
    it, the host dir is bound in and only RLIMIT_FSIZE caps it (per file).
    ``seccomp_fd`` is a readable fd holding ``_seccomp_bpf.job_filter()``.
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
    scratch = str(max(16, limits.disk_mb // 2) * _MIB)
    if size_ok:
        args += ["--perms", "1777", "--size", scratch]
    # The fresh /tmp comes before the interpreter binds: a venv or a checkout under /tmp stays visible.
    args += ["--tmpfs", "/tmp"]
    made: set[str] = set()
    for root in python_roots(python):
        args += _parent_dirs(root, made)
        args += ["--ro-bind", root, root]
    args += _parent_dirs(workdir, made)
    if size_ok:
        args += ["--perms", "0777", "--size", str(limits.disk_mb * _MIB), "--tmpfs", workdir]
        args += ["--perms", "1777", "--size", scratch, "--tmpfs", "/dev/shm"]
    else:
        args += ["--bind", workdir, workdir]
    args += ["--chdir", workdir]
    if as_root:
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--remount-ro", "/", "--"]
    return args


def seccomp_pipe() -> int:
    """A pipe's read end holding the compiled job filter, for ``bwrap --seccomp``; the caller closes it.

    The filter is a few hundred bytes, far below a pipe's buffer, so the write never blocks.

    Raises:
        SandboxUnavailable: libseccomp is missing (``probe_isolation`` says so first).
    """
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, job_filter())
    except OSError:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end


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


def make_preexec(
    limits: Limits,
    job_uid: int,
    *,
    cgroup_procs: tuple[str, ...] = (),
    limit_nproc: bool = True,
    drop_uid: int | None = None,
) -> Callable[[], None]:
    """A ``preexec_fn`` that confines the job's first process (computed now, applied in the child).

    In order: it joins the job's cgroups (writing its pid into each of
    ``cgroup_procs``, while still root), applies the rlimits, then switches to
    ``drop_uid`` when given. RLIMIT_NPROC counts every process of the uid, so it
    is set to the uid's current count plus ``limits.pids``, and only with
    ``limit_nproc`` (no pids cgroup) and for non-root uids (root ignores it).
    """
    cpu = math.ceil(limits.timeout_s) + 1
    settings = [
        (resource.RLIMIT_AS, limits.memory_mb * _MIB),
        (resource.RLIMIT_FSIZE, limits.disk_mb * _MIB),
        (resource.RLIMIT_NOFILE, 1024),
        (resource.RLIMIT_CORE, 0),
    ]
    if limit_nproc and job_uid != 0:
        settings.append((resource.RLIMIT_NPROC, _count_processes(job_uid) + limits.pids))

    def apply() -> None:
        # Only plain syscalls here: this runs between fork and exec, where a lock another thread of the
        # host held at fork time (an import, an encoding lookup) would never be released.
        for path in cgroup_procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"%d" % os.getpid())
            finally:
                os.close(fd)
        for kind, value in settings:
            _soft, hard = resource.getrlimit(kind)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        top = cpu + 1 if hard == resource.RLIM_INFINITY else min(cpu + 1, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, top), top))
        if drop_uid is not None:
            os.setgroups([])
            os.setgid(drop_uid)
            os.setuid(drop_uid)

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


def _try_bwrap(bwrap: str, python: str, size_ok: bool, seccomp: bool) -> tuple[bool, str]:
    """Run a probe job in bubblewrap: switch to uid 65534 as root, import pytest, write into the work dir."""
    workdir = tempfile.mkdtemp(prefix="debatecode-probe-")
    seccomp_fd = seccomp_pipe() if seccomp else None
    try:
        command = bwrap_command(bwrap, python, workdir, Limits(), size_ok=size_ok, seccomp_fd=seccomp_fd)
        check = _DROP_AND_IMPORT if os.geteuid() == 0 else "import pytest"
        check += "; open('probe.txt', 'w').write('ok'); import os; os.unlink('probe.txt')"
        fds = () if seccomp_fd is None else (seccomp_fd,)
        return _run_quietly([*command, python, "-c", check], pass_fds=fds)
    finally:
        if seccomp_fd is not None:
            os.close(seccomp_fd)
        shutil.rmtree(workdir, ignore_errors=True)


@functools.cache
def probe_isolation(python: str) -> IsolationProbe:
    """Find out once which isolation works here for ``python``."""
    ok, why = _run_quietly([python, "-c", "import pytest"])
    pytest_problem = "" if ok else f"{python} cannot import pytest: {why}"
    bwrap = shutil.which("bwrap")
    version, size_ok, problem, seccomp_problem = "", False, "", ""
    if bwrap is None:
        problem = "bwrap is not on PATH (apt-get install bubblewrap)"
    else:
        _ok, version = _run_quietly([bwrap, "--version"])
        size_ok = "--size" in _help_text(bwrap)
        seccomp_problem = "" if platform.machine() in SECCOMP_MACHINES else f"no filter for {platform.machine()}"
        if not seccomp_problem:
            try:
                job_filter()
            except SandboxUnavailable as exc:  # libseccomp missing
                seccomp_problem = str(exc)
        ok, why = _try_bwrap(bwrap, python, size_ok, seccomp=not seccomp_problem)
        if not ok and not seccomp_problem:
            seccomp_problem = f"bwrap --seccomp failed: {why}"
            ok, why = _try_bwrap(bwrap, python, size_ok, seccomp=False)
        if not ok:
            problem = f"bwrap does not work here: {why}"
            bwrap = None
    drop, drop_problem = False, ""
    if os.geteuid() == 0:
        drop, why = _run_quietly([python, "-c", "import pytest"], user=NOBODY, group=NOBODY, extra_groups=[], cwd="/")
        drop_problem = "" if drop else f"uid {NOBODY} cannot run {python}: {why}"
    return IsolationProbe(
        python=python,
        bwrap=bwrap,
        bwrap_version=version,
        bwrap_size=size_ok,
        bwrap_problem=problem,
        seccomp=bwrap is not None and not seccomp_problem,
        seccomp_problem=seccomp_problem,
        drop_to_nobody=drop,
        drop_problem=drop_problem,
        pytest_problem=pytest_problem,
    )
