"""What every sandbox attack module shares: the backends, the known differences, the clean-up checks.

Each attack runs against ``docker`` (a warm pool of one container, so an
attack's leftovers would meet the next job in the same container), ``local``
(bubblewrap here) and ``local-rlimits``. Modes known to fall short are listed
in ``KNOWN_DIFFERENCES`` and run as strict xfails; attacks too dangerous to run
in a mode (they would hit the real host) are listed in ``NOT_RUN``.

After every attack, whatever the mode: the sandbox is closed, no container
carrying the attack's run label is left, and no host process carries the
attack's marker (every job gets it in its environment; daemons also put it in
their command line).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.every_name import EveryName

from debatecode.config import SandboxSettings
from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.local import LocalSandbox

_SHARED_NETWORK = "plain rlimits mode shares the host's network"
_HOST_FS = "plain rlimits mode sees the host filesystem with the caller's rights"
_HOST_PROCS = "plain rlimits mode sees host processes (no PID namespace) with the caller's rights"
_PER_FILE_DISK = "the local backend caps each file (RLIMIT_FSIZE), not the work dir as a whole"
_WEAK_LOCAL = {
    "test_network_egress_fails": _SHARED_NETWORK,
    "test_host_loopback_and_bridge_services_are_unreachable": _SHARED_NETWORK,
    "test_writing_outside_the_work_dir_fails": _HOST_FS,
    "test_project_git_is_invisible": _HOST_FS,
    "test_store_database_is_invisible": _HOST_FS,
    "test_filling_the_disk_stops_at_the_cap": _PER_FILE_DISK,
    "test_host_environment_is_invisible": _HOST_PROCS,
}
_REFUSED = (
    "refused: as root, rlimits mode runs jobs only as uid 65534, which cannot use this interpreter "
    "(SandboxUnavailable names the fix); nothing to attack"
)


KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "docker": {},
    "bubblewrap": {
        "test_killing_the_runner_is_refused": "the runner runs as the job's uid, so the job can kill it "
        "(the job then ends as `error`, its output lost)",
    },
    "rlimits-root": {},
    "rlimits-user": dict(_WEAK_LOCAL),
    "rlimits-nobody": {
        key: _WEAK_LOCAL[key]
        for key in (
            "test_network_egress_fails",
            "test_host_loopback_and_bridge_services_are_unreachable",
            "test_filling_the_disk_stops_at_the_cap",
        )
    },
}
"""Isolation mode -> attack -> why that mode does not stop it."""

_HOST_PID1 = "no PID namespace: PID 1 and the runner are real host processes; not run, to protect the test machine"
NOT_RUN: dict[str, dict[str, str]] = {
    mode: {
        "test_signals_to_pid_1_change_nothing": _HOST_PID1,
        "test_killing_the_runner_is_refused": _HOST_PID1,
        "test_killing_the_runner_still_ends_in_a_clear_job_result": _HOST_PID1,
        "test_proc_and_ctypes_tricks_fail": _HOST_PID1,
    }
    for mode in ("rlimits-user", "rlimits-nobody")
}
NOT_RUN["rlimits-root"] = EveryName(_REFUSED)
"""Isolation mode -> attack -> why it is not run in that mode."""

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local", "local-rlimits"]


def isolation_mode(backend_id: str) -> str:
    if backend_id == "docker":
        return "docker"
    sandbox = LocalSandbox(isolation="rlimits" if backend_id == "local-rlimits" else "auto")
    if sandbox.isolation == "bubblewrap":
        return "bubblewrap"
    if os.geteuid() != 0:
        return "rlimits-user"
    return "rlimits-nobody" if sandbox.probe.drop_to_nobody else "rlimits-root"


def labelled_containers(run_label: str) -> list[str]:
    """Containers labelled ``debatecode`` and this attack's run label (other runs on the machine are not counted)."""
    docker_cli = shutil.which("docker")
    if docker_cli is None:
        return []
    command = [docker_cli, "ps", "-a", "-q", "--filter", "label=debatecode", "--filter", f"label={run_label}"]
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout.split()


def host_processes_with(marker: str) -> list[int]:
    """Host pids whose command line or environment holds ``marker``."""
    needle = marker.encode()
    found: list[int] = []
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


@dataclass
class Target:
    """The sandbox under attack, its isolation mode and the marker its jobs carry."""

    sandbox: Sandbox
    mode: str
    marker: str

    @property
    def name(self) -> str:
        return self.sandbox.name

    async def run(self, code: str, limits: Limits | None = None, **kwargs: Any) -> ExecResult:
        env = {"DC_ATTACK_MARKER": self.marker, **kwargs.pop("env", {})}
        job = ExecJob(
            files={"attack.py": code},
            argv=["python3", "attack.py"],
            limits=limits or Limits(timeout_s=10),
            env=env,
            **kwargs,
        )
        return await self.sandbox.run(job)


def attack_target_fixture() -> Callable[..., AsyncIterator[Target]]:
    """A ``target`` fixture for an attack module: ``target = attack_target_fixture()``."""

    @pytest.fixture(params=BACKENDS)
    async def target(request: pytest.FixtureRequest) -> AsyncIterator[Target]:
        backend_id = str(request.param)
        mode = isolation_mode(backend_id)
        test_name = request.node.originalname
        if test_name in NOT_RUN.get(mode, {}):
            pytest.skip(f"not run in {mode} mode: {NOT_RUN[mode][test_name]}")
        reason = KNOWN_DIFFERENCES[mode].get(test_name)
        if reason:
            request.applymarker(pytest.mark.xfail(reason=f"known difference ({mode}): {reason}", strict=True))
        run_label = f"debatecode.test={uuid.uuid4().hex}"
        marker = f"dcattack{uuid.uuid4().hex[:12]}"
        instance: Sandbox
        if backend_id == "docker":
            request.getfixturevalue("requires_docker")
            settings = SandboxSettings(pool_size=1, sweep_on_start=False)
            instance = DockerSandbox(settings, labels=dict([run_label.split("=", 1)]))
        else:
            instance = LocalSandbox(isolation="rlimits" if backend_id == "local-rlimits" else "auto")
        try:
            yield Target(instance, mode, marker)
        finally:
            await instance.aclose()
            leftovers = host_processes_with(marker)
            for pid in leftovers:
                os.kill(pid, 9)
        assert labelled_containers(run_label) == [], "the attack left debatecode containers behind"
        assert leftovers == [], f"the attack left host processes behind: {leftovers}"

    return target
