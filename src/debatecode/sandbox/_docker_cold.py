"""Fresh containers: one locked-down container per job, removed afterwards.

Used when the warm pool is off (``pool_size = 0``), for the one job that a
lost warm container could not finish, and to measure cold latency. The runner
(``runner.py``) is the container's PID 1; the host waits for the container to
exit and reads the runner's result line back from its log, never past a cap.

Everything here is blocking Docker SDK code; ``DockerSandbox`` calls it from a
worker thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import docker
import docker.errors
import requests.exceptions

from debatecode.errors import SandboxError
from debatecode.sandbox._docker_spec import DEFAULT_MAX_HOST_SHARE, ContainerShape, container_spec, job_expiry
from debatecode.sandbox._engine import DOCKER_ERRORS, create_container
from debatecode.sandbox._hygiene import ContainerReaper
from debatecode.sandbox.base import ExecJob, ExecResult
from debatecode.sandbox.wire import (
    OOM_COUNTERS,
    RunnerProtocolError,
    encode_payload,
    max_result_bytes,
    parse_runner_output,
    result_from_runner,
    runner_source,
)

if TYPE_CHECKING:
    from docker.models.containers import Container

__all__ = ["REAPER_MARGIN_S", "FreshContainers"]

logger = logging.getLogger(__name__)

BACKEND = "docker"
REAPER_MARGIN_S = 30.0
"""How long past the host's own kill the reaper waits before it removes a container itself."""


