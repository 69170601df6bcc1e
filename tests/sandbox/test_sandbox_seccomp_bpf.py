"""The bubblewrap jobs' seccomp filter, decided by a small classic-BPF interpreter (no kernel needed)."""

from __future__ import annotations

import errno
import struct

import pytest

from debatecode.sandbox._seccomp_bpf import (
    AUDIT_ARCH_AARCH64,
    AUDIT_ARCH_X86_64,
    CLONE_NEW_FLAGS,
    DENIED,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SECCOMP_RET_KILL_PROCESS,
    X32_SYSCALL_BIT,
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
        elif code == 0x06:  # ret k
            return k
        elif code in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[code]
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
    raise AssertionError("the program ran off its end")


@pytest.mark.parametrize("arch", [AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64], ids=["x86_64", "aarch64"])
def test_every_listed_syscall_is_refused_with_eperm(arch: int) -> None:
    for name, number in DENIED[arch].items():
        assert run_filter(job_filter(), number, arch) == EPERM, name


@pytest.mark.parametrize("arch", [AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64], ids=["x86_64", "aarch64"])
def test_the_brief_list_is_covered(arch: int) -> None:
    wanted = {
        *("unshare", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "ptrace"),
        *("io_uring_setup", "io_uring_enter", "io_uring_register", "process_vm_readv", "process_vm_writev"),
        *("mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount"),
        *("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "userfaultfd"),
    }
    assert wanted <= set(DENIED[arch])


@pytest.mark.parametrize("arch", [AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64], ids=["x86_64", "aarch64"])
def test_everyday_syscalls_are_allowed(arch: int) -> None:
    for name, number in EVERYDAY[arch].items():
        assert run_filter(job_filter(), number, arch) == SECCOMP_RET_ALLOW, name


@pytest.mark.parametrize("arch", [AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64], ids=["x86_64", "aarch64"])
def test_clone_is_checked_by_flags_and_clone3_falls_back(arch: int) -> None:
    program = job_filter()
    assert run_filter(program, CLONE[arch], arch, (FORK_FLAGS,)) == SECCOMP_RET_ALLOW
    assert run_filter(program, CLONE[arch], arch, (THREAD_FLAGS,)) == SECCOMP_RET_ALLOW
    for bit in range(32):
        flag = 1 << bit
        if flag & CLONE_NEW_FLAGS:
            assert run_filter(program, CLONE[arch], arch, (SIGCHLD | flag,)) == EPERM, hex(flag)
    assert run_filter(program, CLONE[arch], arch, (0x10000000 | 0x20000000 | SIGCHLD,)) == EPERM
    assert run_filter(program, 435, arch) == ENOSYS


def test_foreign_architectures_are_killed_and_x32_is_refused() -> None:
    program = job_filter()
    for arch in (0x40000003, 0x40000028, 0x800000B7, 0):  # i386, arm, aarch64 big-endian, nonsense
        assert run_filter(program, 0, arch) == SECCOMP_RET_KILL_PROCESS, hex(arch)
    assert run_filter(program, X32_SYSCALL_BIT | 0, AUDIT_ARCH_X86_64) == EPERM
    assert run_filter(program, X32_SYSCALL_BIT | 272, AUDIT_ARCH_X86_64) == EPERM


def test_the_program_is_a_whole_number_of_sock_filters() -> None:
    program = job_filter()
    assert len(program) % 8 == 0 and 0 < len(program) // 8 <= 4096
