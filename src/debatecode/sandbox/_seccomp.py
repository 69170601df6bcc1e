"""The seccomp profile of sandbox containers: an allowlist written for debatecode.

Every native system call that is not listed here fails with ``EPERM``, so a
program that probes for a feature gets an error, not a crash. The list holds what CPython, its standard library (threads,
``multiprocessing``, ``subprocess``, ``asyncio``, sockets on loopback), pytest,
hypothesis and the usual shell tools call, grouped by what they are for.

Left out on purpose, so that they fail with ``EPERM`` (``DENIED``): the
kernel interfaces a test job never needs and which have a history of
privilege escalations: io_uring, the key rings, eBPF, perf events,
userfaultfd, ptrace and cross-process memory access, namespaces (``unshare``,
``setns``, ``clone`` with a namespace flag), mounts, module and kexec loading,
file handles, and the clock, swap and reboot controls. Two calls are allowed
only with some arguments:

- ``clone``, only without a namespace flag (threads, ``fork`` and
  ``posix_spawn`` do not set one);
- ``personality``, only the default persona (0) and the query (0xffffffff).

``clone3`` fails with ``ENOSYS`` instead: its flags live in memory that seccomp
cannot inspect, and ``ENOSYS`` makes glibc fall back to ``clone``, which can be
checked.

The profile covers x86_64 and aarch64 (``archMap``); names a kernel or
libseccomp does not know on an architecture (``open`` on aarch64) are skipped
by the runtime. 32-bit compatibility calls (``int 0x80`` on x86_64, AArch32 on
aarch64) are outside the profile altogether: the kernel kills the thread that
makes one (SIGSYS; runc's action for a foreign architecture). Nothing in the
image makes them, and the compat entry points are a kernel surface of their own.
"""

from __future__ import annotations

import functools
import json
from typing import Any

__all__ = [
    "ALLOWED",
    "CLONE_NAMESPACE_FLAGS",
    "DENIED",
    "ENOSYS",
    "EPERM",
    "PERSONALITY_ALLOWED",
    "seccomp_profile",
    "seccomp_profile_json",
]

EPERM = 1
ENOSYS = 38

_FILE_IO = """
    read write readv writev pread64 pwrite64 preadv preadv2 pwritev pwritev2 lseek
    close close_range dup dup2 dup3 fcntl flock ioctl
    fsync fdatasync sync syncfs sync_file_range fallocate truncate ftruncate
    sendfile splice tee vmsplice copy_file_range readahead fadvise64
"""
_PATHS = """
    open openat openat2 creat stat fstat lstat newfstatat statx statfs fstatfs
    access faccessat faccessat2 readlink readlinkat getdents getdents64
    mkdir mkdirat rmdir unlink unlinkat rename renameat renameat2 link linkat symlink symlinkat
    chmod fchmod fchmodat fchmodat2 chown fchown lchown fchownat umask
    utime utimes utimensat futimesat mknod mknodat chdir fchdir getcwd
    getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr
    setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
"""
_WAITING = """
    pipe pipe2 select pselect6 poll ppoll
    epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
    eventfd eventfd2 signalfd signalfd4 timerfd_create timerfd_settime timerfd_gettime
    inotify_init inotify_init1 inotify_add_watch inotify_rm_watch
    io_setup io_destroy io_submit io_getevents io_pgetevents io_cancel
"""
_MEMORY = """
    brk mmap munmap mremap mprotect msync mincore madvise membarrier memfd_create
    mlock mlock2 munlock mlockall munlockall pkey_alloc pkey_free pkey_mprotect
    get_mempolicy set_mempolicy mbind
"""
_PROCESSES = """
    fork vfork execve execveat exit exit_group wait4 waitid
    kill tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo pidfd_open pidfd_send_signal
    getpid getppid gettid getpgid setpgid getpgrp getsid setsid
    set_tid_address set_robust_list get_robust_list rseq arch_prctl prctl seccomp
    capget capset getuid geteuid getgid getegid getresuid getresgid getgroups
    setuid setgid setreuid setregid setresuid setresgid setgroups setfsuid setfsgid
    getrlimit setrlimit prlimit64 getrusage times getpriority setpriority ioprio_get ioprio_set
    sched_yield sched_getaffinity sched_setaffinity sched_getparam sched_setparam
    sched_getscheduler sched_setscheduler sched_get_priority_max sched_get_priority_min
    sched_rr_get_interval sched_getattr sched_setattr getcpu uname sysinfo getrandom
"""
_SIGNALS_AND_TIME = """
    rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait rt_sigsuspend
    sigaltstack restart_syscall pause alarm getitimer setitimer
    timer_create timer_settime timer_gettime timer_getoverrun timer_delete
    nanosleep clock_nanosleep clock_gettime clock_getres gettimeofday time futex futex_waitv
"""
# The container has its own IPC namespace, and the pool server removes every object between jobs.
_IPC = """
    shmget shmat shmdt shmctl semget semop semtimedop semctl msgget msgsnd msgrcv msgctl
    mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
"""
# The container's network is ``none``: sockets reach loopback and Unix peers only.
_SOCKETS = """
    socket socketpair bind listen accept accept4 connect getsockname getpeername
    sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg shutdown setsockopt getsockopt
"""

