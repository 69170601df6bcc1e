"""``LocalSandbox``: the fallback when no Docker engine answers. Weaker, and says so.

Each job runs the same runner script as the Docker backend, with this
interpreter (``sys.executable``, which has pytest), in a fresh temporary work
dir that is removed afterwards. Two modes:

- ``bubblewrap`` when ``bwrap`` works here: own network (none), PID, IPC, UTS
  and mount namespaces; only /usr, /etc (shadow files masked), the
  interpreter's directories and the work dir are visible; the root is
  read-only; a private size-capped /tmp. As root, the runner switches to
  uid 65534 inside, which leaves it no capabilities and makes RLIMIT_NPROC bind.
- ``rlimits`` otherwise: a plain child process. As root it drops to uid 65534
  when this interpreter is usable by that uid. No network or filesystem
  isolation at all.

Both apply rlimits (address space, file size, open files, CPU time, and
process count for non-root uids) and a host-side wall-clock backstop that
kills the runner's process group. ``docs/sandbox.md`` lists what differs from
Docker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from debatecode.config import SandboxSettings
from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox._isolation import NOBODY, IsolationProbe, bwrap_command, make_preexec, probe_isolation
from debatecode.sandbox.base import ExecJob, ExecResult, Sandbox
from debatecode.sandbox.protocol import (
    RunnerProtocolError,
    max_result_bytes,
    parse_runner_output,
    payload_bytes,
    result_from_runner,
    runner_source,
)

__all__ = ["LocalSandbox"]

logger = logging.getLogger(__name__)

HOST_GRACE_S = 5.0
"""Extra host-side wait beyond the job's own limit before the backstop kills the runner."""
STDERR_CAP = 64 * 1024

IsolationMode = Literal["bubblewrap", "rlimits"]