class FreshContainers:
    """Runs jobs in fresh containers of ``image``; tracks the ones in flight.

    Args:
        client: returns the Docker client (created on first use by the sandbox).
        image: the sandbox image.
        owner: the owner label of this process.
        labels: extra labels for every container.
        host_grace_s: how long past the job's own limit the host waits before it kills the container.
        reaper: kills containers that outlive even that.
        max_host_share: the largest share of this machine's memory and CPUs a container gets.
    """

    def __init__(
        self,
        client: Callable[[], docker.DockerClient],
        image: str,
        *,
        owner: str,
        labels: Mapping[str, str],
        host_grace_s: float,
        reaper: ContainerReaper,
        max_host_share: float = DEFAULT_MAX_HOST_SHARE,
    ) -> None:
        self._client = client
        self._image = image
        self._owner = owner
        self._labels = dict(labels)
        self._host_grace_s = host_grace_s
        self._reaper = reaper
        self._max_host_share = max_host_share
        self.active: dict[str, Container] = {}
        """Job id -> container, for jobs in flight."""

    def run(self, job: ExecJob, job_id: str) -> ExecResult:
        """Run ``job`` in a fresh container and remove the container afterwards.

        Raises:
            SandboxUnavailable: the engine does not answer or the image is missing.
            SandboxError: the engine failed mid-job, the payload is too large, or the runner
                returned no result (``container_id`` is set).
        """
        started = time.monotonic()
        container = self._start(job, job_id)
        try:
            return self._finish(container, job, started)
        finally:
            self.active.pop(job_id, None)
            self._reaper.unwatch(str(container.id))
            remove_quietly(container)

    def _start(self, job: ExecJob, job_id: str) -> Container:
        try:
            environment = encode_payload(job, reap_uid=True, oom_counters=OOM_COUNTERS)
        except ValueError as exc:
            raise SandboxError(str(exc), backend=BACKEND) from exc
        spec = self.spec(job, environment)
        container = create_container(self._client(), spec, self._image, "the job container")
        self.active[job_id] = container
        self._reaper.watch(str(container.id), job.limits.timeout_s + self._host_grace_s + REAPER_MARGIN_S)
        logger.debug("created container %s for job %s", container.id, job_id)
        try:
            container.start()
        except DOCKER_ERRORS as exc:
            self.active.pop(job_id, None)
            self._reaper.unwatch(str(container.id))
            remove_quietly(container)
            raise SandboxError(
                f"cannot start the job container: {exc}", backend=BACKEND, container_id=container.id
            ) from exc
        return container

    def spec(self, job: ExecJob, environment: dict[str, str]) -> dict[str, Any]:
        """The container spec of a fresh job container."""
        return container_spec(
            self._image,
            ContainerShape.of(job.limits, max_host_share=self._max_host_share),
            kind="job",
            command=["python3", "-c", runner_source()],
            environment=environment,
            owner=self._owner,
            labels=self._labels,
            expires_at=job_expiry(job.limits.timeout_s, self._host_grace_s, REAPER_MARGIN_S),
        )

    def _finish(self, container: Container, job: ExecJob, started: float) -> ExecResult:
        host_timeout = job.limits.timeout_s + self._host_grace_s
        waited_from = time.monotonic()
        try:
            container.wait(timeout=host_timeout)
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as exc:
            # A read timeout may surface as either class; a connection failure well before the limit is the engine.
            if time.monotonic() - waited_from < 0.9 * host_timeout:
                raise SandboxError(
                    f"lost the Docker engine while waiting for the job: {exc}",
                    backend=BACKEND,
                    container_id=container.id,
                ) from exc
            logger.warning("container %s outlived the host-side limit of %.1fs; killing it", container.id, host_timeout)
            kill_quietly(container)
            return ExecResult(status="timeout", exit_code=None, duration_s=time.monotonic() - started, backend=BACKEND)
        except DOCKER_ERRORS as exc:
            raise SandboxError(
                f"waiting for the job container failed: {exc}", backend=BACKEND, container_id=container.id
            ) from exc
        try:
            container.reload()
            state = container.attrs.get("State", {})
            text = read_stdout(container, max_result_bytes(job))
        except DOCKER_ERRORS as exc:
            raise SandboxError(
                f"reading the job's result failed: {exc}", backend=BACKEND, container_id=container.id
            ) from exc
        oom_killed = bool(state.get("OOMKilled"))
        try:
            result = result_from_runner(parse_runner_output(text), BACKEND)
        except RunnerProtocolError as exc:
            if oom_killed:
                return ExecResult(
                    status="oom",
                    exit_code=None,
                    stderr=f"killed: the job exceeded its memory limit of {job.limits.memory_mb} MiB\n",
                    duration_s=time.monotonic() - started,
                    backend=BACKEND,
                )
            raise SandboxError(
                f"the job container (exit code {state.get('ExitCode')}) returned no result: {exc}; "
                f"runner stderr: {read_stderr_tail(container)!r}",
                backend=BACKEND,
                container_id=container.id,
            ) from exc
        if oom_killed and result.status != "ok":
            result = result.model_copy(update={"status": "oom"})
        return result


def read_stdout(container: Container, cap: int) -> str:
    """The container's stdout log, read as a stream and never past ``cap`` bytes.

    Raises:
        SandboxError: the log is longer than ``cap``.
    """
    stream = container.logs(stdout=True, stderr=False, stream=True, follow=False)
    buffer = bytearray()
    try:
        for chunk in stream:
            buffer += chunk
            if len(buffer) > cap:
                raise SandboxError(
                    f"the runner's output exceeded {cap} bytes", backend=BACKEND, container_id=container.id
                )
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return buffer.decode("utf-8", errors="replace")


def read_stderr_tail(container: Container) -> str:
    try:
        raw = container.logs(stdout=False, stderr=True, tail=20)
    except DOCKER_ERRORS:
        return ""
    return raw.decode("utf-8", errors="replace")[-2000:] if isinstance(raw, bytes) else ""


def kill_quietly(container: Container) -> None:
    try:
        container.kill()
    except DOCKER_ERRORS as exc:
        logger.debug("kill of container %s failed: %s", container.id, exc)


def remove_quietly(container: Container) -> None:
    """Force-remove a container and its anonymous volumes; a container already gone is fine."""
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        return
    except DOCKER_ERRORS as exc:
        logger.warning("could not remove container %s: %s", container.id, exc)
