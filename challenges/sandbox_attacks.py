"""A user feeds hostile programs to `sandbox exec`: each ends in clean JSON and leaves no container behind."""

from __future__ import annotations

import json

from challenges._harness import Journey, expect

NEEDS_DOCKER = True

ATTACKS = {
    "fork bomb": ("import os\nwhile True:\n    os.fork()\n", {"error", "timeout", "killed"}),
    "memory bomb": ("b = []\nwhile True:\n    b.append(bytearray(64 << 20))\n", {"oom"}),
    "network probe": (
        "import socket\n"
        "for host, port in [('1.1.1.1', 53), ('8.8.8.8', 443), ('172.17.0.1', 2375)]:\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=2).close()\n"
        "        print('CONNECTED', host)\n"
        "    except OSError:\n"
        "        print('blocked', host)\n",
        {"ok"},
    ),
}


def run(journey: Journey) -> str:
    seen = []
    for name, (source, statuses) in ATTACKS.items():
        path = journey.workdir / (name.replace(" ", "_") + ".py")
        path.write_text(source)
        proc = journey.cli("sandbox", "exec", "--backend", "docker", "--timeout", "10", str(path))
        expect(proc.returncode == 0, f"{name}: exit {proc.returncode}", proc.stdout + proc.stderr)
        result = json.loads(proc.stdout)
        expect(result["status"] in statuses, f"{name}: status {result['status']}, wanted {statuses}", proc.stdout)
        expect("CONNECTED" not in result["stdout"], f"{name}: the sandbox reached the network", proc.stdout)
        seen.append(f"{name} → {result['status']}")
    owners = journey.run(
        "docker", "ps", "-a", "--filter", "label=debatecode", "--format", '{{.Label "debatecode.owner"}}'
    )
    # the owner label is <boot id>:<pid namespace>:<pid>:<start time> of the process that made the container
    ours = [
        line for line in owners.stdout.splitlines() if line.count(":") == 3 and int(line.split(":")[2]) in journey.pids
    ]
    expect(not ours, "containers of these runs were left behind", "\n".join(ours))
    return "; ".join(seen)
