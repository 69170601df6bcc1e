"""``DockerSandbox``: each job runs in a fresh, locked-down container.

The container gets no network, a read-only root, a size-capped tmpfs work
dir, an unprivileged uid, no capabilities, ``no-new-privileges``, and cgroup
limits on memory (swap included), processes and CPU. Inside it, the runner
script (``runner.py``) is PID 1: it writes the job's files, runs the command,
enforces the wall-clock limit, kills every leftover process and prints one
result line, which the host reads back from the container's log.

One container per job for now. ``_start_job`` / ``_finish_job`` are the seam
where a warm pool slots in later.

All blocking Docker SDK calls run in a worker thread (``asyncio.to_thread``).
Docker SDK and HTTP errors never leave this module: they become
``SandboxUnavailable`` (engine or image missing) or ``SandboxError``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import docker
import docker.errors
import requests.exceptions
from docker.types import Ulimit

from debatecode.config import SandboxSettings
from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox
from debatecode.sandbox.protocol import (
    RunnerProtocolError,
    encode_payload,
    max_result_bytes,
    parse_runner_output,
    result_from_runner,
    runner_source,
)

if TYPE_CHECKING:
    from docker.models.containers import Container

__all__ = ["DockerSandbox"]

logger = logging.getLogger(__name__)

LABEL = "debatecode"
"""Every container this backend creates carries ``debatecode=1``, so strays are easy to find."""
HOST_GRACE_S = 15.0
"""Extra host-side wait beyond the job's own limit: container start, teardown and a busy machine."""
SANDBOX_UID = "10001:10001"
_DOCKER_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


def _engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


