"""``LocalSandbox``: the fallback when no Docker engine answers. Weaker, and says so.

Each job runs the same runner script as the Docker backend, with this
interpreter (``sys.executable``, which has pytest), in a fresh work dir. Two modes:

- ``bubblewrap`` when ``bwrap`` works here: own network (none), PID, IPC, UTS
  and mount namespaces; a seccomp filter (``_seccomp_bpf``: no namespaces,
  keyrings, io_uring, bpf, perf, ptrace, mounts, modules); only /usr, /etc
  (shadow files masked) and the interpreter's directories are visible, all
  read-only; the work dir, /tmp and /dev/shm are private size-capped tmpfs. As
  root, the runner switches to uid 65534 inside, with no capabilities.
- ``rlimits`` otherwise (``--sandbox unsafe-host``): a plain child process, no
  network or filesystem isolation at all. As root it drops to uid 65534, and
  refuses to run when this interpreter is unusable by that uid.

Both put each job in its own cgroup when this machine allows it (``_cgroup``:
memory with swap and process count for the job as a whole), apply rlimits
(address space, file size, open files, CPU time; process count for non-root
uids when no cgroup caps it) and a host-side wall-clock backstop that kills the
runner's process group. ``docs/sandbox.md`` lists what differs from Docker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox._cgroup import EXTRA_PIDS, CgroupSupport, JobCgroup, probe_cgroups
from debatecode.sandbox._host_clock import wait_within
from debatecode.sandbox._isolation import (
    NOBODY,
    IsolationProbe,
    bwrap_command,
    make_preexec,
    probe_isolation,
    seccomp_pipe,
)
from debatecode.sandbox._process import RunnerProcess
from debatecode.sandbox.base import ExecJob, ExecResult, Sandbox
from debatecode.sandbox.settings import SandboxSettings
from debatecode.sandbox.wire import (
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
            ``bubblewrap`` or ``rlimits`` force one (``check`` fails if bubblewrap is forced but unusable,
            and, as root, in rlimits mode when uid 65534 cannot use this interpreter).
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
        self._procs: set[RunnerProcess] = set()

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

    @property
    def cgroups(self) -> CgroupSupport:
        """How jobs get their own cgroup here (probed once per process)."""
        return probe_cgroups()

    def describe(self) -> str:
        """One line on the mode and what it does and does not isolate."""
        probe, cgroups = self.probe, self.cgroups
        limits = (
            f"per-job {cgroups.detail} limits"
            if cgroups.enforced
            else f"no per-job cgroup ({cgroups.detail}): memory and processes capped per process only"
        )
        if self.isolation == "bubblewrap":
            who = "uid 65534, no capabilities" if os.geteuid() == 0 else "your uid in a user namespace"
            seccomp = "seccomp filter" if probe.seccomp else f"NO seccomp filter ({probe.seccomp_problem})"
            disk = "size-capped tmpfs work dir" if probe.bwrap_size else "work dir capped per file only (old bwrap)"
            return (
                f"bubblewrap ({probe.bwrap_version or 'bwrap'}): no network, own PID/IPC/mount namespaces, "
                f"{seccomp}, read-only system dirs, {disk}, {limits}, job runs as {who}"
            )
        if self._refused():
            return f"rlimits only: refused, jobs would run as root ({probe.drop_problem})"
        who = "uid 65534" if self._job_uid() == NOBODY else "your uid"
        why = f" ({probe.bwrap_problem})" if probe.bwrap_problem and self._requested != "rlimits" else ""
        return f"rlimits only{why}: no network or filesystem isolation, {limits}, job runs as {who}"

    def _job_uid(self) -> int:
        if os.geteuid() != 0:
            return os.geteuid()
        if self.isolation == "bubblewrap" or self.probe.drop_to_nobody:
            return NOBODY
        return 0

    def _refused(self) -> bool:
        """rlimits mode as root with an interpreter uid 65534 cannot use: jobs would run as root."""
        return self.isolation == "rlimits" and os.geteuid() == 0 and not self.probe.drop_to_nobody

    def check(self) -> None:
        """Verify that this interpreter can run jobs (pytest importable, bubblewrap if forced, never as root).

        Raises:
            SandboxUnavailable: pytest is not importable; bubblewrap was forced but does not work; or
                rlimits mode as root, where uid 65534 cannot use this interpreter (jobs never run as root).
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
        if self._refused():
            raise SandboxUnavailable(
                "the local sandbox without bubblewrap will not run jobs as root, and it cannot drop to "
                f"uid {NOBODY}: {probe.drop_problem}. Fix: install bubblewrap (apt-get install bubblewrap) "
                f"and use the bubblewrap sandbox; or run debatecode as a non-root user; or run it from an "
                f"interpreter and virtualenv that uid {NOBODY} can read and execute (not under /root).",
                backend=self.name,
            )

    async def run(self, job: ExecJob) -> ExecResult:
        """Run ``job`` as a local process in a fresh temporary work dir.

        Raises:
            SandboxUnavailable: as for ``check`` (pytest missing, forced bubblewrap unusable, or jobs would run as root).
            SandboxError: the job's cgroup or runner could not be started, or the runner returned no result.
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
        bubblewrap = self.isolation == "bubblewrap"
        # bwrap starts as the caller; as root, the runner switches to the job uid inside. Plain jobs switch in
        # preexec, after joining the cgroup (or systemd-run switches them, having registered the scope as root).
        plain_drop = job_uid if switch_uid and not bubblewrap else None
        try:
            cgroup = JobCgroup.create(
                self.cgroups,
                job.limits,
                uid=plain_drop if self.cgroups.kind == "systemd" else None,
                extra_pids=EXTRA_PIDS if bubblewrap else 1,  # bubblewrap's two processes and the runner
            )
        except OSError as exc:
            raise SandboxError(f"cannot create the job's cgroup: {exc}", backend=self.name) from exc
        fd: int | None = None  # the seccomp filter's pipe, for bwrap
        try:
            command = [*cgroup.command_prefix, self._python, "-c", runner_source()]
            if bubblewrap:
                assert self.probe.bwrap is not None
                fd = seccomp_pipe() if self.probe.seccomp else None
                wrapper = bwrap_command(
                    self.probe.bwrap,
                    self._python,
                    str(workdir),
                    job.limits,
                    size_ok=self.probe.bwrap_size,
                    seccomp_fd=fd,
                )
                command = [*cgroup.command_prefix, *wrapper, self._python, "-c", runner_source()]
                env["TMPDIR"] = "/tmp"
                payload = payload_bytes(job, reap_uid=True, drop_uid=job_uid if switch_uid else None)
            else:
                payload = payload_bytes(job)
            preexec = make_preexec(
                job.limits,
                job_uid,
                cgroup_procs=cgroup.cgroup_procs,
                limit_nproc=not cgroup.limits_pids,
                drop_uid=None if cgroup.kind == "systemd" else plain_drop,
            )
            started = time.monotonic()
            try:
                proc = RunnerProcess.start(
                    command, cwd=str(workdir), env=env, preexec=preexec, pass_fds=() if fd is None else (fd,)
                )
            except (OSError, subprocess.SubprocessError) as exc:
                raise SandboxError(f"cannot start the local runner: {exc}", backend=self.name) from exc
            finally:
                if fd is not None:
                    os.close(fd)
                    fd = None
            self._procs.add(proc)
            try:
                result = await self._communicate(proc, job, payload, started, cgroup)
            finally:
                self._procs.discard(proc)
                cgroup.kill()
                await proc.terminate()
            return _judge_oom(result, cgroup.oom_kills())
        finally:
            if fd is not None:
                os.close(fd)
            if not cgroup.remove():
                await asyncio.to_thread(cgroup.remove, 2.0)
            if cgroup.dirs:
                logger.warning("could not remove the job cgroup %s; the next start-up sweep will", cgroup.dirs)

    async def _communicate(
        self, proc: RunnerProcess, job: ExecJob, payload: bytes, started: float, cgroup: JobCgroup
    ) -> ExecResult:
        stdout_task = asyncio.create_task(proc.read_capped("stdout", max_result_bytes(job)))
        stderr_task = asyncio.create_task(proc.read_capped("stderr", STDERR_CAP))
        try:
            try:
                await wait_within(_deliver_and_wait(proc, payload), job.limits.timeout_s + HOST_GRACE_S)
            except TimeoutError:
                logger.warning("local runner outlived the host-side limit; killing its process group")
                return ExecResult(
                    status="timeout", exit_code=None, duration_s=time.monotonic() - started, backend=self.name
                )
            # The runner is gone; only a process that escaped it could hold its pipes open now.
            done, _pending = await asyncio.wait([stdout_task, stderr_task], timeout=HOST_GRACE_S)
            if len(done) < 2:
                cgroup.kill()
                proc.kill_group()
                logger.warning("the local runner's output did not end with it; its pipes were cut off")
        finally:
            for task in (stdout_task, stderr_task):
                task.cancel()
            await asyncio.gather(stdout_task, stderr_task, return_exceptions=True)
        stdout, _overflow = stdout_task.result() if not stdout_task.cancelled() else (b"", False)
        stderr, _ = stderr_task.result() if not stderr_task.cancelled() else (b"", False)
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
            proc.kill_group()
        self._procs.clear()


async def _deliver_and_wait(proc: RunnerProcess, payload: bytes) -> int:
    await proc.feed_stdin(payload)
    return await proc.wait()


def _judge_oom(result: ExecResult, oom_kills: int | None) -> ExecResult:
    """Settle ``oom`` with the job cgroup's OOM-kill counter, when there is one.

    A failed job is ``oom`` when the kernel killed a process of it for memory, and not
    ``oom`` otherwise (the runner's guess, an unexplained SIGKILL, is overruled).
    """
    if oom_kills is None or result.status not in ("error", "oom"):
        return result
    status = "oom" if oom_kills > 0 else "error"
    if status == result.status:
        return result
    stderr = result.stderr
    if status == "oom" and result.exit_code is None and "runner was killed" in stderr:
        stderr += "debatecode: the job's memory cgroup ran out and the kernel's OOM killer killed the runner\n"
    return result.model_copy(update={"status": status, "stderr": stderr})


def _killed_by(returncode: int | None) -> int:
    """The signal that ended the runner (directly, or as bubblewrap's 128 + N), or 0."""
    if returncode is None:
        return 0
    if returncode < 0:
        return -returncode
    return returncode - 128 if 128 < returncode < 128 + 65 else 0


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
