"""Attacks on the bubblewrap sandbox, part 4: its seccomp filter, its job cgroup, its tmpfs work dir.

These attack what only the local backend under bubblewrap adds (``_seccomp_bpf``,
``_cgroup``, the size-capped work dir), so they run against ``local`` in
bubblewrap mode only, and are skipped where bubblewrap does not work. After
every attack, no host process carries the attack's marker.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from _sandbox_attacks import Target, host_processes_with

from debatecode.sandbox._cgroup import probe_cgroups
from debatecode.sandbox.base import Limits
from debatecode.sandbox.local import LocalSandbox


@pytest.fixture(params=["local"])
async def target() -> AsyncIterator[Target]:
    sandbox = LocalSandbox(isolation="bubblewrap")
    if sandbox.probe.bwrap is None:
        pytest.skip(f"bubblewrap is not usable here: {sandbox.probe.bwrap_problem}")
    marker = f"dcattack{uuid.uuid4().hex[:12]}"
    try:
        yield Target(sandbox, "bubblewrap", marker)
    finally:
        await sandbox.aclose()
        leftovers = host_processes_with(marker)
        for pid in leftovers:
            os.kill(pid, 9)
    assert leftovers == [], f"the attack left host processes behind: {leftovers}"


def cgroup_limits_here() -> bool:
    return probe_cgroups().kind in ("v1", "v2", "systemd")


SYSCALLS = r"""
import ctypes, errno, json, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = {
    "x86_64": dict(clone=56, clone3=435, unshare=272, setns=308, add_key=248, request_key=249, keyctl=250,
                   io_uring_setup=425, io_uring_enter=426, io_uring_register=427, bpf=321, perf_event_open=298,
                   ptrace=101, process_vm_readv=310, process_vm_writev=311, mount=165, umount2=166,
                   pivot_root=155, open_tree=428, move_mount=429, fsopen=430, fsmount=432, kexec_load=246,
                   kexec_file_load=320, init_module=175, finit_module=313, delete_module=176, userfaultfd=323),
    "aarch64": dict(clone=220, clone3=435, unshare=97, setns=268, add_key=217, request_key=218, keyctl=219,
                    io_uring_setup=425, io_uring_enter=426, io_uring_register=427, bpf=280, perf_event_open=241,
                    ptrace=117, process_vm_readv=270, process_vm_writev=271, mount=40, umount2=39,
                    pivot_root=41, open_tree=428, move_mount=429, fsopen=430, fsmount=432, kexec_load=104,
                    kexec_file_load=294, init_module=105, finit_module=273, delete_module=106, userfaultfd=282),
}[platform.machine()]
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID, SIGCHLD = 0x10000000, 0x20000, 0x40000000, 0x20000000, 17
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
buffer = ctypes.create_string_buffer(4096)
netns = os.open("/proc/self/ns/net", os.O_RDONLY)
child = os.fork()
if child == 0:
    import time
    time.sleep(30)
    os._exit(0)
CALLS = {
    "unshare(NEWUSER)": ("unshare", CLONE_NEWUSER),
    "unshare(NEWUSER|NEWNS)": ("unshare", CLONE_NEWUSER | CLONE_NEWNS),
    "unshare(NEWNET)": ("unshare", CLONE_NEWNET),
    "clone(NEWUSER)": ("clone", CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0),
    "clone(NEWPID|NEWNS)": ("clone", CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0),
    "clone3": ("clone3", ctypes.addressof(buffer), 88),
    "setns(net)": ("setns", netns, 0),
    "add_key(user keyring)": ("add_key", b"user", os.environ["DC_ATTACK_MARKER"].encode(), b"secret", 6,
                              KEY_SPEC_USER_KEYRING),
    "add_key(session keyring)": ("add_key", b"user", b"dc", b"secret", 6, KEY_SPEC_SESSION_KEYRING),
    "keyctl(get session keyring)": ("keyctl", 0, KEY_SPEC_SESSION_KEYRING, 0),
    "keyctl(join session keyring)": ("keyctl", 1, 0),
    "request_key": ("request_key", b"user", b"dc", None, 0),
    "io_uring_setup": ("io_uring_setup", 4, ctypes.addressof(buffer)),
    "io_uring_enter": ("io_uring_enter", 0, 1, 0, 0, 0, 0),
    "io_uring_register": ("io_uring_register", 0, 0, 0, 0),
    "bpf(map create)": ("bpf", 0, ctypes.addressof(buffer), 72),
    "perf_event_open": ("perf_event_open", ctypes.addressof(buffer), 0, -1, -1, 0),
    "ptrace(TRACEME)": ("ptrace", 0, 0, 0, 0),
    "ptrace(ATTACH own child)": ("ptrace", 16, child, 0, 0),
    "ptrace(ATTACH runner)": ("ptrace", 16, os.getppid(), 0, 0),
    "process_vm_readv(child)": ("process_vm_readv", child, ctypes.addressof(buffer), 1, ctypes.addressof(buffer), 1, 0),
    "process_vm_writev(child)": ("process_vm_writev", child, ctypes.addressof(buffer), 1, ctypes.addressof(buffer), 1, 0),
    "mount": ("mount", b"none", b"/tmp", b"tmpfs", 0, None),
    "umount2": ("umount2", b"/tmp", 2),
    "pivot_root": ("pivot_root", b"/tmp", b"/tmp"),
    "open_tree": ("open_tree", -100, b"/tmp", 1),
    "move_mount": ("move_mount", -1, b"", -100, b"/tmp", 4),
    "fsopen": ("fsopen", b"tmpfs", 0),
    "fsmount": ("fsmount", -1, 0, 0),
    "kexec_load": ("kexec_load", 0, 0, 0, 0),
    "kexec_file_load": ("kexec_file_load", -1, -1, 0, None, 0),
    "init_module": ("init_module", ctypes.addressof(buffer), 16, b""),
    "finit_module": ("finit_module", 0, b"", 0),
    "delete_module": ("delete_module", b"dummy", 0),
    "userfaultfd": ("userfaultfd", 0),
}
outcome = {}
for label, (name, *args) in CALLS.items():
    ctypes.set_errno(0)
    result = libc.syscall(NUMBERS[name], *args)
    if result == 0 and name == "clone":
        os._exit(0)  # the clone went through: this is the new child, leave quietly
    outcome[label] = "succeeded" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
