"""The backends the conformance suite runs against, and what each is known to lack.

Backends: ``docker`` (warm pool of one container, so consecutive jobs share a
container and the reset between them is what is tested; needs the engine and
image: ``requires_docker``), ``docker-fresh`` (a fresh container per job) for a
few tests, ``local`` (bubblewrap when it works here) and ``local-rlimits``
(local forced to plain rlimits). Where a mode is known to fall short, the test
is listed in ``KNOWN_DIFFERENCES`` and runs as a *strict* xfail: if the
difference ever disappears, the suite says so. ``docs/sandbox.md`` carries the
same list.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator

import pytest
from tests.support.every_name import EveryName

from debatecode.config import SandboxSettings
from debatecode.sandbox._isolation import probe_isolation
from debatecode.sandbox.base import Sandbox
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.local import LocalSandbox

_SHARED_HOST = "plain rlimits mode shares the host's /tmp, /dev/shm and SysV IPC"


def _rlimits_known_differences() -> dict[str, str]:
    if os.geteuid() == 0 and not probe_isolation(sys.executable).drop_to_nobody:
        return EveryName(
            "plain rlimits mode refuses to run jobs as root, and uid 65534 cannot use this interpreter "
            "(every job raises SandboxUnavailable, which names the fix)"
        )
    return {
        "test_no_network_interfaces_or_egress": "plain rlimits mode shares the host's network namespace",
        "test_cannot_reach_a_server_on_host_loopback": "plain rlimits mode shares the host's loopback",
        "test_tmp_shm_and_ipc_do_not_leak_between_jobs": _SHARED_HOST,
    }


KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "rlimits": _rlimits_known_differences(),
    "bubblewrap": {},
    "docker": {},
}
"""Isolation mode -> test name -> why that mode fails it."""

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local", "local-rlimits"]


def isolation_mode(backend_id: str) -> str:
    if backend_id.startswith("docker"):
        return "docker"
    if backend_id == "local-rlimits":
        return "rlimits"
    return LocalSandbox().isolation


def make_sandbox(backend_id: str) -> Sandbox:
    """A sandbox of ``backend_id``; Docker backends skip the start-up sweep (other runs share the engine)."""
    if backend_id == "docker":
        return DockerSandbox(SandboxSettings(pool_size=1, sweep_on_start=False))
    if backend_id == "docker-fresh":
        return DockerSandbox(SandboxSettings(pool_size=0, sweep_on_start=False))
    if backend_id == "local-rlimits":
        return LocalSandbox(isolation="rlimits")
    return LocalSandbox()


@pytest.fixture(params=BACKENDS)
def backend_id(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def sandbox(backend_id: str, request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    reason = KNOWN_DIFFERENCES[isolation_mode(backend_id)].get(request.node.originalname)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=f"known difference: {reason}", strict=True))
    if backend_id.startswith("docker"):
        request.getfixturevalue("requires_docker")
    instance = make_sandbox(backend_id)
    yield instance
    await instance.aclose()
