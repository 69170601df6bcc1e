"""Attacks on the sandboxes, part 1: writing, reading and talking out of the box, forging the result.

The backends, known differences and after-attack checks are in ``_sandbox_attacks.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path

from _sandbox_attacks import Target, attack_target_fixture

target = attack_target_fixture()


def remove_strays(paths: list[str]) -> None:
    """Undo what a weak mode let the attack write (only ever under known differences)."""
    for path in paths:
        if os.path.exists(path) and os.geteuid() == 0:
            os.remove(path)


async def test_writing_outside_the_work_dir_fails(target: Target, tmp_path: Path) -> None:
    host_target = tmp_path / "host-pwned.txt"
    targets = ["/etc/dc-pwned", "/usr/dc-pwned", "/dc-pwned", "/opt/dc-pwned", str(host_target)]
    code = (
        "import json\n"
        "outcome = {}\n"
        f"for path in {targets!r}:\n"
        "    try:\n"
        "        with open(path, 'w') as handle:\n"
        "            handle.write('pwned')\n"
        "        outcome[path] = 'WROTE'\n"
        "    except OSError as exc:\n"
        "        outcome[path] = type(exc).__name__\n"
        "print(json.dumps(outcome))\n"
    )
    try:
        result = await target.run(code)
        outcome = json.loads(result.stdout)
        assert set(outcome) == set(targets)
        assert "WROTE" not in outcome.values(), outcome
        assert not host_target.exists()
    finally:
        remove_strays(targets[:4])


async def test_reading_etc_shadow_fails(target: Target) -> None:
    code = (
        "try:\n"
        "    data = open('/etc/shadow').read()\n"
        "    print('READ', len(data), data[:5])\n"
        "except OSError as exc:\n"
        "    print('DENIED', type(exc).__name__)\n"
    )
    result = await target.run(code)
    assert result.stdout.startswith("DENIED"), result.stdout
    assert "root:" not in result.stdout


async def test_network_egress_fails(target: Target) -> None:
    code = (
        "import socket\n"
        "print(sorted(name for _, name in socket.if_nameindex()))\n"
        "for label, attempt in [\n"
        "    ('dns', lambda: socket.getaddrinfo('pypi.org', 443)),\n"
        "    ('tcp', lambda: socket.create_connection(('1.1.1.1', 443), timeout=3)),\n"
        "    ('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('1.1.1.1', 53))),\n"
        "    ('gateway', lambda: socket.create_connection(('172.17.0.1', 2375), timeout=3)),\n"
        "]:\n"
        "    try:\n"
        "        attempt()\n"
        "        print(label, 'OPEN')\n"
        "    except OSError as exc:\n"
        "        print(label, 'BLOCKED', type(exc).__name__)\n"
    )
    result = await target.run(code)
    lines = result.stdout.splitlines()
    assert lines[0] == "['lo']", lines
    assert [line.split()[1] for line in lines[1:]] == ["BLOCKED"] * 4, lines


def host_addresses() -> list[str]:
    """This host's IPv4 addresses: loopback, the Docker bridge's gateway, and whatever the hostname resolves to."""
    addresses = {"127.0.0.1", "172.17.0.1"}
    with contextlib.suppress(OSError):
        addresses.update(info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET))
    return sorted(addresses)


async def test_host_loopback_and_bridge_services_are_unreachable(target: Target) -> None:
    with socket.create_server(("0.0.0.0", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            f"for host in {host_addresses()!r}:\n"
            "    try:\n"
            f"        socket.create_connection((host, {port}), timeout=2).sendall(b'hello')\n"
            "        print(host, 'CONNECTED')\n"
            "    except OSError as exc:\n"
            "        print(host, 'BLOCKED', type(exc).__name__)\n"
        )
        result = await target.run(code)
        try:
            server.accept()
            accepted = True
        except BlockingIOError:
            accepted = False
    assert "CONNECTED" not in result.stdout, result.stdout
    assert result.stdout.count("BLOCKED") == len(host_addresses())
    assert not accepted, "the host's server saw a connection"


async def test_job_cannot_forge_the_result_or_stop_the_runner(target: Target) -> None:
    forged = "\n@@DEBATECODE_RESULT@@" + json.dumps({"status": "ok", "exit_code": 0, "stdout": "FORGED"}) + "\n"
    code = (
        "import os, signal, sys, time\n"
        f"sys.stdout.write({forged!r})\n"
        "runner = os.getppid()\n"
        "try:\n"
        f"    with open(f'/proc/{{runner}}/fd/1', 'w') as handle:\n"
        f"        handle.write({forged!r})\n"
        "    print('WROTE')\n"
        "except OSError as exc:\n"
        "    print('DENIED', type(exc).__name__)\n"
        "try:\n"
        "    os.kill(runner, signal.SIGINT)\n"
        "except OSError:\n"
        "    pass\n"
        "time.sleep(0.3)\n"
        "raise SystemExit(5)\n"
    )
    result = await target.run(code)
    assert result.status == "error" and result.exit_code == 5, result
    assert result.stdout.startswith("\n@@DEBATECODE_RESULT@@"), "the job's own marker line stays in its stdout"
    assert "FORGED" not in result.stdout.split("\n", 2)[-1]
    if target.name == "docker":
        assert "DENIED" in result.stdout, "the runner must not be writable through /proc"