ALLOWED: frozenset[str] = frozenset(
    " ".join((_FILE_IO, _PATHS, _WAITING, _MEMORY, _PROCESSES, _SIGNALS_AND_TIME, _IPC, _SOCKETS)).split()
)
"""System calls allowed with any arguments."""

_HIGH_RISK = """
    io_uring_setup io_uring_enter io_uring_register
    keyctl add_key request_key bpf perf_event_open userfaultfd
    ptrace process_vm_readv process_vm_writev process_madvise pidfd_getfd kcmp
    unshare setns clone3 mount umount2 pivot_root chroot
    fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr
    kexec_load kexec_file_load init_module finit_module delete_module create_module query_module get_kernel_syms
    open_by_handle_at name_to_handle_at quotactl quotactl_fd fanotify_init fanotify_mark
    swapon swapoff reboot acct syslog settimeofday clock_settime clock_adjtime adjtimex
    sethostname setdomainname iopl ioperm modify_ldt lookup_dcookie nfsservctl uselib ustat sysfs _sysctl
    vhangup move_pages migrate_pages remap_file_pages
"""

DENIED: frozenset[str] = frozenset(_HIGH_RISK.split())
"""High-risk calls that must never be allowed unconditionally (tests check ``ALLOWED`` against it).

Anything not in ``ALLOWED`` is denied; this list names the ones that matter.
"""

CLONE_NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
"""``clone`` is allowed only when none of these flags is set (CLONE_NEWTIME exists only for clone3)."""

PERSONALITY_ALLOWED = (0x0, 0xFFFFFFFF)
"""``personality`` arguments allowed: PER_LINUX, and 0xffffffff, which only reads the persona."""

_ARCHITECTURES: dict[str, list[str]] = {"SCMP_ARCH_X86_64": [], "SCMP_ARCH_AARCH64": []}
"""Native architectures only: no sub-architectures, so 32-bit calls (x86 ``int 0x80``, AArch32) match no
architecture of the filter and the kernel kills the calling thread with SIGSYS."""


def seccomp_profile() -> dict[str, Any]:
    """The profile, in the JSON shape Docker's ``--security-opt seccomp=`` takes."""
    rules: list[dict[str, Any]] = [
        {"names": sorted(ALLOWED), "action": "SCMP_ACT_ALLOW"},
        {
            # On x86_64 and aarch64 the flags are clone's first argument.
            "names": ["clone"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": CLONE_NAMESPACE_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}],
        },
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
    ]
    rules += [
        {
            "names": ["personality"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": persona, "valueTwo": 0, "op": "SCMP_CMP_EQ"}],
        }
        for persona in PERSONALITY_ALLOWED
    ]
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": EPERM,
        "archMap": [
            {"architecture": arch, "subArchitectures": subarches} for arch, subarches in _ARCHITECTURES.items()
        ],
        "syscalls": rules,
    }


@functools.cache
def seccomp_profile_json() -> str:
    """The profile as compact JSON, for ``security_opt=["seccomp=<json>"]``."""
    return json.dumps(seccomp_profile(), separators=(",", ":"), sort_keys=True)