os.kill(child, 9)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if line.startswith("Seccomp"))
outcome["seccomp"] = status.get("Seccomp", "").strip()
print(json.dumps(outcome))
"""


async def test_namespace_keyring_io_uring_bpf_perf_ptrace_and_mount_syscalls_are_refused(target: Target) -> None:
    result = await target.run(SYSCALLS)
    assert result.status == "ok", result.stderr
    outcome = json.loads(result.stdout)
    assert outcome.pop("seccomp") == "2", "the job runs without a seccomp filter"
    assert outcome.pop("clone3") == "ENOSYS", "clone3 must fail with ENOSYS, so that glibc falls back to clone"
    assert {label: errno for label, errno in outcome.items() if errno != "EPERM"} == {}


async def test_threads_forks_and_spawns_still_work(target: Target) -> None:
    code = (
        "import asyncio, concurrent.futures, multiprocessing, os, subprocess, sys, threading\n"
        "def square(x):\n"
        "    return x * x\n"
        "if __name__ == '__main__':\n"
        "    done = []\n"
        "    threads = [threading.Thread(target=done.append, args=(i,)) for i in range(8)]\n"
        "    [t.start() for t in threads]; [t.join() for t in threads]\n"
        "    print('threads', len(done))\n"
        "    print('subprocess', subprocess.run([sys.executable, '-c', 'print(7)'], capture_output=True).stdout)\n"
        "    pid = os.posix_spawn(sys.executable, [sys.executable, '-c', 'pass'], os.environ)\n"
        "    print('posix_spawn', os.waitpid(pid, 0)[1])\n"
        "    for method in ('fork', 'spawn', 'forkserver'):\n"
        "        with multiprocessing.get_context(method).Pool(2) as pool:\n"
        "            print(method, pool.map(square, range(4)))\n"
        "    with concurrent.futures.ThreadPoolExecutor(4) as pool:\n"
        "        print('thread pool', sum(pool.map(square, range(10))))\n"
        "    async def shell():\n"
        "        proc = await asyncio.create_subprocess_exec('true')\n"
        "        return await proc.wait()\n"
        "    print('asyncio', asyncio.run(shell()))\n"
    )
    result = await target.run(code, Limits(timeout_s=60))
    assert result.status == "ok", result.stderr
    assert result.stdout.splitlines() == [
        "threads 8",
        "subprocess b'7\\n'",
        "posix_spawn 0",
        "fork [0, 1, 4, 9]",
        "spawn [0, 1, 4, 9]",
        "forkserver [0, 1, 4, 9]",
        "thread pool 285",
        "asyncio 0",
    ]


MEMORY_HOGS = """
import os, sys, time
children = []
for index in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            hog = b"x" * (400 * 1024 * 1024)
            time.sleep(3)
        except MemoryError:
            os._exit(3)
        os._exit(0)
    children.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
