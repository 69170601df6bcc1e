"""Attacks on the sandboxes, part 3: host secrets, privileges, PID 1, and ``/proc`` and ``ctypes`` tricks."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _sandbox_attacks import Target, attack_target_fixture

target = attack_target_fixture()

REPO_ROOT = Path(__file__).resolve().parents[1]

READ_PATHS = """
import json, sys
outcome = {}
for path in sys.argv[1:] if len(sys.argv) > 1 else PATHS:
    try:
        with open(path, "rb") as handle:
            outcome[path] = "READ " + handle.read(4096).decode("latin-1")
    except OSError as exc:
        outcome[path] = type(exc).__name__
print(json.dumps(outcome))
"""


def read_paths_code(paths: list[str]) -> str:
    return f"PATHS = {paths!r}\n" + READ_PATHS


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A secret in this process's environment and in a host process started with it."""
    secret = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("DEBATECODE_TEST_CANARY", secret)
    holder = subprocess.Popen(["sleep", "60"], env={**os.environ, "DEBATECODE_TEST_CANARY": secret})
    yield secret
    holder.kill()
    holder.wait()


async def test_host_environment_is_invisible(target: Target, canary: str) -> None:
    code = (
        "import os\n"
        "seen = dict(os.environ)\n"
        "dumps = []\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n"
        "        try:\n"
        "            dumps.append(open(f'/proc/{pid}/environ', 'rb').read().decode('latin-1'))\n"
        "        except OSError:\n"
        "            pass\n"
        "print(repr(seen))\n"
        "print('\\n'.join(dumps))\n"
    )
    result = await target.run(code)
    assert result.status == "ok", result.stderr
    assert "DEBATECODE_TEST_CANARY" in os.environ and canary not in result.stdout


async def test_project_git_is_invisible(target: Target) -> None:
    paths = [str(REPO_ROOT / ".git" / "config"), str(REPO_ROOT / ".git" / "HEAD"), "../.git/config", "../../.git/HEAD"]
    result = await target.run(read_paths_code(paths))
    outcome = json.loads(result.stdout)
    assert not any(value.startswith("READ") for value in outcome.values()), outcome


async def test_store_database_is_invisible(target: Target, isolated_cwd: Path) -> None:
    store = isolated_cwd / ".debatecode" / "debatecode.db"
    store.parent.mkdir()
    secret = f"session-secret-{uuid.uuid4().hex}"
    with sqlite3.connect(store) as connection:
        connection.execute("create table sessions (secret text)")
        connection.execute("insert into sessions values (?)", (secret,))
    paths = [str(store), ".debatecode/debatecode.db", "../.debatecode/debatecode.db"]
    result = await target.run(read_paths_code(paths))
    outcome = json.loads(result.stdout)
    assert not any(value.startswith("READ") for value in outcome.values()), outcome
    assert secret not in result.stdout


async def test_setuid_and_chmod_plus_s_gain_nothing(target: Target) -> None:
    code = (
        "import os, shutil, stat, subprocess, sys\n"
        "status = dict(line.split(':', 1) for line in open('/proc/self/status') if ':' in line)\n"
        "print('uid', os.getuid(), os.geteuid(), 'nnp', status['NoNewPrivs'].strip())\n"
        "for name, call in [('setuid', lambda: os.setuid(0)), ('setgid', lambda: os.setgid(0)),\n"
        "                   ('setresuid', lambda: os.setresuid(0, 0, 0))]:\n"
        "    try:\n"
        "        call()\n"
        "        print(name, 'SUCCEEDED')\n"
        "    except OSError as exc:\n"
        "        print(name, 'DENIED', exc.errno)\n"
        "copy = os.path.abspath('suid-python')\n"
        "shutil.copy(sys.executable, copy)\n"
        "os.chmod(copy, 0o6755)\n"
        "print('mode', oct(stat.S_IMODE(os.stat(copy).st_mode)))\n"
        "out = subprocess.run([copy, '-S', '-c', 'import os; print(os.geteuid(), os.getegid())'], capture_output=True, text=True)\n"
        "print('suid-euid', out.stdout.strip() or out.stderr.strip()[-80:])\n"
    )
    result = await target.run(code)
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    uid, euid, _, nnp = lines["uid"].split()
    assert uid == euid != "0" and nnp == "1"
    assert [lines[name].split()[0] for name in ("setuid", "setgid", "setresuid")] == ["DENIED"] * 3
    assert not lines["suid-euid"].startswith("0 "), "a set-uid copy must not run as root"


