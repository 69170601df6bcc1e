"""The seccomp filter for bubblewrap jobs, as a classic-BPF program for ``bwrap --seccomp FD``.

libseccomp builds the program (through ``pyseccomp``, a ctypes binding over Debian's
``libseccomp2``); this module only says what it refuses. The program checks the architecture
first: the program is built on the machine that runs the jobs, for its architecture (x86_64 or
aarch64), and a call of any other architecture (a 32-bit ``int 0x80`` call on x86_64, say, or an
x32 call) kills the process. Then it refuses, with
EPERM, what a job never needs and what widens the kernel's attack surface or lets a job reach
outside its namespaces: creating or joining namespaces (``unshare``, ``setns``, ``clone`` with a
``CLONE_NEW*`` flag), keyrings, io_uring, ``bpf``, ``perf_event_open``, ``ptrace`` and
``process_vm_*``, mounting, kexec, kernel modules and ``userfaultfd``. ``clone3`` passes its flags
in memory, which BPF cannot read, so it gets ENOSYS: glibc then falls back to ``clone``, whose
flags are checked.

``tests/sandbox`` runs the program through a BPF interpreter to check each decision, and the
attack tests run jobs under it.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from collections.abc import Mapping
from types import ModuleType

from debatecode.errors import SandboxUnavailable
from debatecode.sandbox._seccomp import CLONE_NAMESPACE_FLAGS

__all__ = [
    "AUDIT_ARCH_AARCH64",
    "AUDIT_ARCH_X86_64",
    "CLONE_NEW_FLAGS",
    "DENIED_SYSCALLS",
    "SECCOMP_RET_ALLOW",
    "SECCOMP_RET_ERRNO",
    "SECCOMP_RET_KILL_PROCESS",
    "X32_SYSCALL_BIT",
    "denied_numbers",
    "job_filter",
]

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

AUDIT_ARCH_X86_64 = 0xC000003E  # EM_X86_64 | 64-bit | little-endian
AUDIT_ARCH_AARCH64 = 0xC00000B7  # EM_AARCH64 | 64-bit | little-endian
X32_SYSCALL_BIT = 0x40000000

CLONE_NEWTIME = 0x00000080
CLONE_NEW_FLAGS = CLONE_NAMESPACE_FLAGS | CLONE_NEWTIME
"""Every namespace flag (the Docker profile's, and CLONE_NEWTIME); the kernel reads only the low 32 bits of clone's flags."""

DENIED_SYSCALLS = (
    *("unshare", "setns"),
    *("add_key", "request_key", "keyctl"),
    *("io_uring_setup", "io_uring_enter", "io_uring_register"),
    *("bpf", "perf_event_open", "ptrace", "process_vm_readv", "process_vm_writev"),
    *("mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick"),
    *("mount_setattr", "open_tree_attr"),
    *("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "userfaultfd"),
)
"""Every syscall the filter refuses with EPERM (``clone`` with a namespace flag too; ``clone3`` gets ENOSYS)."""

_NEWER_THAN_LIBSECCOMP: Mapping[str, int] = {"open_tree_attr": 467}
"""Syscalls an older libseccomp (Debian bookworm's 2.5.4) has no name for, by number.

Syscalls from Linux 5.1 on have one number on every architecture, so one number serves both.
"""

_ARCHES = (AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64)


def _libseccomp() -> ModuleType:
    """``pyseccomp``, loaded with the system's libseccomp.

    Raises:
        SandboxUnavailable: libseccomp (Debian's ``libseccomp2``) or ``pyseccomp`` is missing.
    """
    try:
        import pyseccomp
    except (ImportError, OSError, AttributeError) as exc:  # pyseccomp loads libseccomp.so.2 on import
        raise SandboxUnavailable(
            f"the seccomp filter needs libseccomp: {exc} (apt-get install libseccomp2; pip install pyseccomp)"
        ) from exc
    return pyseccomp


def denied_numbers(arch: int) -> dict[str, int]:
    """Syscall name -> number on ``arch`` (``AUDIT_ARCH_*``), for every syscall in ``DENIED_SYSCALLS``.

    Raises:
        SandboxUnavailable: libseccomp is missing.
    """
    seccomp = _libseccomp()
    numbers = {}
    for name in DENIED_SYSCALLS:
        number = seccomp.resolve_syscall(arch, name)
        numbers[name] = number if number >= 0 else _NEWER_THAN_LIBSECCOMP[name]
    return numbers


@functools.cache
def job_filter() -> bytes:
    """The compiled filter for this machine: a sequence of 8-byte ``struct sock_filter``, as ``bwrap --seccomp`` reads it.

    It holds this machine's architecture only (x86_64 or aarch64): calls of any other (i386's
    ``int 0x80`` on x86_64, x32) kill the process.

    Raises:
        SandboxUnavailable: libseccomp is missing, or this machine is neither x86_64 nor aarch64.
    """
    seccomp = _libseccomp()
    native = seccomp.system_arch()
    if native not in _ARCHES:
        raise SandboxUnavailable(f"no seccomp filter for this architecture ({native:#x}): only x86_64 and aarch64")
    refuse = seccomp.ERRNO(errno.EPERM)
    syscalls = seccomp.SyscallFilter(seccomp.ALLOW)
    syscalls.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    for name in DENIED_SYSCALLS:
        # A number libseccomp has no name for is taken as the native architecture's: the one filtered.
        syscalls.add_rule(refuse, _NEWER_THAN_LIBSECCOMP.get(name, name))
    syscalls.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for bit in range(32):
        flag = 1 << bit
        if flag & CLONE_NEW_FLAGS:
            syscalls.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as exported:
        syscalls.export_bpf(exported)
        exported.seek(0)
        return exported.read()
