"""The bubblewrap jobs' seccomp filter (built by libseccomp), decided by a small classic-BPF interpreter.

No kernel is needed: the interpreter runs the exported program on a ``struct seccomp_data``
for each syscall, as the kernel would. The filter holds this machine's architecture only.
"""

from __future__ import annotations

import errno
import platform
import struct

import pytest

from debatecode.sandbox._seccomp_bpf import (
    AUDIT_ARCH_AARCH64,
    AUDIT_ARCH_X86_64,
    CLONE_NEW_FLAGS,
    DENIED_SYSCALLS,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SECCOMP_RET_KILL_PROCESS,
    X32_SYSCALL_BIT,
    denied_numbers,
    job_filter,
)

EPERM = SECCOMP_RET_ERRNO | errno.EPERM
ENOSYS = SECCOMP_RET_ERRNO | errno.ENOSYS
CLONE = {AUDIT_ARCH_X86_64: 56, AUDIT_ARCH_AARCH64: 220}
SIGCHLD = 17
FORK_FLAGS = 0x01000000 | 0x00200000 | SIGCHLD  # CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
THREAD_FLAGS = 0x003D0F00  # glibc's pthread_create flags (VM, FS, FILES, SIGHAND, THREAD, SYSVSEM, SETTLS, ...)
EVERYDAY = {
    AUDIT_ARCH_X86_64: {"read": 0, "write": 1, "openat": 257, "mmap": 9, "execve": 59, "wait4": 61, "prctl": 157},
    AUDIT_ARCH_AARCH64: {"read": 63, "write": 64, "openat": 56, "mmap": 222, "execve": 221, "wait4": 260},
}
NATIVE = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}.get(platform.machine())
OTHER = {AUDIT_ARCH_X86_64: AUDIT_ARCH_AARCH64, AUDIT_ARCH_AARCH64: AUDIT_ARCH_X86_64}

pytestmark = pytest.mark.skipif(NATIVE is None, reason=f"no seccomp filter for {platform.machine()}")


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the kernel would return for one syscall: a tiny interpreter of the opcodes the filter uses."""
    values = [*args, 0, 0, 0, 0, 0, 0][:6]
    data = struct.pack("=iIQ6Q", nr, arch, 0, *values)
    instructions = [struct.unpack_from("=HBBI", program, offset) for offset in range(0, len(program), 8)]
    pc, accumulator = 0, 0
    for _step in range(len(instructions)):
        code, jt, jf, k = instructions[pc]
        if code == 0x20:  # ld [k]
            (accumulator,) = struct.unpack_from("=I", data, k)
            pc += 1
        elif code == 0x54:  # and #k
            accumulator &= k
            pc += 1
        elif code == 0x06:  # ret k
            return k
        elif code == 0x05:  # ja k
            pc += 1 + k
        elif code in (0x15, 0x25, 0x35, 0x45):  # jeq, jgt, jge, jset
            taken = {0x15: accumulator == k, 0x25: accumulator > k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}
            pc += 1 + (jt if taken[code] else jf)
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
    raise AssertionError("the program ran off its end")


def test_every_listed_syscall_is_refused_with_eperm() -> None:
    assert NATIVE is not None
    numbers = denied_numbers(NATIVE)
    assert set(numbers) == set(DENIED_SYSCALLS)
    for name, number in numbers.items():
        assert run_filter(job_filter(), number, NATIVE) == EPERM, name


def test_the_brief_list_is_covered() -> None:
    wanted = {
        *("unshare", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "ptrace"),
        *("io_uring_setup", "io_uring_enter", "io_uring_register", "process_vm_readv", "process_vm_writev"),
        *("mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount"),
        *("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "userfaultfd"),
    }
    assert wanted <= set(DENIED_SYSCALLS)


@pytest.mark.parametrize("arch", [AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64], ids=["x86_64", "aarch64"])
def test_the_numbers_are_each_architectures_own(arch: int) -> None:
    numbers = denied_numbers(arch)
    assert numbers["unshare"] == {AUDIT_ARCH_X86_64: 272, AUDIT_ARCH_AARCH64: 97}[arch]
    assert numbers["ptrace"] == {AUDIT_ARCH_X86_64: 101, AUDIT_ARCH_AARCH64: 117}[arch]
    assert numbers["open_tree_attr"] == 467, "newer than Debian's libseccomp: one number on every architecture"


def test_everyday_syscalls_are_allowed() -> None:
    assert NATIVE is not None
    for name, number in EVERYDAY[NATIVE].items():
        assert run_filter(job_filter(), number, NATIVE) == SECCOMP_RET_ALLOW, name


def test_clone_is_checked_by_flags_and_clone3_falls_back() -> None:
    assert NATIVE is not None
    program, clone = job_filter(), CLONE[NATIVE]
    assert run_filter(program, clone, NATIVE, (FORK_FLAGS,)) == SECCOMP_RET_ALLOW
    assert run_filter(program, clone, NATIVE, (THREAD_FLAGS,)) == SECCOMP_RET_ALLOW
    for bit in range(32):
        flag = 1 << bit
        if flag & CLONE_NEW_FLAGS:
            assert run_filter(program, clone, NATIVE, (SIGCHLD | flag,)) == EPERM, hex(flag)
    assert run_filter(program, clone, NATIVE, (0x10000000 | 0x20000000 | SIGCHLD,)) == EPERM
    assert run_filter(program, 435, NATIVE) == ENOSYS


def test_foreign_architectures_and_x32_are_killed() -> None:
    assert NATIVE is not None
    program = job_filter()
    for arch in (0x40000003, 0x40000028, 0x800000B7, 0, OTHER[NATIVE]):  # i386, arm, aarch64 BE, nonsense
        assert run_filter(program, 0, arch) == SECCOMP_RET_KILL_PROCESS, hex(arch)
    if NATIVE == AUDIT_ARCH_X86_64:
        assert run_filter(program, X32_SYSCALL_BIT | 0, AUDIT_ARCH_X86_64) == SECCOMP_RET_KILL_PROCESS
        assert run_filter(program, X32_SYSCALL_BIT | 272, AUDIT_ARCH_X86_64) == SECCOMP_RET_KILL_PROCESS


def test_the_program_is_a_whole_number_of_sock_filters() -> None:
    program = job_filter()
    assert len(program) % 8 == 0 and 0 < len(program) // 8 <= 4096
