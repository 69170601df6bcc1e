"""Running tests in an instance image: one hardened sandbox job per run.

The job runs in a container made by debatecode's Docker sandbox, so it gets the
sandbox's whole hardening (``sandbox/_docker_spec.py``): no network, uid 10001,
every capability dropped, ``no-new-privileges``, a read-only root, size-capped
tmpfs ``/work`` and ``/tmp``, memory, pids and CPU limits, owner labels and
clean-up. The job writes the driver and its job file into ``/work/_swebench``;
the driver copies the image's repository to ``/work/repo`` (tmpfs), applies the
overlay and becomes pytest (``_driver.py``). pytest's junit XML and the grader's ledger go to
``/work/.results-<random>/``, outside the repository tree, and are read back by
the sandbox runner after the process tree has ended; the runner also
records pytest's exit status, from outside the test process.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from importlib import resources

from pydantic import BaseModel

from debatecode.bench.swebench.repos import RepoSpec
from debatecode.bench.swebench.workspace import Overlay
from debatecode.sandbox.base import ExecJob, ExecStatus, Limits, Sandbox
from debatecode.sandbox.settings import SandboxSettings

__all__ = ["SandboxFactory", "TestRun", "docker_sandbox", "run_tests", "test_limits"]

SandboxFactory = Callable[[str, int], Sandbox]
"""``factory(image, pool_size) -> Sandbox``: a sandbox whose jobs run in ``image``."""

OUTPUT_BYTES = 4_000_000
_RUN_SETTINGS = SandboxSettings(pids=256, cpus=1.0, output_bytes=OUTPUT_BYTES)
"""The limits every test run shares; each repository sets its own time, memory and disk (``RepoSpec``)."""


def docker_sandbox(image: str, pool_size: int = 0) -> Sandbox:
    """A ``DockerSandbox`` running jobs in ``image``: fresh containers (``pool_size=0``) or a warm pool."""
    from debatecode.sandbox.docker import DockerSandbox

    return DockerSandbox(SandboxSettings(image=image, pool_size=pool_size), labels={"debatecode.bench": "swebench"})


def test_limits(spec: RepoSpec) -> Limits:
    """The resource limits of one test run of ``spec``'s repository."""
    return Limits.from_settings(
        _RUN_SETTINGS, timeout_s=spec.test_timeout_s, memory_mb=spec.memory_mb, disk_mb=spec.disk_mb
    )


class TestRun(BaseModel):
    """What one test run produced, as the sandbox runner saw it from outside the test process."""

    __test__ = False

    status: ExecStatus
    exit_code: int | None
    """pytest's exit status (None on timeout)."""
    stdout: str
    stderr: str
    truncated: bool
    junit_xml: str | None
    """pytest's junit XML, or None when the run wrote none."""
    ledger_json: str | None = None
    """The grader plugin's ledger (per-test phase outcomes, tampering found), or None when it wrote none."""
    duration_s: float


def _source(name: str) -> str:
    return resources.files("debatecode.bench.swebench").joinpath(name).read_text(encoding="utf-8")


async def run_tests(
    sandbox: Sandbox, overlay: Overlay, tests: Sequence[str], spec: RepoSpec, *, limits: Limits | None = None
) -> TestRun:
    """Run ``tests`` (pytest node ids; all of the repository's tests when empty) on the patched repository.

    Raises:
        SandboxUnavailable: the engine does not answer or the image is missing.
        SandboxError: the sandbox failed (not the tests, whose failures are results).
    """
    results_dir = f".results-{secrets.token_hex(8)}"
    junit = f"{results_dir}/junit.xml"
    ledger = f"{results_dir}/ledger.json"
    job_file = {
        "overlay": [entry.model_dump() for entry in overlay.entries],
        "tests": list(tests),
        "junit": junit,
        "ledger": ledger,
        "pythonpath": spec.pythonpath,
    }
    job = ExecJob(
        files={"_swebench/driver.py": _source("_driver.py"), "_swebench/job.json": json.dumps(job_file)},
        argv=["python3", "-I", "_swebench/driver.py"],
        limits=limits or test_limits(spec),
        collect=[junit, ledger],
    )
    result = await sandbox.run(job)
    return TestRun(
        status=result.status,
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        truncated=result.truncated,
        junit_xml=result.files.get(junit),
        ledger_json=result.files.get(ledger),
        duration_s=result.duration_s,
    )
