"""A debatecode process stopped (Ctrl-Z, SIGSTOP) while a job runs does not score that job as a timeout.

The host-side limits run on ``RunningClock``, which leaves out the time the
process was stopped. Each test runs the waiting side in a child process, stops
it with SIGSTOP while its job runs, for longer than the host-side limit, and
checks what the child reports once it continues. The first test shows what
``asyncio.wait_for`` (the monotonic clock) reports in the same situation.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time

import pytest

_CLOCK_CHILD = """
import asyncio, sys
from debatecode.sandbox._host_clock import RunningClock, wait_within

clock = RunningClock(tick_s=0.05, stall_s=0.3)

async def job() -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(1); print('finished')", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    return out.decode().strip()

async def main() -> None:
    clock.now()
    print("ready", flush=True)
    waits = {
        "running clock": wait_within(job(), 2.0, clock),
        "monotonic clock": asyncio.wait_for(job(), 2.0),
    }
    results = await asyncio.gather(*waits.values(), return_exceptions=True)
    for name, result in zip(waits, results):
        print(f"{name}: {type(result).__name__ if isinstance(result, BaseException) else result}", flush=True)
    await asyncio.sleep(0.3)  # a few ticks, so that the watching thread has seen the stop
    print(f"stalled: {clock.stalled_s:.1f}", flush=True)

asyncio.run(main())
"""

_SANDBOX_CHILD = """
import asyncio, sys
from debatecode.config import SandboxSettings
from debatecode.sandbox.base import ExecJob, Limits

async def main(backend: str) -> None:
    if backend == "docker":
        from debatecode.sandbox.docker import DockerSandbox
        sandbox = DockerSandbox(SandboxSettings(pool_size=1, sweep_on_start=False), host_grace_s=1.0)
        await sandbox.warm()
    else:
        from debatecode.sandbox.local import LocalSandbox
        sandbox = LocalSandbox()
    job = ExecJob(argv=["python3", "-c", "import time; time.sleep(0.5); print('finished')"], limits=Limits(timeout_s=3))
    print("ready", flush=True)
    result = await sandbox.run(job)
    print(f"status: {result.status}; stdout: {result.stdout.strip()}", flush=True)
    await sandbox.aclose()

asyncio.run(main(sys.argv[1]))
"""


def _stop_while_running(code: str, args: list[str], stop_s: float) -> str:
    """Run ``code`` in a child; once it says ``ready``, stop it for ``stop_s`` seconds; its whole output."""
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "ready", f"{line!r}; stderr: {child.stderr.read() if child.stderr else ''}"
        time.sleep(0.4)  # the job is running now
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(stop_s)
        os.kill(child.pid, signal.SIGCONT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    return line + out


def test_a_stop_does_not_use_up_the_running_clock_but_does_use_up_the_monotonic_one() -> None:
    out = _stop_while_running(_CLOCK_CHILD, [], stop_s=3.0)
    assert "running clock: finished" in out, out
    assert "monotonic clock: TimeoutError" in out, out  # what the host-side limits did before
    stalled = float(out.rsplit("stalled: ", 1)[1])
    assert 2.0 <= stalled <= 4.0, out


@pytest.mark.parametrize(
    ("backend", "stop_s"),
    [
        pytest.param("docker", 5.0, marks=pytest.mark.docker, id="docker"),  # limit 3 s + host grace 1 s
        pytest.param("local", 9.0, id="local"),  # limit 3 s + the local backend's host grace of 5 s
    ],
)
def test_a_job_that_finishes_while_the_host_is_stopped_keeps_its_result(
    backend: str, stop_s: float, request: pytest.FixtureRequest
) -> None:
    if backend == "docker":
        request.getfixturevalue("requires_docker")
    out = _stop_while_running(_SANDBOX_CHILD, [backend], stop_s=stop_s)
    assert "status: ok; stdout: finished" in out, out


def test_the_running_clock_holds_still_through_a_stop_and_never_goes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from debatecode.sandbox import _host_clock

    now = [100.0]
    monkeypatch.setattr(_host_clock.time, "monotonic", lambda: now[0])
    clock = _host_clock.RunningClock(tick_s=0.2, stall_s=1.5, watch=False)
    readings = []
    for _ in range(5):  # running normally: ticks every 0.2 s
        now[0] += 0.2
        clock.tick()
        readings.append(clock.now())
    assert readings[-1] - readings[0] == pytest.approx(0.8)
    now[0] += 30.0  # stopped for 30 s: the first reading after it, before the next tick, holds still
    held = clock.now()
    assert held == pytest.approx(readings[-1] + 1.5)
    clock.tick()  # the tick that notices the stop takes all but 1.5 s of it off
    assert clock.now() == pytest.approx(held)
    assert clock.stalled_s == pytest.approx(28.5)
    now[0] += 0.2
    clock.tick()
    assert clock.now() == pytest.approx(held + 0.2)


def test_a_forked_child_gets_a_clock_of_its_own_even_when_the_lock_was_held() -> None:
    from debatecode.sandbox._host_clock import HOST_CLOCK

    HOST_CLOCK.now()
    read, write = os.pipe()
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:  # another thread holds the lock at the fork, as the watching thread may
        with HOST_CLOCK._lock:
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)
    try:
        pid = os.fork()
    finally:
        release.set()
        holder.join()
    if pid == 0:  # the child: reading the clock must neither block nor fail
        try:
            HOST_CLOCK.now()
            os.write(write, b"ok")
        finally:
            os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 10)
        got = os.read(read, 2) if ready else b""
    finally:
        os.close(read)
        if not got:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert got == b"ok", "the child blocked on the lock its parent held at the fork"
