"""Attacks on the Docker sandbox's hardening: the seccomp allowlist, core dumps, and the host-share clamp.

Docker only: the profile and the clamp are the Docker backend's own. Each attack
runs in a warm pool of one container (its leftovers would meet the next job)
and in a fresh container, since the two are created by different code paths.
The same clean-up checks as the rest of the corpus follow every attack.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import AsyncIterator

import pytest
from _sandbox_attacks import Target, host_processes_with, labelled_containers

from debatecode.config import SandboxSettings
from debatecode.sandbox import _docker_spec
from debatecode.sandbox._docker_spec import HostResources
from debatecode.sandbox.base import ExecJob, Limits, Sandbox
from debatecode.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

TEN_TB_MB = 10 * 1024 * 1024


@pytest.fixture(params=["docker", "docker-fresh"])
async def target(request: pytest.FixtureRequest, requires_docker: None) -> AsyncIterator[Target]:
    run_label = f"debatecode.test={uuid.uuid4().hex}"
    marker = f"dcattack{uuid.uuid4().hex[:12]}"
    pool_size = 1 if request.param == "docker" else 0
    settings = SandboxSettings(pool_size=pool_size, sweep_on_start=False)
    instance: Sandbox = DockerSandbox(settings, labels=dict([run_label.split("=", 1)]))
    try:
        yield Target(instance, "docker", marker)
    finally:
        await instance.aclose()
        leftovers = host_processes_with(marker)
        for pid in leftovers:
            os.kill(pid, 9)
    assert labelled_containers(run_label) == [], "the attack left debatecode containers behind"
    assert leftovers == [], f"the attack left host processes behind: {leftovers}"


SYSCALL_ATTACKS = r"""
import ctypes, errno, json, os, platform

NUMBERS = {
    "x86_64": dict(io_uring_setup=425, keyctl=250, add_key=248, request_key=249, bpf=321, perf_event_open=298,
                   userfaultfd=323, unshare=272, setns=308, clone=56, clone3=435, personality=135, ptrace=101,
                   process_vm_readv=310, mount=165, open_by_handle_at=304, init_module=175, kexec_load=246,
                   getpid=39),
    "aarch64": dict(io_uring_setup=425, keyctl=219, add_key=217, request_key=218, bpf=280, perf_event_open=241,
                    userfaultfd=282, unshare=97, setns=268, clone=220, clone3=435, personality=92, ptrace=117,
                    process_vm_readv=270, mount=40, open_by_handle_at=265, init_module=105, kexec_load=104,
                    getpid=172),
}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
outcome = {}

def call(label, name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(NUMBERS[name]), *[ctypes.c_long(a) for a in args])
    if result == 0 and name == "clone":
        os._exit(0)  # a child: the call got through; the parent reports it
    err = ctypes.get_errno()
    outcome[label] = "OK" if result >= 0 else errno.errorcode.get(err, str(err))