class LocalSandbox(Sandbox):
    """Runs each job as a local process, inside bubblewrap when it works here.

    Args:
        settings: defaults; ``SandboxSettings()`` when omitted.
        isolation: ``auto`` picks bubblewrap when it works, else rlimits only;
            ``bubblewrap`` or ``rlimits`` force one (``check`` fails if bubblewrap is forced but unusable).
    """

    name = "local"

    def __init__(
        self,
        settings: SandboxSettings | None = None,
        *,
        isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto",
    ) -> None:
        self.settings = settings or SandboxSettings()
        self._requested = isolation
        self._python = sys.executable
        self._warned = False
        self._procs: set[asyncio.subprocess.Process] = set()

    @property
    def default_concurrency(self) -> int:
        return self.settings.concurrency or os.cpu_count() or 1

    @property
    def probe(self) -> IsolationProbe:
        """What this machine allows (probed once per interpreter)."""
        return probe_isolation(self._python)

    @property
    def isolation(self) -> IsolationMode:
        """``bubblewrap`` or ``rlimits``: the mode jobs run in."""
        if self._requested == "rlimits" or self.probe.bwrap is None:
            return "rlimits"
        return "bubblewrap"

    def describe(self) -> str:
        """One line on the mode and what it does and does not isolate."""
        probe = self.probe
        if self.isolation == "bubblewrap":
            who = "uid 65534, no capabilities" if os.geteuid() == 0 else "your uid in a user namespace"
            return (
                f"bubblewrap ({probe.bwrap_version or 'bwrap'}): no network, own PID/IPC/mount namespaces, "
                f"read-only system dirs, job runs as {who}"
            )
        who = "uid 65534" if self._job_uid() == NOBODY else ("root" if self._job_uid() == 0 else "your uid")
        why = f" ({probe.bwrap_problem})" if probe.bwrap_problem and self._requested != "rlimits" else ""
        return f"rlimits only{why}: no network or filesystem isolation, job runs as {who}"

    def _job_uid(self) -> int:
        if os.geteuid() != 0:
            return os.geteuid()
        if self.isolation == "bubblewrap" or self.probe.drop_to_nobody:
            return NOBODY
        return 0

    def check(self) -> None:
        """Verify that this interpreter can run jobs (pytest importable, bubblewrap if forced).

        Raises:
            SandboxUnavailable: pytest is not importable, or bubblewrap was forced but does not work.
        """
        probe = self.probe
        if probe.pytest_problem:
            raise SandboxUnavailable(
                f"{probe.pytest_problem}. Install debatecode into this environment (pytest is a core dependency).",
                backend=self.name,
            )
        if self._requested == "bubblewrap" and probe.bwrap is None:
            raise SandboxUnavailable(
                f"bubblewrap isolation was requested but is not usable: {probe.bwrap_problem}", backend=self.name
            )

    async def run(self, job: ExecJob) -> ExecResult:
        """Run ``job`` as a local process in a fresh temporary work dir.

        Raises:
            SandboxUnavailable: pytest is not importable, or forced bubblewrap does not work.
            SandboxError: the runner could not be started or returned no result.
        """
        self.check()
        if not self._warned:
            self._warned = True
            logger.warning(
                "local sandbox: isolation is weaker than Docker's; mode %s: %s", self.isolation, self.describe()
            )
        root = Path(tempfile.mkdtemp(prefix="debatecode-job-"))
        try:
            return await self._run_in(job, root)
        finally:
            await asyncio.to_thread(_remove_tree, root)

    async def _run_in(self, job: ExecJob, root: Path) -> ExecResult:
        workdir, tmpdir = root / "work", root / "tmp"
        workdir.mkdir()
        tmpdir.mkdir()
        job_uid = self._job_uid()
        switch_uid = job_uid != os.geteuid()
        if switch_uid:
            for path in (root, workdir, tmpdir):
                os.chown(path, job_uid, job_uid)
        env = {
            "PATH": f"{os.path.dirname(self._python)}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(workdir),
            "TMPDIR": str(tmpdir),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            # The Docker image has pytest and no plugins; keep this env's plugins out as well.
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        command = [self._python, "-c", runner_source()]
        drop: dict[str, object] = {}
        if self.isolation == "bubblewrap":
            # bwrap starts as the caller; as root, the runner switches to the job uid inside.
            assert self.probe.bwrap is not None
            wrapper = bwrap_command(
                self.probe.bwrap, self._python, str(workdir), job.limits, size_ok=self.probe.bwrap_size
            )
            command = [*wrapper, *command]
            env["TMPDIR"] = "/tmp"
            payload = payload_bytes(job, reap_uid=True, drop_uid=job_uid if switch_uid else None)
        else:
            if switch_uid:
                drop = {"user": job_uid, "group": job_uid, "extra_groups": []}
            payload = payload_bytes(job)
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=workdir,
                env=env,
                start_new_session=True,
                preexec_fn=make_preexec(job.limits, job_uid),
                **drop,  # type: ignore[arg-type]
            )
        except OSError as exc:
            raise SandboxError(f"cannot start the local runner: {exc}", backend=self.name) from exc
        self._procs.add(proc)
        try:
            return await self._communicate(proc, job, payload, started)
        finally:
            self._procs.discard(proc)
            _kill_group(proc)

    async def _communicate(
        self, proc: asyncio.subprocess.Process, job: ExecJob, payload: bytes, started: float
    ) -> ExecResult:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(payload)
            await proc.stdin.drain()
            proc.stdin.close()
        stdout_task = asyncio.create_task(_read_capped(proc.stdout, max_result_bytes(job)))
        stderr_task = asyncio.create_task(_read_capped(proc.stderr, STDERR_CAP))
        try:
            await asyncio.wait_for(proc.wait(), job.limits.timeout_s + HOST_GRACE_S)
        except TimeoutError:
            logger.warning("local runner outlived the host-side limit; killing its process group")
            _kill_group(proc)
            await proc.wait()
            stdout_task.cancel()
            stderr_task.cancel()
            return ExecResult(
                status="timeout", exit_code=None, duration_s=time.monotonic() - started, backend=self.name
            )
        stdout, _overflow = await stdout_task
        stderr, _ = await stderr_task
        try:
            return result_from_runner(parse_runner_output(stdout.decode("utf-8", errors="replace")), self.name)
        except RunnerProtocolError as exc:
            signum = _killed_by(proc.returncode)
            if signum:
                # The runner shares the job's uid here, so the job can signal it; that is the job's failure.
                return ExecResult(
                    status="error",
                    exit_code=None,
                    stderr=f"debatecode: the job's runner was killed by signal {signum} (the job can signal it "
                    "under the local backend); the job's output is lost\n",
                    duration_s=time.monotonic() - started,
                    backend=self.name,
                )
            raise SandboxError(
                f"the local runner (exit code {proc.returncode}) returned no result: {exc}; "
                f"stderr: {stderr.decode('utf-8', errors='replace')[-2000:]!r}",
                backend=self.name,
            ) from exc

    async def aclose(self) -> None:
        """Kill runners of jobs still in flight."""
        for proc in list(self._procs):
            _kill_group(proc)
        self._procs.clear()


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> tuple[bytes, bool]:
    """Read to EOF, keeping at most ``cap`` bytes; the rest is drained and dropped."""
    kept = bytearray()
    overflow = False
    while chunk := await stream.read(65536):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        overflow = overflow or len(chunk) > room
    return bytes(kept), overflow


def _killed_by(returncode: int | None) -> int:
    """The signal that ended the runner (directly, or as bubblewrap's 128 + N), or 0."""
    if returncode is None:
        return 0
    if returncode < 0:
        return -returncode
    return returncode - 128 if 128 < returncode < 128 + 65 else 0


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _remove_tree(root: Path) -> None:
    """Remove a job's directory even when the job made parts of it read-only."""

    def make_writable_and_retry(function: object, path: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            os.chmod(path, stat.S_IRWXU)
            if callable(function):
                function(path)

    shutil.rmtree(root, onerror=make_writable_and_retry)
    if root.exists():
        logger.warning("could not fully remove the job directory %s", root)