print("children", codes, flush=True)
sys.exit(0 if codes == [0, 0, 0, 0] else 1)
"""


async def test_memory_is_capped_for_the_job_as_a_whole(target: Target) -> None:
    result = await target.run(MEMORY_HOGS, Limits(timeout_s=60, memory_mb=512))
    assert "children [0, 0, 0, 0]" not in result.stdout, "4 x 400 MiB ran under a 512 MiB job limit"
    if cgroup_limits_here() and probe_cgroups().kind != "systemd":
        assert result.status == "oom", result
    else:
        assert result.status in {"oom", "error"}, result
    assert (await target.run("print('alive')")).stdout == "alive\n"


async def test_processes_are_capped_for_the_job_as_a_whole(target: Target) -> None:
    if not cgroup_limits_here():
        pytest.skip(f"no per-job cgroup here: {probe_cgroups().detail}")
    code = (
        "import os, time\n"
        "started = 0\n"
        "for _ in range(80):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(20)\n"
        "            os._exit(0)\n"
        "    except OSError:\n"
        "        break\n"
        "    started += 1\n"
        "print(started)\n"
    )
    started = time.monotonic()
    result = await target.run(code, Limits(timeout_s=20, pids=32))
    assert result.status == "ok", result.stderr
    assert int(result.stdout) < 32, f"the job started {result.stdout.strip()} processes under a limit of 32"
    assert time.monotonic() - started < 20


async def test_disk_is_capped_for_the_work_dir_as_a_whole(target: Target) -> None:
    code = (
        "import os\n"
        "chunk = b'x' * (1024 * 1024)\n"
        "written, error = 0, ''\n"
        "try:\n"
        "    for index in range(240):\n"
        "        with open(f'fill-{index}.bin', 'wb') as handle:\n"
        "            handle.write(chunk)\n"
        "        written += 1\n"
        "except OSError as exc:\n"
        "    error = exc.strerror\n"
        "print(written, error)\n"
        "os.remove('fill-0.bin')\n"
        "open('result.txt', 'w').write(str(written))\n"
    )
    result = await target.run(code, Limits(timeout_s=30, disk_mb=64), collect=["result.txt"])
    assert result.status == "ok", result.stderr
    written, _, error = result.stdout.strip().partition(" ")
    assert int(written) <= 64, f"the job wrote {written} MiB into a 64 MiB work dir"
    assert error == "No space left on device"
    assert result.files == {"result.txt": written}, "collect still reads files back from the tmpfs"


LEAVE_KEYS_AND_IPC = """
import ctypes, errno, json, os, platform
marker = os.environ["DC_ATTACK_MARKER"]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
key = int(marker[-6:], 16)
made = {}
made["add_key"] = libc.syscall(add_key, b"user", marker.encode(), b"secret", 6, -4) >= 0 or errno.errorcode[ctypes.get_errno()]
made["shm"] = libc.shmget(key, 4096, 0o1000 | 0o666) >= 0
made["msg"] = libc.msgget(key, 0o1000 | 0o666) >= 0
made["sem"] = libc.semget(key, 1, 0o1000 | 0o666) >= 0
made["mq"] = libc.mq_open(("/" + marker).encode(), os.O_CREAT | os.O_RDWR, 0o666, None) >= 0
made["ipc_ns"] = os.readlink("/proc/self/ns/ipc")
print(json.dumps(made))
"""

SEE_KEYS_AND_IPC = """
import ctypes, json, os, platform
marker = os.environ["DC_ATTACK_MARKER"]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
request_key = {"x86_64": 249, "aarch64": 218}[platform.machine()]
key = int(marker[-6:], 16)
seen = {}
seen["request_key"] = libc.syscall(request_key, b"user", marker.encode(), None, -4) >= 0
try:
    seen["proc_keys"] = marker in open("/proc/keys").read()
except OSError:
    seen["proc_keys"] = False
seen["shm"] = libc.shmget(key, 0, 0) >= 0
seen["msg"] = libc.msgget(key, 0) >= 0
seen["sem"] = libc.semget(key, 0, 0) >= 0
seen["mq"] = libc.mq_open(("/" + marker).encode(), os.O_RDONLY) >= 0
seen["ipc_ns"] = os.readlink("/proc/self/ns/ipc")
print(json.dumps(seen))
"""


def host_sees(marker: str) -> list[str]:
    key = int(marker[-6:], 16)
    found = []
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as table:
            if any(line.split()[:1] == [str(key)] for line in table.readlines()[1:]):
                found.append(kind)
    with open("/proc/keys") as keys:
        if marker in keys.read():
            found.append("key")
    if os.path.exists("/dev/mqueue/" + marker):
        found.append("mq")
    return found


async def test_keys_and_ipc_made_in_one_job_are_invisible_to_the_next_and_the_host(target: Target) -> None:
    first = await target.run(LEAVE_KEYS_AND_IPC)
    assert first.status == "ok", first.stderr
    made = json.loads(first.stdout)
    assert made.pop("add_key") == "EPERM", "a job must not be able to add a key to a keyring"
    assert made["shm"] and made["msg"] and made["sem"] and made["mq"], made
    second = await target.run(SEE_KEYS_AND_IPC)
    assert second.status == "ok", second.stderr
    seen = json.loads(second.stdout)
    host_ipc = os.readlink("/proc/self/ns/ipc")
    # (Namespace inode numbers are reused once a namespace is gone, so consecutive jobs may show the same one.)
    assert host_ipc not in (made.pop("ipc_ns"), seen.pop("ipc_ns")), "each job has its own IPC namespace"
    assert {name: value for name, value in seen.items() if value} == {}
    assert host_sees(target.marker) == []
