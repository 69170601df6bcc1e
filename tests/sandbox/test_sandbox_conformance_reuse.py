"""One conformance suite for every sandbox backend: reuse.

Docker runs these with a warm pool of one container, so consecutive jobs share
a container (the tests check that they do) and what is tested is the reset
between them. Nothing of one job may be seen by the next: files, processes,
environment, ``/tmp``, ``/dev/shm``, SysV IPC. The host must not see any
process of a job once the job is over.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox
from debatecode.sandbox.checks import CheckJob, run_checks


def host_processes_with(marker: str) -> list[int]:
    """Pids of host processes whose command line or environment holds ``marker``."""
    found: list[int] = []
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{name}/{part}", "rb") as handle:
                    if needle in handle.read():
                        found.append(int(name))
                        break
            except OSError:
                continue
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    value = f"dcleak{uuid.uuid4().hex[:12]}"
    yield value
    for pid in host_processes_with(value):
        os.kill(pid, 9)


async def py(sandbox: Sandbox, code: str, marker: str, **kwargs: object) -> ExecResult:
    return await sandbox.run(
        ExecJob(files={"main.py": code}, argv=["python3", "main.py"], env={"DC_MARKER": marker}, **kwargs)  # type: ignore[arg-type]
    )


DAEMON = """
import os, subprocess, sys, time
marker = os.environ["DC_MARKER"]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        # A grandchild in its own session, with the marker in its command line.
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", marker])
    os._exit(0)
time.sleep(0.3)
seen = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in open(f"/proc/{p}/cmdline", "rb").read()]
print("daemon running:", bool(seen))
"""

SEE_DAEMON = """
import os
marker = os.environ["DC_MARKER"]
seen = []
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            if marker.encode() in open(f"/proc/{p}/cmdline", "rb").read():
                seen.append(p)
        except OSError:
            pass
print("daemon seen:", seen)
"""


async def test_a_daemon_is_gone_for_the_next_job_and_the_host(sandbox: Sandbox, marker: str) -> None:
    started = await py(sandbox, DAEMON, marker)
    assert started.status == "ok", started.stderr
    assert started.stdout == "daemon running: True\n"
    after = await py(sandbox, SEE_DAEMON, marker)
    assert after.stdout == "daemon seen: []\n"
    assert host_processes_with(marker) == []


LEAVE_STATE = """
import ctypes, os, socket
marker = os.environ["DC_MARKER"]
os.environ["DC_LEFT_BEHIND"] = marker
open("left.txt", "w").write(marker)
os.makedirs("locked/inner", exist_ok=True)
os.chmod("locked", 0)
for path in ("/tmp/" + marker, "/dev/shm/" + marker):
    try:
        open(path, "w").write(marker)
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
key = int(marker[-6:], 16)
print("shm", libc.shmget(key, 4096, 0o1000 | 0o600) >= 0, "host", socket.gethostname())
"""

SEE_STATE = """
import ctypes, os, socket
marker = os.environ["DC_MARKER"]
libc = ctypes.CDLL(None, use_errno=True)
key = int(marker[-6:], 16)
print(sorted(os.listdir(".")))
print(os.environ.get("DC_LEFT_BEHIND"))
print([p for p in ("/tmp/" + marker, "/dev/shm/" + marker) if os.path.exists(p)])
print("shm", libc.shmget(key, 0, 0) >= 0, "host", socket.gethostname())
"""


def remove_host_leftovers(marker: str) -> None:
    """Only a weak (known-difference) mode can leave these on the host."""
    for path in ("/tmp/" + marker, "/dev/shm/" + marker):
        if os.path.exists(path):
            os.remove(path)
    subprocess.run(["ipcrm", "-M", str(int(marker[-6:], 16))], capture_output=True, check=False)


async def test_tmp_shm_and_ipc_do_not_leak_between_jobs(sandbox: Sandbox, marker: str) -> None:
    try:
        first = await py(sandbox, LEAVE_STATE, marker)
        assert first.status == "ok", first.stderr
        second = await py(sandbox, SEE_STATE, marker)
        assert second.status == "ok", second.stderr
        files, env, paths, shm = second.stdout.splitlines()
        if sandbox.name == "docker":
            assert shm.split()[-1] == first.stdout.split()[-1], "both jobs ran in the same warm container"
        assert files == "['main.py']"
        assert env == "None"
        assert paths == "[]"
        assert shm.split()[:2] == ["shm", "False"]
    finally:
        remove_host_leftovers(marker)


async def test_timeout_kills_the_whole_tree_even_a_setsid_daemon(sandbox: Sandbox, marker: str) -> None:
    code = DAEMON.replace('print("daemon running:", bool(seen))', 'print("daemon running:", bool(seen), flush=True)')
    code += "\ntime.sleep(120)\n"
    started = time.monotonic()
    result = await py(sandbox, code, marker, limits=Limits(timeout_s=2))
    assert result.status == "timeout" and result.stdout == "daemon running: True\n"
    assert time.monotonic() - started < 2 + 8
    assert host_processes_with(marker) == []
    after = await py(sandbox, SEE_DAEMON, marker)
    assert after.stdout == "daemon seen: []\n"


async def test_batch_keeps_job_order_and_runs_jobs_concurrently(sandbox: Sandbox, marker: str) -> None:
    # Each job prints its index and when it ran, by the clock the host and every sandbox share; overlap in
    # those intervals shows concurrency whatever the machine's load (no time limit to miss on a busy host).
    code = "import sys, time; a = time.time(); time.sleep(1.0); print(sys.argv[1], a, time.time())"
    jobs = [ExecJob(argv=["python3", "-c", code, str(i)], env={"DC_MARKER": marker}) for i in range(4)]
    results = await sandbox.run_batch(jobs, concurrency=2)
    assert all(r.status == "ok" for r in results), [r.stderr for r in results]
    printed = [r.stdout.split() for r in results]
    assert [line[0] for line in printed] == ["0", "1", "2", "3"], "results come back in job order"
    spans = [(float(line[1]), float(line[2])) for line in printed]
    overlapping = [
        (i, j)
        for i in range(4)
        for j in range(i + 1, 4)
        if max(spans[i][0], spans[j][0]) < min(spans[i][1], spans[j][1])
    ]
    assert overlapping, f"no two of the 4 jobs ran at the same time: {spans}"
    for start, _ in spans:
        running = sum(1 for begin, end in spans if begin <= start < end)
        assert running <= 2, f"more than 2 jobs ran at once at concurrency 2: {spans}"


async def test_checks_give_per_test_outcomes(sandbox: Sandbox) -> None:
    tests = (
        "def test_ok():\n    assert inc(1) == 2\n"
        "def test_wrong():\n    assert inc(1) == 3\n"
        "def test_slow():\n    while True:\n        pass\n"
    )
    jobs = [
        CheckJob(code="def inc(x):\n    return x + 1\n", tests=tests, name="inc", test_timeout_s=1),
        CheckJob(
            code="def inc(x):\n    return x + 1\n", tests="def check(f):\n    assert f(0) == 1\n", entry_point="inc"
        ),
    ]
    first, second = await run_checks(sandbox, jobs, limits=Limits(timeout_s=20))
    assert [(t.name, t.outcome) for t in first.tests] == [
        ("test_ok", "passed"),
        ("test_wrong", "failed"),
        ("test_slow", "timeout"),
    ]
    assert first.tests[2].duration_s >= 0.9 and first.backend == sandbox.name
    assert second.passed and second.status == "ok"