class DockerSandbox(Sandbox):
    """Runs each job in a fresh container of ``settings.image``.

    Args:
        settings: image name and defaults; ``SandboxSettings()`` when omitted.
        client: a ``docker.DockerClient`` (or a fake with the same surface).
            Created from the environment (``DOCKER_HOST``) on first use when omitted.
        client_timeout_s: HTTP timeout of a client this sandbox creates itself.
        host_grace_s: how long past the job's own time limit the host waits for the
            container before killing it and reporting a timeout.
        labels: extra labels for every container (for example a session id), next to
            ``debatecode=1`` and ``debatecode.job=<uuid>``.
    """

    name = "docker"

    def __init__(
        self,
        settings: SandboxSettings | None = None,
        *,
        client: docker.DockerClient | None = None,
        client_timeout_s: float = 60.0,
        host_grace_s: float = HOST_GRACE_S,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings or SandboxSettings()
        self._client = client
        self._owns_client = client is None
        self._client_timeout_s = client_timeout_s
        self._host_grace_s = host_grace_s
        self._labels = dict(labels or {})
        self._active: dict[str, Container] = {}

    def _get_client(self) -> docker.DockerClient:
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=int(self._client_timeout_s))
            except _DOCKER_ERRORS as exc:
                raise self._engine_unavailable(exc) from exc
        return self._client

    def _engine_unavailable(self, exc: BaseException) -> SandboxUnavailable:
        return SandboxUnavailable(
            f"the Docker engine does not answer at {_engine_address()} (DOCKER_HOST): {exc}. "
            "Start it (for example `sudo dockerd >/var/log/dockerd.log 2>&1 &`), point DOCKER_HOST at a "
            "running engine, or run with `--sandbox local` (weaker isolation).",
            backend=self.name,
        )

    def _image_missing(self) -> SandboxUnavailable:
        return SandboxUnavailable(
            f"the sandbox image {self.settings.image!r} is not present in the Docker engine. "
            "Build it offline with `debatecode sandbox build`, or run with `--sandbox local`.",
            backend=self.name,
        )

    def check(self) -> None:
        """Verify that the engine answers and the sandbox image is present.

        Raises:
            SandboxUnavailable: engine unreachable (names DOCKER_HOST / the socket and how to
                start it) or image missing (says to run ``debatecode sandbox build``).
        """
        client = self._get_client()
        try:
            client.ping()
        except _DOCKER_ERRORS as exc:
            raise self._engine_unavailable(exc) from exc
        try:
            client.images.get(self.settings.image)
        except docker.errors.ImageNotFound as exc:
            raise self._image_missing() from exc
        except _DOCKER_ERRORS as exc:
            raise self._engine_unavailable(exc) from exc

    async def run(self, job: ExecJob) -> ExecResult:
        """Run ``job`` in a fresh container and remove the container afterwards.

        Raises:
            SandboxUnavailable: the engine does not answer or the image is missing.
            SandboxError: the engine failed mid-job, the payload is too large for the
                environment, or the runner returned no result (``container_id`` is set).
        """
        job_id = uuid.uuid4().hex
        try:
            return await asyncio.to_thread(self._run_sync, job, job_id)
        except asyncio.CancelledError:
            container = self._active.get(job_id)
            if container is not None:
                # The worker thread removes the container once the kill ends its wait.
                asyncio.get_running_loop().run_in_executor(None, self._kill_quietly, container)
            raise

    def _run_sync(self, job: ExecJob, job_id: str) -> ExecResult:
        started = time.monotonic()
        container = self._start_job(job, job_id)
        try:
            return self._finish_job(container, job, started)
        finally:
            self._active.pop(job_id, None)
            self._remove_quietly(container)

    def _start_job(self, job: ExecJob, job_id: str) -> Container:
        try:
            environment = encode_payload(job, reap_uid=True)
        except ValueError as exc:
            raise SandboxError(str(exc), backend=self.name) from exc
        client = self._get_client()
        try:
            container = client.containers.create(**self._container_spec(job.limits, job_id, environment))
        except docker.errors.ImageNotFound as exc:
            raise self._image_missing() from exc
        except requests.exceptions.ConnectionError as exc:
            raise self._engine_unavailable(exc) from exc
        except _DOCKER_ERRORS as exc:
            raise SandboxError(f"cannot create the job container: {exc}", backend=self.name) from exc
        self._active[job_id] = container
        logger.debug("created container %s for job %s", container.id, job_id)
        try:
            container.start()
        except _DOCKER_ERRORS as exc:
            self._active.pop(job_id, None)
            self._remove_quietly(container)
            raise SandboxError(
                f"cannot start the job container: {exc}", backend=self.name, container_id=container.id
            ) from exc
        return container

    def _container_spec(self, limits: Limits, job_id: str, environment: dict[str, str]) -> dict[str, Any]:
        memory = f"{limits.memory_mb}m"
        return {
            "image": self.settings.image,
            "command": ["python3", "-c", runner_source()],
            "environment": environment,
            "name": f"debatecode-job-{job_id[:12]}",
            "labels": {**self._labels, LABEL: "1", f"{LABEL}.job": job_id},
            "network_mode": "none",
            "user": SANDBOX_UID,
            "read_only": True,
            "tmpfs": {
                "/work": f"size={limits.disk_mb}m,mode=1777,exec",
                "/tmp": f"size={max(16, limits.disk_mb // 2)}m,mode=1777",
            },
            "working_dir": "/work",
            "mem_limit": memory,
            "memswap_limit": memory,
            "pids_limit": limits.pids,
            "nano_cpus": int(limits.cpus * 1_000_000_000),
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "ulimits": [
                Ulimit(name="nofile", soft=1024, hard=1024),
                Ulimit(name="fsize", soft=limits.disk_mb * 1024 * 1024, hard=limits.disk_mb * 1024 * 1024),
            ],
            "stdin_open": False,
            "tty": False,
        }

    def _finish_job(self, container: Container, job: ExecJob, started: float) -> ExecResult:
        host_timeout = job.limits.timeout_s + self._host_grace_s
        timed_out = False
        waited_from = time.monotonic()
        try:
            container.wait(timeout=host_timeout)
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as exc:
            # A read timeout may surface as either class; a connection failure well before the limit is the engine.
            if time.monotonic() - waited_from < 0.9 * host_timeout:
                raise SandboxError(
                    f"lost the Docker engine while waiting for the job: {exc}",
                    backend=self.name,
                    container_id=container.id,
                ) from exc
            timed_out = True
            logger.warning("container %s outlived the host-side limit of %.1fs; killing it", container.id, host_timeout)
            self._kill_quietly(container)
        except _DOCKER_ERRORS as exc:
            raise SandboxError(
                f"waiting for the job container failed: {exc}", backend=self.name, container_id=container.id
            ) from exc
        if timed_out:
            return ExecResult(
                status="timeout", exit_code=None, duration_s=time.monotonic() - started, backend=self.name
            )
        try:
            container.reload()
            state = container.attrs.get("State", {})
            text = self._read_stdout(container, max_result_bytes(job))
        except _DOCKER_ERRORS as exc:
            raise SandboxError(
                f"reading the job's result failed: {exc}", backend=self.name, container_id=container.id
            ) from exc
        oom_killed = bool(state.get("OOMKilled"))
        try:
            result = result_from_runner(parse_runner_output(text), self.name)
        except RunnerProtocolError as exc:
            if oom_killed:
                return ExecResult(
                    status="oom",
                    exit_code=None,
                    stderr=f"killed: the job exceeded its memory limit of {job.limits.memory_mb} MiB\n",
                    duration_s=time.monotonic() - started,
                    backend=self.name,
                )
            raise SandboxError(
                f"the job container (exit code {state.get('ExitCode')}) returned no result: {exc}; "
                f"runner stderr: {self._read_stderr_tail(container)!r}",
                backend=self.name,
                container_id=container.id,
            ) from exc
        if oom_killed and result.status != "ok":
            result = result.model_copy(update={"status": "oom"})
        return result

    def _read_stdout(self, container: Container, cap: int) -> str:
        """The container's stdout log, read as a stream and never past ``cap`` bytes."""
        stream = container.logs(stdout=True, stderr=False, stream=True, follow=False)
        buffer = bytearray()
        try:
            for chunk in stream:
                buffer += chunk
                if len(buffer) > cap:
                    raise SandboxError(
                        f"the runner's output exceeded {cap} bytes", backend=self.name, container_id=container.id
                    )
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        return buffer.decode("utf-8", errors="replace")

    def _read_stderr_tail(self, container: Container) -> str:
        try:
            raw = container.logs(stdout=False, stderr=True, tail=20)
        except _DOCKER_ERRORS:
            return ""
        return raw.decode("utf-8", errors="replace")[-2000:] if isinstance(raw, bytes) else ""

    def _kill_quietly(self, container: Container) -> None:
        try:
            container.kill()
        except _DOCKER_ERRORS as exc:
            logger.debug("kill of container %s failed: %s", container.id, exc)

    def _remove_quietly(self, container: Container) -> None:
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            return
        except _DOCKER_ERRORS as exc:
            logger.warning("could not remove container %s: %s", container.id, exc)

    async def aclose(self) -> None:
        """Kill and remove containers of jobs still running, and close the client if this sandbox made it."""
        for container in list(self._active.values()):
            await asyncio.to_thread(self._remove_quietly, container)
        self._active.clear()
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await asyncio.to_thread(client.close)
