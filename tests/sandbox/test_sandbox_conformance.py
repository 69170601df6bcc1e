"""One conformance suite for every sandbox backend: the basics.

The backends, the fixture and the known differences are in ``conftest.py``;
``test_sandbox_conformance_reuse.py`` covers reuse: no state leaks between
jobs, batches, and per-test checks.
"""

from __future__ import annotations

import socket
import time

from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox


async def py(sandbox: Sandbox, code: str, **kwargs: object) -> ExecResult:
    return await sandbox.run(ExecJob(files={"main.py": code}, argv=["python3", "main.py"], **kwargs))  # type: ignore[arg-type]


async def test_exit_codes_and_streams(sandbox: Sandbox) -> None:
    ok = await py(sandbox, "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n")
    assert (ok.status, ok.exit_code, ok.stdout, ok.stderr) == ("ok", 0, "to out\n", "to err\n")
    assert ok.backend == sandbox.name
    failed = await py(sandbox, "raise SystemExit(7)")
    assert (failed.status, failed.exit_code) == ("error", 7)
    crashed = await py(sandbox, "1 / 0")
    assert crashed.status == "error" and crashed.exit_code == 1 and "ZeroDivisionError" in crashed.stderr


async def test_env_and_collected_files(sandbox: Sandbox) -> None:
    code = "import os\nopen('out/result.txt', 'w').write(os.environ['ANSWER'])\n"
    result = await sandbox.run(
        ExecJob(
            files={"main.py": code, "out/.keep": ""},
            argv=["python3", "main.py"],
            env={"ANSWER": "42"},
            collect=["out/result.txt", "never-written.txt"],
        )
    )
    assert result.status == "ok", result.stderr
    assert result.files == {"out/result.txt": "42"}


async def test_timeout_status_within_the_limit(sandbox: Sandbox) -> None:
    started = time.monotonic()
    result = await py(
        sandbox, "import time\nprint('begun', flush=True)\ntime.sleep(60)\n", limits=Limits(timeout_s=1.5)
    )
    elapsed = time.monotonic() - started
    assert result.status == "timeout" and result.exit_code is None
    assert result.stdout == "begun\n", "output produced before the timeout is kept"
    assert elapsed < 1.5 + 4


async def test_output_is_truncated_at_the_cap(sandbox: Sandbox) -> None:
    result = await py(
        sandbox,
        "import sys\nsys.stdout.write('o' * 300000)\nsys.stderr.write('e' * 10)\n",
        limits=Limits(output_bytes=4096),
    )
    assert result.status == "ok"
    assert result.stdout == "o" * 4096 and result.stdout_truncated
    assert result.stderr == "e" * 10 and not result.stderr_truncated
    assert result.truncated


async def test_memory_limit_is_a_job_result_not_a_host_problem(sandbox: Sandbox) -> None:
    result = await py(sandbox, "blob = 'x' * (1024 ** 3)\nprint(len(blob))\n", limits=Limits(memory_mb=128))
    assert result.status in {"oom", "error"}, result
    assert "1073741824" not in result.stdout
    if sandbox.name == "docker":
        assert result.status == "oom"
    after = await py(sandbox, "print('still fine')")
    assert after.stdout == "still fine\n"


async def test_no_network_interfaces_or_egress(sandbox: Sandbox) -> None:
    code = (
        "import socket\n"
        "print(sorted(name for _, name in socket.if_nameindex()))\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
        "s.settimeout(3)\n"
        "try:\n"
        "    s.connect(('1.1.1.1', 53))\n"
        "    print('CONNECTED')\n"
        "except OSError as exc:\n"
        "    print('BLOCKED', exc)\n"
    )
    result = await py(sandbox, code)
    assert result.status == "ok", result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "['lo']"
    assert lines[1].startswith("BLOCKED")


async def test_cannot_reach_a_server_on_host_loopback(sandbox: Sandbox) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "    print('CONNECTED')\n"
            "except OSError as exc:\n"
            "    print('BLOCKED', exc)\n"
        )
        result = await py(sandbox, code)
        try:
            server.accept()
            accepted = True
        except BlockingIOError:
            accepted = False
    assert result.stdout.startswith("BLOCKED"), result.stdout
    assert not accepted


async def test_files_are_not_shared_between_jobs(sandbox: Sandbox) -> None:
    first = await py(
        sandbox,
        "import os, tempfile\nopen('leak.txt', 'w').write('1')\nopen(os.path.join(tempfile.gettempdir(), 'leak.txt'), 'w').write('1')\n",
    )
    assert first.status == "ok", first.stderr
    second = await py(
        sandbox,
        "import os, tempfile\nprint(sorted(os.listdir('.')), os.path.exists(os.path.join(tempfile.gettempdir(), 'leak.txt')))\n",
    )
    assert second.stdout == "['main.py'] False\n"


async def test_pytest_is_importable_inside(sandbox: Sandbox) -> None:
    tests = "def test_passes():\n    assert 1 + 1 == 2\n\ndef test_fails():\n    assert 1 + 1 == 3\n"
    result = await sandbox.run(
        ExecJob(
            files={"test_sample.py": tests},
            argv=["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_sample.py"],
        )
    )
    assert result.status == "error" and result.exit_code == 1
    assert "1 failed, 1 passed" in result.stdout
    command = await sandbox.run(ExecJob(argv=["pytest", "--version"]))
    assert command.status == "ok", command.stderr
    assert "pytest" in command.stdout + command.stderr


async def test_refused_path_is_a_result_not_an_exception(sandbox: Sandbox) -> None:
    result = await sandbox.run(ExecJob(files={"../escape.py": "x"}, argv=["python3", "-c", "print(1)"]))
    assert result.status == "error"
    assert "refused" in result.stderr
