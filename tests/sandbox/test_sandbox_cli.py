"""``debatecode sandbox exec`` and ``cleanup`` through the real CLI, as users and external checks drive them."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from debatecode.sandbox._hygiene import OwnerToken

CLI = str(Path(sys.executable).with_name("debatecode"))
FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
MEMORY_BOMB = "blob = bytearray(4 * 1024 ** 3)\nprint(len(blob))\n"
NETWORK_PROBE = (
    "import socket\n"
    "for target in [('1.1.1.1', 53), ('127.0.0.1', 22), ('172.17.0.1', 2375)]:\n"
    "    try:\n"
    "        socket.create_connection(target, timeout=2)\n"
    "        print('OPEN', target)\n"
    "    except OSError as exc:\n"
    "        print('BLOCKED', type(exc).__name__)\n"
    "try:\n"
    "    socket.getaddrinfo('pypi.org', 443)\n"
    "    print('DNS OPEN')\n"
    "except OSError:\n"
    "    print('DNS BLOCKED')\n"
)


def sandbox_exec(path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], float]:
    started = time.monotonic()
    completed = subprocess.Popen(
        [CLI, "sandbox", "exec", str(path), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    stdout, stderr = completed.communicate(timeout=120)
    elapsed = time.monotonic() - started
    result = subprocess.CompletedProcess(completed.args, completed.returncode, stdout, stderr)
    result.pid = completed.pid  # type: ignore[attr-defined]
    return result, json.loads(stdout), elapsed


def containers_owned_by(pid: int) -> list[str]:
    listing = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=debatecode", "--format", '{{.ID}} {{.Label "debatecode.owner"}}'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split()[0] for line in listing.splitlines() if f":{pid}:" in line]


@pytest.mark.docker
@pytest.mark.parametrize(
    ("name", "code", "statuses"),
    [
        ("fork_bomb", FORK_BOMB, {"timeout", "error"}),
        ("memory_bomb", MEMORY_BOMB, {"oom"}),
        ("network_probe", NETWORK_PROBE, {"ok"}),
    ],
    ids=["fork_bomb", "memory_bomb", "network_probe"],
)
def test_exec_returns_clean_json_and_leaves_no_container(
    requires_docker: None, tmp_path: Path, name: str, code: str, statuses: set[str]
) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    completed, result, elapsed = sandbox_exec(path, "--backend", "docker", "--timeout", "4", "--memory", "128")
    assert completed.returncode == 0, completed.stderr
    assert set(result) == {
        "status",
        "exit_code",
        "stdout",
        "stderr",
        "stdout_truncated",
        "stderr_truncated",
        "truncated",
        "duration_s",
        "backend",
    }
    assert result["status"] in statuses and result["backend"] == "docker"
    assert elapsed < 4 + 20, f"{name} took {elapsed:.1f}s"
    if name == "network_probe":
        lines = result["stdout"].splitlines()
        assert len(lines) == 4 and all(line.startswith(("BLOCKED", "DNS BLOCKED")) for line in lines), lines
    if name == "memory_bomb":
        assert "4294967296" not in result["stdout"]
    assert containers_owned_by(completed.pid) == [], "docker ps -a still shows a container of this exec"  # type: ignore[attr-defined]


def test_exec_on_the_local_backend_and_its_truncation_flags(tmp_path: Path) -> None:
    path = tmp_path / "loud.py"
    path.write_text("import sys\nsys.stdout.write('x' * 300000)\nraise SystemExit(3)\n")
    completed, result, _ = sandbox_exec(path, "--backend", "local", "--timeout", "10")
    assert completed.returncode == 0
    assert (result["status"], result["exit_code"], result["backend"]) == ("error", 3, "local")
    assert result["stdout_truncated"] and result["truncated"] and not result["stderr_truncated"]
    assert len(result["stdout"]) == 200_000


def test_exec_exits_non_zero_only_when_the_sandbox_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "fine.py"
    path.write_text("print('fine')\n")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    completed, result, _ = sandbox_exec(path, "--backend", "docker")
    assert completed.returncode == 3
    assert "does not answer" in result["error"] and result["backend"] == "docker"


@pytest.mark.docker
def test_cleanup_removes_a_dead_owners_container_and_keeps_a_live_ones(requires_docker: None) -> None:
    import docker

    client = docker.from_env()
    me = OwnerToken.current()
    made = []
    try:
        for owner in (replace(me, boot_id="earlier-boot"), me):
            made.append(
                client.containers.run(
                    "debatecode/sandbox-python:latest",
                    ["python3", "-c", "import time; time.sleep(120)"],
                    labels={"debatecode": "1", "debatecode.owner": owner.label()},
                    network_mode="none",
                    detach=True,
                )
            )
        dead, alive = made
        dry = subprocess.run([CLI, "sandbox", "cleanup", "--dry-run"], capture_output=True, text=True, check=True)
        assert f"would remove {dead.name}" in dry.stdout
        assert client.containers.get(dead.id).status == "running", "a dry run removes nothing"
        completed = subprocess.run([CLI, "sandbox", "cleanup"], capture_output=True, text=True, check=True)
        assert f"removed {dead.name}: its owner process is gone" in completed.stdout
        remaining = {c.id for c in client.containers.list(all=True, filters={"label": "debatecode"})}
        assert dead.id not in remaining and alive.id in remaining
    finally:
        for container in made:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
        client.close()
