"""The seccomp filter for bubblewrap jobs, as a classic-BPF program for ``bwrap --seccomp FD``.

The program checks the architecture first: x86_64 and aarch64 each get their
own syscall numbers, any other architecture (a 32-bit ``int 0x80`` call on
x86_64, say) kills the process, and x86_64's x32 syscalls are refused. Then it
refuses, with EPERM, what a job never needs and what widens the kernel's attack
surface or lets a job reach outside its namespaces: creating or joining
namespaces (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag),
keyrings, io_uring, ``bpf``, ``perf_event_open``, ``ptrace`` and
``process_vm_*``, mounting, kexec, kernel modules and ``userfaultfd``.
``clone3`` passes its flags in memory, which BPF cannot read, so it gets ENOSYS:
glibc then falls back to ``clone``, whose flags are checked.

A small assembler with labels builds the program; ``tests/sandbox`` runs it
through a BPF interpreter to check each decision.
"""

from __future__ import annotations

import errno
import functools
import struct
from dataclasses import dataclass

__all__ = [
    "AUDIT_ARCH_AARCH64",
    "AUDIT_ARCH_X86_64",
    "CLONE_NEW_FLAGS",
    "DENIED",
    "SECCOMP_RET_ALLOW",
    "SECCOMP_RET_ERRNO",
    "SECCOMP_RET_KILL_PROCESS",
    "X32_SYSCALL_BIT",
    "Instruction",
    "job_filter",
]

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_JMP_JEQ_K = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
_JMP_JGE_K = 0x05 | 0x30 | 0x00  # BPF_JMP | BPF_JGE | BPF_K
_JMP_JSET_K = 0x05 | 0x40 | 0x00  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06 | 0x00  # BPF_RET | BPF_K

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

AUDIT_ARCH_X86_64 = 0xC000003E  # EM_X86_64 | 64-bit | little-endian
AUDIT_ARCH_AARCH64 = 0xC00000B7  # EM_AARCH64 | 64-bit | little-endian
X32_SYSCALL_BIT = 0x40000000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_NR_OFFSET = 0
_ARCH_OFFSET = 4
_ARG0_LOW_OFFSET = 16  # both architectures are little-endian: the low half of args[0] comes first

CLONE_NEW_FLAGS = (
    0x00000080  # CLONE_NEWTIME
    | 0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
"""Every namespace flag; the kernel reads only the low 32 bits of clone's flags."""

_X86_64: dict[str, int] = {
    "unshare": 272,
    "setns": 308,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "bpf": 321,
    "perf_event_open": 298,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "open_tree_attr": 467,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "userfaultfd": 323,
}
_AARCH64: dict[str, int] = {
    "unshare": 97,
    "setns": 268,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "bpf": 280,
    "perf_event_open": 241,
    "ptrace": 117,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "open_tree_attr": 467,
    "kexec_load": 104,
    "kexec_file_load": 294,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "userfaultfd": 282,
}
_CLONE = {AUDIT_ARCH_X86_64: 56, AUDIT_ARCH_AARCH64: 220}
_CLONE3 = 435

DENIED: dict[int, dict[str, int]] = {AUDIT_ARCH_X86_64: _X86_64, AUDIT_ARCH_AARCH64: _AARCH64}
"""Architecture -> syscall name -> number, for every syscall the filter refuses with EPERM."""


@dataclass(frozen=True)
class Instruction:
    """One ``struct sock_filter``; a jump's targets are labels until ``_assemble`` resolves them."""

    code: int
    k: int = 0
    jt: str | int = 0
    jf: str | int = 0


def _load(offset: int) -> Instruction:
    return Instruction(_LD_W_ABS, offset)


def _ret(value: int) -> Instruction:
    return Instruction(_RET_K, value)


def _assemble(program: list[Instruction | str]) -> bytes:
    """Pack ``program`` (instructions and label strings) into native-endian ``sock_filter`` entries."""
    labels: dict[str, int] = {}
    instructions: list[Instruction] = []
    for item in program:
        if isinstance(item, str):
            if item in labels:
                raise ValueError(f"label {item!r} defined twice")
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(target: str | int, index: int) -> int:
        if isinstance(target, int):
            return target
        distance = labels[target] - index - 1
        if not 0 <= distance <= 255:
            raise ValueError(f"jump to {target!r} is out of range ({distance})")
        return distance

    packed = bytearray()
    for index, ins in enumerate(instructions):
        packed += struct.pack("=HBBI", ins.code, offset(ins.jt, index), offset(ins.jf, index), ins.k)
    if len(instructions) > 4096:
        raise ValueError("a seccomp program holds at most 4096 instructions")
    return bytes(packed)


def _arch_section(arch: int, name: str) -> list[Instruction | str]:
    section: list[Instruction | str] = [name, _load(_NR_OFFSET)]
    if arch == AUDIT_ARCH_X86_64:
        section.append(Instruction(_JMP_JGE_K, X32_SYSCALL_BIT, jt="deny"))
    section.append(Instruction(_JMP_JEQ_K, _CLONE3, jt="enosys"))
    section.append(Instruction(_JMP_JEQ_K, _CLONE[arch], jt="clone"))
    for number in sorted(DENIED[arch].values()):
        section.append(Instruction(_JMP_JEQ_K, number, jt="deny"))
    section.append(_ret(SECCOMP_RET_ALLOW))
    return section


@functools.cache
def job_filter() -> bytes:
    """The compiled filter: a sequence of 8-byte ``struct sock_filter``, as ``bwrap --seccomp`` reads it."""
    program: list[Instruction | str] = [
        _load(_ARCH_OFFSET),
        Instruction(_JMP_JEQ_K, AUDIT_ARCH_X86_64, jt="x86_64"),
        Instruction(_JMP_JEQ_K, AUDIT_ARCH_AARCH64, jt="aarch64"),
        _ret(SECCOMP_RET_KILL_PROCESS),
        *_arch_section(AUDIT_ARCH_X86_64, "x86_64"),
        *_arch_section(AUDIT_ARCH_AARCH64, "aarch64"),
        "clone",
        _load(_ARG0_LOW_OFFSET),
        Instruction(_JMP_JSET_K, CLONE_NEW_FLAGS, jt="deny"),
        _ret(SECCOMP_RET_ALLOW),
        "deny",
        _ret(SECCOMP_RET_ERRNO | errno.EPERM),
        "enosys",
        _ret(SECCOMP_RET_ERRNO | errno.ENOSYS),
    ]
    return _assemble(program)
