"""``DummySandbox``: a Docker-free backend for unit tests of other layers. TEST-ONLY.

It really runs the job: it writes ``job.files`` into a fresh temporary
directory and runs ``job.argv`` there with the host interpreter standing in
for ``python3``, under the job's wall-clock limit. It has NO isolation at all
(no namespaces, no rlimits, the host environment is inherited), so it must
only ever run code the tests themselves wrote.

``handler`` scripts results instead: given a job, it returns the ``ExecResult``
and nothing is executed. Every job received is recorded in ``jobs``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from debatecode.sandbox.base import ExecJob, ExecResult, Sandbox

__all__ = ["DummySandbox"]


class DummySandbox(Sandbox):
    """Runs jobs on the host with no isolation, or returns scripted results. For tests only."""

    name = "dummy"

    def __init__(self, handler: Callable[[ExecJob], ExecResult] | None = None) -> None:
        self.handler = handler
        self.jobs: list[ExecJob] = []

    async def run(self, job: ExecJob) -> ExecResult:
        self.jobs.append(job)
        if self.handler is not None:
            return self.handler(job)
        with tempfile.TemporaryDirectory(prefix="debatecode-dummy-") as tmp:
            return await self._execute(job, Path(tmp))

    async def _execute(self, job: ExecJob, workdir: Path) -> ExecResult:
        for relpath, text in job.files.items():
            pure = PurePosixPath(relpath)
            if pure.is_absolute() or ".." in pure.parts:
                return ExecResult(
                    status="error", exit_code=None, stderr=f"refused path {relpath!r}\n", backend=self.name
                )
            target = workdir / pure
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        argv = list(job.argv)
        if argv and argv[0] in ("python3", "python"):
            argv[0] = sys.executable
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **job.env}
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=workdir,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return ExecResult(status="error", exit_code=127, stderr=f"{exc}\n", backend=self.name)
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(), job.limits.timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            return ExecResult(
                status="timeout", exit_code=None, duration_s=time.monotonic() - started, backend=self.name
            )
        except BaseException:
            # Cancelled (or failed) half-way: kill and reap the process here, so that its transport is not left
            # to a finalizer that runs after the loop has closed (and can then break CPython 3.11's ast.parse).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(BaseException):
                await proc.wait()
            raise
        cap = job.limits.output_bytes
        files = {}
        for relpath in job.collect:
            path = workdir / relpath
            if path.is_file():
                files[relpath] = path.read_bytes()[:cap].decode("utf-8", errors="replace")
        code = proc.returncode
        return ExecResult(
            status="ok" if code == 0 else "error",
            exit_code=code,
            stdout=stdout[:cap].decode("utf-8", errors="replace"),
            stderr=stderr[:cap].decode("utf-8", errors="replace"),
            stdout_truncated=len(stdout) > cap,
            stderr_truncated=len(stderr) > cap,
            duration_s=time.monotonic() - started,
            files=files,
            backend=self.name,
        )