params = ctypes.create_string_buffer(120)          # struct io_uring_params
attr = ctypes.create_string_buffer(128)            # struct perf_event_attr: software cpu-clock, user space only
ctypes.c_uint32.from_buffer(attr, 0).value = 1     # PERF_TYPE_SOFTWARE
ctypes.c_uint32.from_buffer(attr, 4).value = 112   # size
ctypes.c_uint64.from_buffer(attr, 40).value = 1 | 1 << 5 | 1 << 6  # disabled, exclude_kernel, exclude_hv
call("io_uring_setup", "io_uring_setup", 8, ctypes.addressof(params))
key_type, key_name, key_data = (ctypes.create_string_buffer(text) for text in (b"user", b"dc:attack", b"secret"))
call("add_key", "add_key", *map(ctypes.addressof, (key_type, key_name, key_data)), 6, -2)  # KEY_SPEC_PROCESS_KEYRING
call("keyctl", "keyctl", 0, -1, 0)                                      # KEYCTL_GET_KEYRING_ID, thread keyring, create
call("request_key", "request_key", 0, 0, 0, 0)
call("bpf", "bpf", 0, 0, 0)
call("perf_event_open", "perf_event_open", ctypes.addressof(attr), 0, -1, -1, 0)
call("userfaultfd", "userfaultfd", 1)                                   # UFFD_USER_MODE_ONLY
call("unshare(CLONE_NEWUSER)", "unshare", 0x10000000)
call("unshare(CLONE_NEWNS)", "unshare", 0x00020000)
call("setns", "setns", 0, 0)
call("clone(CLONE_NEWUSER)", "clone", 0x10000000 | 17, 0, 0, 0, 0)      # | SIGCHLD
call("clone3", "clone3", 0, 0)
call("personality(ADDR_NO_RANDOMIZE)", "personality", 0x0040000)
call("ptrace(PTRACE_TRACEME)", "ptrace", 0, 0, 0, 0)
call("process_vm_readv", "process_vm_readv", os.getppid(), 0, 0, 0, 0, 0)
call("mount", "mount", 0, 0, 0, 0, 0)
call("open_by_handle_at", "open_by_handle_at", 0, 0, 0)
call("init_module", "init_module", 0, 0, 0)
call("kexec_load", "kexec_load", 0, 0, 0, 0)
call("getpid", "getpid")
call("personality(query)", "personality", 0xFFFFFFFF)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
outcome["Seccomp"] = status["Seccomp"].strip()
print(json.dumps(outcome))
"""


async def test_seccomp_refuses_high_risk_system_calls(target: Target) -> None:
    result = await target.run(SYSCALL_ATTACKS)
    assert result.status == "ok", result.stderr
    outcome = json.loads(result.stdout)
    assert outcome.pop("Seccomp") == "2", "the job runs under a seccomp filter"
    # The controls: allowed calls still work, so the refusals below are the filter's.
    assert outcome.pop("getpid") == "OK" and outcome.pop("personality(query)") == "OK"
    assert outcome.pop("clone3") == "ENOSYS", "clone3 must look absent, so that glibc falls back to clone"
    assert outcome == dict.fromkeys(outcome, "EPERM"), outcome
    for required in ("io_uring_setup", "keyctl", "add_key", "bpf", "perf_event_open", "unshare(CLONE_NEWUSER)"):
        assert required in outcome
    assert len(outcome) == 18
    assert (await target.run("print('next job')")).stdout == "next job\n"


COMPAT_SYSCALL = r"""
import ctypes, mmap, platform
if platform.machine() != "x86_64":
    raise SystemExit(0)
