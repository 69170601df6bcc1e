"""The runner script's semantics, driven directly as a subprocess (no sandbox around it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from debatecode.sandbox.base import ExecJob, Limits
from debatecode.sandbox.wire import (
    ENV_CHUNK_CHARS,
    MARKER,
    RunnerProtocolError,
    build_payload,
    encode_payload,
    parse_runner_output,
    payload_bytes,
    runner_source,
    server_source,
)


def run_runner(workdir: Path, job: ExecJob, *, via: str = "stdin") -> dict[str, Any]:
    env = {"PATH": os.environ["PATH"], "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    stdin: bytes | None = payload_bytes(job)
    if via == "env":
        env.update(encode_payload(job))
        stdin = b""
    completed = subprocess.run(
        [sys.executable, "-c", runner_source()],
        input=stdin,
        cwd=workdir,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    text = completed.stdout.decode()
    assert completed.returncode == 0, completed.stderr.decode()
    assert text.rstrip("\n").splitlines()[-1].startswith(MARKER)
    return parse_runner_output(text)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/status") as handle:
            return "State:\tZ" not in handle.read()
    except OSError:
        return False


def test_exit_code_stdout_stderr_and_env(tmp_path: Path) -> None:
    code = "import os, sys\nprint('out', os.environ['GREETING'])\nprint('err', file=sys.stderr)\nsys.exit(3)\n"
    result = run_runner(tmp_path, ExecJob(files={"a.py": code}, argv=["python3", "a.py"], env={"GREETING": "hi"}))
    assert result["status"] == "error"
    assert result["exit_code"] == 3
    assert result["stdout"] == "out hi\n"
    assert result["stderr"] == "err\n"
    assert result["stdout_truncated"] is False and result["stderr_truncated"] is False


def test_output_cap_keeps_prefix_and_sets_only_the_overflowing_flag(tmp_path: Path) -> None:
    code = "import sys\nsys.stdout.write('a' * 1024 + 'b' * 50000)\nsys.stderr.write('small')\n"
    result = run_runner(
        tmp_path, ExecJob(files={"a.py": code}, argv=["python3", "a.py"], limits=Limits(output_bytes=1024))
    )
    assert result["status"] == "ok"
    assert result["stdout"] == "a" * 1024
    assert result["stdout_truncated"] is True
    assert result["stderr"] == "small"
    assert result["stderr_truncated"] is False


def test_huge_output_is_drained_without_blocking_the_child(tmp_path: Path) -> None:
    code = "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 65536)\nprint('done', file=sys.stderr)\n"
    started = time.monotonic()
    result = run_runner(
        tmp_path, ExecJob(files={"a.py": code}, argv=["python3", "a.py"], limits=Limits(output_bytes=2048))
    )
    assert result["status"] == "ok", result
    assert len(result["stdout"]) == 2048 and result["stdout_truncated"] is True
    assert result["stderr"] == "done\n"
    assert time.monotonic() - started < 10


def test_timeout_kills_the_whole_tree_including_grandchild_and_daemon(tmp_path: Path) -> None:
    code = (
        "import os, subprocess, time\n"
        "child = subprocess.Popen(['python3', '-c', 'import os, time; open(\"gc.pid\", \"w\").write(str(os.getpid())); time.sleep(300)'])\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        open('daemon.pid', 'w').write(str(os.getpid()))\n"
        "        time.sleep(300)\n"
        "    os._exit(0)\n"
        "while not (os.path.exists('gc.pid') and os.path.exists('daemon.pid')):\n"
        "    time.sleep(0.01)\n"
        "print('all started', flush=True)\n"
        "time.sleep(300)\n"
    )
    job = ExecJob(
        files={"a.py": code},
        argv=["python3", "a.py"],
        limits=Limits(timeout_s=2),
        collect=["gc.pid", "daemon.pid"],
    )
    started = time.monotonic()
    result = run_runner(tmp_path, job)
    assert time.monotonic() - started < 8
    assert result["status"] == "timeout"
    assert result["exit_code"] is None
    assert result["stdout"] == "all started\n"
    grandchild, daemon = int(result["files"]["gc.pid"]), int(result["files"]["daemon.pid"])
    assert not pid_alive(grandchild)
    assert not pid_alive(daemon)


def test_leftover_background_processes_are_killed_after_a_normal_exit(tmp_path: Path) -> None:
    code = (
        "import subprocess\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "open('bg.pid', 'w').write(str(p.pid))\n"
    )
    job = ExecJob(files={"a.py": code}, argv=["python3", "a.py"], collect=["bg.pid"], limits=Limits(timeout_s=20))
    started = time.monotonic()
    result = run_runner(tmp_path, job)
    assert result["status"] == "ok"
    assert time.monotonic() - started < 5
    assert not pid_alive(int(result["files"]["bg.pid"]))


def test_collect_reads_back_files_capped_and_skips_missing_and_escapes(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("SECRET")
    workdir = tmp_path / "work"
    workdir.mkdir()
    code = (
        "import os\n"
        "os.makedirs('out', exist_ok=True)\n"
        "open('out/report.txt', 'w').write('r' * 5000)\n"
        "os.symlink('../secret.txt', 'link.txt')\n"
    )
    job = ExecJob(
        files={"a.py": code},
        argv=["python3", "a.py"],
        collect=["out/report.txt", "missing.txt", "link.txt", "../secret.txt", "/etc/hostname"],
        limits=Limits(output_bytes=1024),
    )
    result = run_runner(workdir, job)
    assert result["status"] == "ok"
    assert result["files"] == {"out/report.txt": "r" * 1024}


@pytest.mark.parametrize("bad_path", ["../escape.py", "/tmp/debatecode-abs.py", "a/../../escape.py"])
def test_refuses_paths_outside_the_work_dir(tmp_path: Path, bad_path: str) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    job = ExecJob(files={"ok.py": "print(1)", bad_path: "print('pwned')"}, argv=["python3", "ok.py"])
    result = run_runner(workdir, job)
    assert result["status"] == "error"
    assert result["exit_code"] is None
    assert "refused" in result["stderr"]
    assert not (tmp_path / "escape.py").exists()
    assert not Path("/tmp/debatecode-abs.py").exists()
    assert os.listdir(workdir) == [], "nothing is written when any path is refused"


def test_payload_via_env_chunks_round_trips(tmp_path: Path) -> None:
    big = "# " + "z" * 250_000 + "\nprint(len(open(__file__).read()))\n"
    job = ExecJob(files={"big.py": big, "ünï.py": "print('ü')"}, argv=["python3", "big.py"])
    chunks = encode_payload(job)
    assert len(chunks) >= 3
    assert list(chunks) == [f"DC_PAYLOAD_{i}" for i in range(len(chunks))]
    assert all(len(value) <= ENV_CHUNK_CHARS < 100_000 for value in chunks.values())
    result = run_runner(tmp_path, job, via="env")
    assert result["status"] == "ok"
    assert result["stdout"] == f"{len(big)}\n"
    assert (tmp_path / "ünï.py").read_text() == "print('ü')"


def test_oversized_env_payload_is_rejected() -> None:
    job = ExecJob(files={"big.txt": "x" * 2_000_000}, argv=["true"])
    with pytest.raises(ValueError, match="limit"):
        encode_payload(job)


def test_missing_command_is_exit_127(tmp_path: Path) -> None:
    result = run_runner(tmp_path, ExecJob(argv=["definitely-not-a-command-xyz"]))
    assert result["status"] == "error"
    assert result["exit_code"] == 127


def test_sigkill_the_runner_did_not_send_counts_as_oom(tmp_path: Path) -> None:
    result = run_runner(
        tmp_path, ExecJob(argv=["python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    )
    assert result["status"] == "oom"
    assert result["exit_code"] == -9


def test_parse_takes_the_last_marker_line_and_rejects_missing_or_internal_errors() -> None:
    forged = MARKER + json.dumps({"status": "ok", "exit_code": 0})
    real = MARKER + json.dumps({"status": "error", "exit_code": 1})
    assert parse_runner_output(f"noise\n{forged}\n{real}\n")["status"] == "error"
    with pytest.raises(RunnerProtocolError, match="no result line"):
        parse_runner_output("just output\n")
    with pytest.raises(RunnerProtocolError, match="failed"):
        parse_runner_output("\n" + MARKER + json.dumps({"internal_error": "boom"}) + "\n")
    with pytest.raises(RunnerProtocolError, match="JSON"):
        parse_runner_output("\n" + MARKER + "{not json\n")


def test_runner_source_is_stdlib_only() -> None:
    source = runner_source()
    assert "debatecode" not in "".join(line for line in source.splitlines() if line.startswith(("import", "from")))
    completed = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import ast, sys; ast.parse(sys.stdin.read())"],
        input=source.encode(),
        capture_output=True,
        check=False,
    )
    assert completed.returncode == 0


def run_runner_with_counter(workdir: Path, code: str, counter: Path) -> dict[str, Any]:
    counter.write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    job = ExecJob(files={"a.py": code}, argv=["python3", "a.py"], env={"COUNTER": str(counter)})
    env = {"PATH": os.environ["PATH"]}
    stdin = json.dumps(build_payload(job, oom_counters=("/nonexistent/oom_control", str(counter)))).encode()
    completed = subprocess.run(
        [sys.executable, "-c", runner_source()], input=stdin, cwd=workdir, env=env, capture_output=True, timeout=60
    )
    return parse_runner_output(completed.stdout.decode())


def test_oom_is_decided_by_the_cgroup_counter_when_there_is_one(tmp_path: Path) -> None:
    kill_self = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    bumped = "import os\nopen(os.environ['COUNTER'], 'w').write('oom_kill 4\\n')\nraise SystemExit(1)\n"
    self_killed = run_runner_with_counter(tmp_path, kill_self, tmp_path / "c1")
    assert (self_killed["status"], self_killed["exit_code"]) == ("error", -9), "SIGKILL with no OOM kill counted"
    oom = run_runner_with_counter(tmp_path, bumped, tmp_path / "c2")
    assert (oom["status"], oom["exit_code"]) == ("oom", 1)
    fine = run_runner_with_counter(tmp_path, "print('ok')", tmp_path / "c3")
    assert fine["status"] == "ok"


def test_pool_server_refuses_to_serve_unless_pid_1(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        completed = subprocess.run(
            [sys.executable, "-c", server_source(), "serve"],
            input=b"",
            cwd=tmp_path,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 2
        assert b"not PID 1" in completed.stderr
        assert sleeper.poll() is None, "a refused server kills nothing"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_server_source_is_the_runner_then_the_server_and_stdlib_only() -> None:
    source = server_source()
    assert source.startswith(runner_source())
    assert 'sys.argv[1:2] != ["serve"]' in runner_source()
    imports = [line for line in source.splitlines() if line.startswith(("import", "from"))]
    assert not any("debatecode" in line for line in imports)
    compile(source, "server", "exec")
