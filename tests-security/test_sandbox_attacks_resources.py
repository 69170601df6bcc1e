"""Attacks on the sandboxes, part 2: exhausting processes, memory, disk, output and time; outliving the job.

Each attack must end with a clear result for its own job, inside its limits,
and leave the sandbox usable: every test runs a plain job afterwards.
"""

from __future__ import annotations

import time

from _sandbox_attacks import Target, attack_target_fixture, host_processes_with

from debatecode.sandbox.base import Limits

target = attack_target_fixture()


async def still_works(target: Target) -> None:
    after = await target.run("print('alive')")
    assert (after.status, after.stdout) == ("ok", "alive\n")


async def test_fork_bomb_returns_within_the_timeout(target: Target) -> None:
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    started = time.monotonic()
    result = await target.run(bomb, Limits(timeout_s=3, pids=64, memory_mb=256))
    elapsed = time.monotonic() - started
    assert result.status in {"timeout", "error", "oom"}
    assert elapsed < 3 + 10, f"the fork bomb held the sandbox for {elapsed:.1f}s"
    await still_works(target)


async def test_memory_bomb_is_stopped_at_the_limit(target: Target) -> None:
    bomb = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n"
    started = time.monotonic()
    result = await target.run(bomb, Limits(timeout_s=10, memory_mb=128))
    assert time.monotonic() - started < 10
    if target.name == "docker":
        assert result.status == "oom", result
    else:
        assert result.status in {"oom", "error"} and "MemoryError" in result.stderr, result
    await still_works(target)


async def test_filling_the_disk_stops_at_the_cap(target: Target) -> None:
    code = (
        "import os\n"
        "chunk = b'x' * (1024 * 1024)\n"
        "written, error = 0, ''\n"
        "try:\n"
        "    for index in range(48):\n"
        "        with open(f'fill-{index}.bin', 'wb') as handle:\n"
        "            handle.write(chunk)\n"
        "        written += 1\n"
        "except OSError as exc:\n"
        "    error = exc.strerror\n"
        "print(written, error)\n"
    )
    result = await target.run(code, Limits(timeout_s=20, disk_mb=8))
    written, _, error = result.stdout.strip().partition(" ")
    assert result.status == "ok", result.stderr
    assert int(written) <= 8, f"the job wrote {written} MiB into an 8 MiB work dir"
    assert error == "No space left on device"
    await still_works(target)


async def test_gigabytes_of_stdout_are_capped_and_flagged(target: Target) -> None:
    code = (
        "import os\n"
        "block = b'o' * (1024 * 1024)\n"
        "for _ in range(1024):\n"
        "    os.write(1, block)\n"
        "os.write(2, b'e' * (8 * 1024 * 1024))\n"
    )
    started = time.monotonic()
    result = await target.run(code, Limits(timeout_s=60, output_bytes=64 * 1024))
    assert result.status == "ok", result.stderr[:200]
    assert result.stdout == "o" * 64 * 1024 and result.stdout_truncated
    assert result.stderr == "e" * 64 * 1024 and result.stderr_truncated
    assert time.monotonic() - started < 60
    await still_works(target)


async def test_infinite_loop_times_out(target: Target) -> None:
    started = time.monotonic()
    result = await target.run("while True:\n    pass\n", Limits(timeout_s=2))
    assert (result.status, result.exit_code) == ("timeout", None)
    assert time.monotonic() - started < 2 + 8


async def test_sleeping_past_the_timeout_even_ignoring_sigterm(target: Target) -> None:
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('asleep', flush=True)\ntime.sleep(60)\n"
    started = time.monotonic()
    result = await target.run(code, Limits(timeout_s=1.5))
    assert (result.status, result.stdout) == ("timeout", "asleep\n")
    assert time.monotonic() - started < 1.5 + 8
    await still_works(target)


DAEMON = """
import os, sys, time
marker = os.environ["DC_ATTACK_MARKER"]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
    os._exit(0)
time.sleep(0.3)
print("daemonized")
"""

LOOK_FOR_DAEMON = """
import os
marker = os.environ["DC_ATTACK_MARKER"].encode()
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            if marker in open(f"/proc/{pid}/cmdline", "rb").read():
                seen.append(pid)
        except OSError:
            pass
print("seen", seen)
"""


async def test_a_daemon_does_not_outlive_its_job(target: Target) -> None:
    result = await target.run(DAEMON)
    assert (result.status, result.stdout) == ("ok", "daemonized\n")
    assert host_processes_with(target.marker) == [], "no process of the job is left on the host"
    # With Docker the next job runs in the same warm container: the daemon is gone from there too.
    after = await target.run(LOOK_FOR_DAEMON)
    assert after.stdout == "seen []\n"