# mov eax, 20 (getpid in the i386 table); int 0x80; ret
code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
function = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print("compat getpid returned", function(), flush=True)
"""


async def test_32_bit_system_calls_end_the_job(target: Target) -> None:
    """32-bit calls are outside the profile: the kernel kills the caller (SIGSYS); the container stays usable."""
    result = await target.run(COMPAT_SYSCALL)
    if result.status == "ok":
        assert result.stdout == "", "not x86_64: nothing to try"
    else:
        assert (result.status, result.exit_code) == ("error", -31), result
        assert "compat getpid returned" not in result.stdout
    assert (await target.run("print('next job')")).stdout == "next job\n"


async def test_denied_calls_do_not_break_threads_fork_subprocess_and_multiprocessing(target: Target) -> None:
    code = (
        "import asyncio, multiprocessing, subprocess, sys, threading\n"
        "def square(x):\n"
        "    return x * x\n"
        "if __name__ == '__main__':\n"
        "    seen = []\n"
        "    threads = [threading.Thread(target=seen.append, args=(i,)) for i in range(8)]\n"
        "    [t.start() for t in threads]; [t.join() for t in threads]\n"
        "    out = subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True, text=True).stdout\n"
        "    shell = subprocess.run(['sh', '-c', 'echo $((1 + 1)) | cat'], capture_output=True, text=True).stdout\n"
        "    pools = []\n"
        "    for method in ('fork', 'forkserver', 'spawn'):\n"
        "        with multiprocessing.get_context(method).Pool(2) as pool:\n"
        "            pools.append(pool.map(square, range(4)))\n"
        "    async def spawn():\n"
        "        proc = await asyncio.create_subprocess_exec('true')\n"
        "        return await proc.wait()\n"
        "    print(len(seen), out.strip(), shell.strip(), pools, asyncio.run(spawn()))\n"
    )
    result = await target.run(code, limits=Limits(timeout_s=30))
    assert result.status == "ok", result.stderr
    assert result.stdout == "8 42 2 [[0, 1, 4, 9], [0, 1, 4, 9], [0, 1, 4, 9]] 0\n"


async def test_pytest_runs_under_the_profile(target: Target) -> None:
    tests = (
        "import subprocess, sys\n"
        "def test_files(tmp_path):\n"
        "    (tmp_path / 'x').write_text('y')\n"
        "    assert (tmp_path / 'x').read_text() == 'y'\n"
        "def test_subprocess():\n"
        "    assert subprocess.run([sys.executable, '-c', 'pass']).returncode == 0\n"
    )
    job = ExecJob(
        files={"test_attack.py": tests},
        argv=["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_attack.py"],
        limits=Limits(timeout_s=30),
        env={"DC_ATTACK_MARKER": target.marker},
    )
    result = await target.sandbox.run(job)
    assert result.status == "ok", result.stdout + result.stderr
    assert "2 passed" in result.stdout


async def test_core_dumps_stay_off(target: Target) -> None:
    code = (
        "import os, resource, subprocess, sys\n"
        "print('core', resource.getrlimit(resource.RLIMIT_CORE))\n"
        "for limits in [(resource.RLIM_INFINITY, resource.RLIM_INFINITY), (1 << 20, 1 << 20)]:\n"
        "    try:\n"
        "        resource.setrlimit(resource.RLIMIT_CORE, limits)\n"
        "        print('raise', 'SUCCEEDED')\n"
        "    except (ValueError, OSError) as exc:\n"
        "        print('raise', 'REFUSED')\n"
        "try:\n"
        "    resource.prlimit(0, resource.RLIMIT_CORE, (1 << 20, 1 << 20))\n"
        "    print('prlimit', 'SUCCEEDED')\n"
        "except (ValueError, OSError):\n"
        "    print('prlimit', 'REFUSED')\n"
        "crash = subprocess.run([sys.executable, '-c', 'import os; os.abort()'])\n"
        "print('crash', crash.returncode)\n"
        "print('cores', sorted(name for name in os.listdir('.') if name.startswith('core')))\n"
    )
    result = await target.run(code)
    assert result.status == "ok", result.stderr
    assert result.stdout.splitlines() == [
        "core (0, 0)",
        "raise REFUSED",
        "raise REFUSED",
        "prlimit REFUSED",
        "crash -6",
        "cores []",
    ]


READ_CGROUP_LIMITS = r"""
import json, os
def first(*paths):
    for path in paths:
        if os.path.exists(path):
            return open(path).read().split()
    return None
memory = first("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max")
quota = first("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us")
period = first("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us")
if quota is None:
    quota, period = first("/sys/fs/cgroup/cpu.max")
    quota, period = [quota], [period]
print(json.dumps({"memory": int(memory[0]), "cpus": int(quota[0]) / int(period[0])}))
"""


async def test_a_huge_request_gets_at_most_the_host_share(
    target: Target, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_docker_spec, "_CLAMPS_LOGGED", set())
    host = HostResources.current()
    assert host.memory_mb is not None and host.cpus is not None
    share = SandboxSettings().max_host_share
    with caplog.at_level(logging.WARNING, logger=_docker_spec.__name__):
        result = await target.run(READ_CGROUP_LIMITS, limits=Limits(timeout_s=10, memory_mb=TEN_TB_MB, cpus=64))
    assert result.status == "ok", result.stderr
    seen = json.loads(result.stdout)
    assert 0 < seen["memory"] <= share * host.memory_mb * 1024 * 1024
    assert 0 < seen["cpus"] <= share * host.cpus
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("memory_mb" in w and str(TEN_TB_MB) in w for w in warnings), warnings
    assert any("cpus of 64" in w for w in warnings), warnings