SIGNAL_STORM = """
import os, signal, sys, time
targets = [int(arg) for arg in sys.argv[1:]] or TARGETS
for pid in targets:
    for signum in (signal.SIGSTOP, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL):
        try:
            os.kill(pid, signum)
        except OSError:
            pass
time.sleep(0.5)
print("still here")
raise SystemExit(4)
"""


async def test_signals_to_pid_1_change_nothing(target: Target) -> None:
    result = await target.run("TARGETS = [1]\n" + SIGNAL_STORM)
    assert (result.status, result.exit_code, result.stdout) == ("error", 4, "still here\n"), result
    after = await target.run("print('next job')")
    assert after.stdout == "next job\n"


async def test_killing_the_runner_is_refused(target: Target) -> None:
    result = await target.run("import os\nTARGETS = [os.getppid()]\n" + SIGNAL_STORM)
    assert (result.status, result.exit_code, result.stdout) == ("error", 4, "still here\n"), result


async def test_killing_the_runner_still_ends_in_a_clear_job_result(target: Target) -> None:
    result = await target.run("import os\nTARGETS = [os.getppid()]\n" + SIGNAL_STORM)
    assert result.status == "error" and result.exit_code in (4, None), result
    if result.exit_code is None:
        assert "runner was killed" in result.stderr
    after = await target.run("print('next job')")
    assert after.stdout == "next job\n"


async def test_proc_and_ctypes_tricks_fail(target: Target) -> None:
    code = (
        "import ctypes, json, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "parent = os.getppid()\n"
        "outcome = {}\n"
        "def attempt(name, call):\n"
        "    try:\n"
        "        value = call()\n"
        "        outcome[name] = 'OK' if value in (None, 0) or (isinstance(value, bytes) and value) else f'FAILED {ctypes.get_errno()}'\n"
        "    except OSError as exc:\n"
        "        outcome[name] = type(exc).__name__\n"
        "attempt('read /proc/1/environ', lambda: open('/proc/1/environ', 'rb').read())\n"
        "attempt('read runner environ', lambda: open(f'/proc/{parent}/environ', 'rb').read())\n"
        "attempt('write runner mem', lambda: open(f'/proc/{parent}/mem', 'r+b').write(b'x') and None)\n"
        "attempt('open runner stdout', lambda: open(f'/proc/{parent}/fd/1', 'wb').write(b'x') and None)\n"
        "attempt('ptrace runner', lambda: libc.ptrace(16, parent, None, None))\n"
        "attempt('ptrace pid 1', lambda: libc.ptrace(16, 1, None, None))\n"
        "attempt('mount tmpfs', lambda: libc.mount(b'none', b'/usr', b'tmpfs', 0, None))\n"
        "attempt('unshare mount ns', lambda: libc.unshare(0x00020000))\n"
        "attempt('write sysctl', lambda: open('/proc/sys/kernel/hostname', 'w').write('pwned') and None)\n"
        "attempt('chroot', lambda: libc.chroot(b'/tmp'))\n"
        "buffer = ctypes.create_string_buffer(b'original')\n"
        "with open('/proc/self/mem', 'r+b') as mem:\n"
        "    mem.seek(ctypes.addressof(buffer))\n"
        "    mem.write(b'PATCHED!')\n"
        "print(json.dumps(outcome))\n"
        "print('own memory:', buffer.value.decode())\n"
    )
    result = await target.run(code)
    assert result.status == "ok", result.stderr
    report, own_memory = result.stdout.splitlines()
    outcome = json.loads(report)
    assert len(outcome) == 10
    assert [name for name, value in outcome.items() if value == "OK"] == [], outcome
    # Writing through /proc/self/mem works, and changes nothing but the job's own process.
    assert own_memory == "own memory: PATCHED!"
    assert (await target.run("print('runner intact')")).stdout == "runner intact\n"
