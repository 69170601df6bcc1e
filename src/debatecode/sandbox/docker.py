"""``DockerSandbox``: jobs run in locked-down containers, warm ones when it can.

Every container gets no network, a read-only root, size-capped tmpfs mounts,
an unprivileged uid, no capabilities, ``no-new-privileges`` and cgroup limits
(``_docker_spec.py``). Jobs run in one of two ways:

- **warm pool** (``settings.pool_size > 0``, the default): up to ``pool_size``
  running containers whose PID 1 is the pool server (``pool_server.py``); a job
  is one request over the container's attached stdin/stdout, and the server
  resets the container (every process killed, ``/work``, ``/tmp``, ``/dev/shm``
  emptied) before the next one. A container lost before it acknowledged a job is
  replaced and the job runs in a fresh container; one lost mid-job is removed
  and the job re-runs in a fresh container, whose result is authoritative.
- **fresh container** per job (``_docker_cold.py``): the runner is PID 1.

Hygiene: every container is labelled with its owner process; the first use
in a process sweeps orphans of dead owners (``_hygiene.py``); a reaper thread
removes containers that outlive their deadline; ``aclose()`` and an ``atexit``
hook remove everything this sandbox made, and warm containers exit by
themselves when their owner's connection drops, however the owner died.

Docker SDK and HTTP errors never leave this module: they become
``SandboxUnavailable`` (engine or image missing) or ``SandboxError``.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence

import docker
import docker.errors

from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox._attach import Attacher
from debatecode.sandbox._docker_cold import REAPER_MARGIN_S, FreshContainers, remove_quietly
from debatecode.sandbox._docker_spec import LABEL, ContainerShape
from debatecode.sandbox._docker_warm import WarmContainerFactory
from debatecode.sandbox._engine import DOCKER_ERRORS, engine_address, engine_unavailable, image_missing
from debatecode.sandbox._host_clock import wait_within
from debatecode.sandbox._hygiene import ContainerReaper, OwnerToken, SweepReport, sweep_orphans
from debatecode.sandbox._pool import ContainerLost, WarmPool
from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox
from debatecode.sandbox.settings import SandboxSettings
from debatecode.sandbox.wire import (
    RunnerProtocolError,
    max_result_bytes,
    parse_runner_output,
    request_line,
    result_from_runner,
)

__all__ = ["LABEL", "DockerSandbox"]

logger = logging.getLogger(__name__)

HOST_GRACE_S = 15.0
"""Extra host-side wait beyond the job's own limit: container start, teardown and a busy machine."""
_SWEPT: set[str] = set()
_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()


class DockerSandbox(Sandbox):
    """Runs jobs in containers of ``settings.image``: warm pooled ones, else a fresh one per job.

    Args:
        settings: image, pool and defaults; ``SandboxSettings()`` when omitted.
        client: a ``docker.DockerClient`` (or a fake with the same surface).
            Created from the environment (``DOCKER_HOST``) on first use when omitted.
        client_timeout_s: HTTP timeout of a client this sandbox creates itself.
        host_grace_s: how long past the job's own time limit the host waits before it
            kills the container and reports a timeout.
        labels: extra labels for every container (for example a session id), next to
            ``debatecode=1``, its kind, owner and a unique id.
        attacher: opens the attach connection of warm containers; by default a raw
            connection to the engine at ``DOCKER_HOST``.
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
        attacher: Attacher | None = None,
    ) -> None:
        self.settings = settings or SandboxSettings()
        self._client = client
        self._owns_client = client is None
        self._client_timeout_s = client_timeout_s
        self._host_grace_s = host_grace_s
        self._labels = dict(labels or {})
        self._owner = OwnerToken.current().label()
        self.reaper = ContainerReaper(self._remove_by_id)
        self._warm = WarmContainerFactory(
            self._get_client,
            self.settings.image,
            owner=self._owner,
            labels=self._labels,
            idle_ttl_s=self.settings.pool_idle_ttl_s,
            attacher=attacher,
            reaper=self.reaper,
        )
        self._fresh = FreshContainers(
            self._get_client,
            self.settings.image,
            owner=self._owner,
            labels=self._labels,
            host_grace_s=host_grace_s,
            reaper=self.reaper,
            max_host_share=self.settings.max_host_share,
        )
        self._pool: WarmPool | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        _LIVE.add(self)

    @property
    def default_concurrency(self) -> int:
        return self.settings.concurrency or max(1, self.settings.pool_size)

    def _remove_by_id(self, container_id: str) -> None:
        self._warm.remove_by_id(container_id)

    def _get_client(self) -> docker.DockerClient:
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=int(self._client_timeout_s))
            except DOCKER_ERRORS as exc:
                raise engine_unavailable(exc) from exc
        return self._client

    def check(self) -> None:
        """Verify that the engine answers and the sandbox image is present.

        Raises:
            SandboxUnavailable: engine unreachable (names DOCKER_HOST / the socket and how to
                start it) or image missing (says to run ``debatecode sandbox build``).
        """
        client = self._get_client()
        try:
            client.ping()
        except DOCKER_ERRORS as exc:
            raise engine_unavailable(exc) from exc
        try:
            client.images.get(self.settings.image)
        except docker.errors.ImageNotFound as exc:
            raise image_missing(self.settings.image) from exc
        except DOCKER_ERRORS as exc:
            raise engine_unavailable(exc) from exc

    def sweep(self, *, everything: bool = False, dry_run: bool = False) -> SweepReport:
        """Remove orphaned debatecode containers (see ``_hygiene``); ``everything`` removes all of them.

        Raises:
            SandboxUnavailable: the engine does not answer.
        """
        try:
            return sweep_orphans(self._get_client(), everything=everything, dry_run=dry_run)
        except DOCKER_ERRORS as exc:
            raise engine_unavailable(exc) from exc

    async def _sweep_once(self) -> None:
        if not self.settings.sweep_on_start or engine_address() in _SWEPT:
            return
        _SWEPT.add(engine_address())
        try:
            report = await asyncio.to_thread(self.sweep)
        except SandboxUnavailable as exc:
            logger.warning("start-up sweep of orphaned sandbox containers failed: %s", exc)
            return
        for name, reason in report.removed.items():
            logger.info("removed orphaned sandbox container %s: %s", name, reason)

    async def run(self, job: ExecJob) -> ExecResult:
        """Run ``job`` in a warm container (or a fresh one when the pool is off or unusable).

        Raises:
            SandboxUnavailable: the engine does not answer or the image is missing.
            SandboxError: the engine failed mid-job, the payload is too large, or the runner
                returned no result (``container_id`` is set).
        """
        await self._sweep_once()
        pool = self._current_pool()
        if pool is None:
            return await self.run_fresh(job)
        return await self._run_warm(pool, job)

    async def run_fresh(self, job: ExecJob) -> ExecResult:
        """Run ``job`` in a fresh container, whatever the pool settings.

        Raises:
            SandboxUnavailable: the engine does not answer or the image is missing.
            SandboxError: as for ``run``.
        """
        job_id = uuid.uuid4().hex
        try:
            return await asyncio.to_thread(self._fresh.run, job, job_id)
        except asyncio.CancelledError:
            container = self._fresh.active.get(job_id)
            if container is not None:
                # The worker thread removes the container once the kill ends its wait.
                asyncio.get_running_loop().run_in_executor(None, remove_quietly, container)
            raise

    async def run_batch(self, jobs: Sequence[ExecJob], *, concurrency: int | None = None) -> list[ExecResult]:
        """Run ``jobs`` concurrently over the warm pool and return results in job order.

        The pool grows to ``concurrency`` containers for the batch if it is smaller,
        and shrinks back to ``pool_size`` afterwards.

        Raises:
            SandboxUnavailable, SandboxError: as for ``run``; the jobs still running are cancelled.
        """
        limit = max(1, concurrency or self.default_concurrency)
        pool = self._current_pool()
        if not jobs or pool is None:
            return await super().run_batch(jobs, concurrency=limit)
        # For the batch the pool may grow to its concurrency; it shrinks back to pool_size afterwards.
        # Containers start as the first jobs ask for them, and each serves jobs as soon as it is ready.
        await pool.resize(max(self.settings.pool_size, limit))
        try:
            return await super().run_batch(jobs, concurrency=limit)
        finally:
            if not pool.closed:
                await pool.resize(self.settings.pool_size)

    async def warm(self, count: int | None = None, *, limits: Limits | None = None) -> int:
        """Start warm containers for jobs with ``limits`` until ``count`` (default: the pool size) are idle.

        Returns how many were started; 0 when the pool is off.

        Raises:
            SandboxUnavailable: the engine does not answer or the image is missing.
            SandboxError: a container would not start or did not become ready.
        """
        await self._sweep_once()
        pool = self._current_pool()
        if pool is None:
            return 0
        shape = ContainerShape.of(limits or self._default_limits(), max_host_share=self.settings.max_host_share)
        return await pool.warm(shape, count if count is not None else pool.size)

    def _default_limits(self) -> Limits:
        from debatecode.sandbox.registry import default_limits

        return default_limits(self.settings)

    def _current_pool(self) -> WarmPool | None:
        if self.settings.pool_size <= 0 or self._warm.problem:
            return None
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is loop:
            return self._pool
        if self._pool is not None:
            # A pool belongs to its event loop; containers made under an earlier loop are removed.
            self._remove_ids_sync([c.container_id for c in self._pool.members])
        self._pool = WarmPool(
            self.settings.pool_size, self._warm.start, self._warm.remove, idle_ttl_s=self.settings.pool_idle_ttl_s
        )
        self._pool_loop = loop
        return self._pool

    def _remove_ids_sync(self, container_ids: list[str]) -> None:
        for container_id in container_ids:
            self._warm.remove_by_id(container_id)

    async def _run_warm(self, pool: WarmPool, job: ExecJob) -> ExecResult:
        try:
            request = request_line(job)
        except ValueError as exc:
            raise SandboxError(str(exc), backend=self.name) from exc
        try:
            container = await pool.acquire(ContainerShape.of(job.limits, max_host_share=self.settings.max_host_share))
        except SandboxUnavailable:
            raise
        except SandboxError as exc:
            logger.warning("no warm container (%s); running the job in a fresh one", exc)
            return await self.run_fresh(job)
        host_timeout = job.limits.timeout_s + self._host_grace_s
        self.reaper.watch(container.container_id, host_timeout + REAPER_MARGIN_S)
        started = time.monotonic()
        try:
            text = await wait_within(container.run(request, max_result_bytes(job)), host_timeout)
        except TimeoutError:
            logger.warning("warm container %s outlived the host-side limit of %.1fs", container.name, host_timeout)
            await pool.discard(container)
            return ExecResult(
                status="timeout", exit_code=None, duration_s=time.monotonic() - started, backend=self.name
            )
        except ContainerLost as lost:
            await pool.discard(container)
            when = "during" if lost.job_started else "before"
            logger.warning("warm container lost %s the job (%s); running it in a fresh container", when, lost)
            return await self.run_fresh(job)
        except BaseException:
            await pool.discard(container)
            raise
        try:
            result = result_from_runner(parse_runner_output("\n" + text), self.name)
        except RunnerProtocolError as exc:
            await pool.discard(container)
            raise SandboxError(
                f"the warm container returned no usable result: {exc}",
                backend=self.name,
                container_id=container.container_id,
            ) from exc
        self.reaper.watch(container.container_id, self.settings.pool_idle_ttl_s + REAPER_MARGIN_S)
        await pool.release(container)
        return result

    async def aclose(self) -> None:
        """Remove every container this sandbox holds (warm and in flight), and close a client it made."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            if self._pool_loop is asyncio.get_running_loop():
                await pool.close()
            else:
                await asyncio.to_thread(self._remove_ids_sync, [c.container_id for c in pool.members])
        for container in list(self._fresh.active.values()):
            await asyncio.to_thread(remove_quietly, container)
        self._fresh.active.clear()
        self.reaper.close()
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await asyncio.to_thread(client.close)

    def close_sync(self) -> None:
        """Remove every container this sandbox holds, without an event loop (``atexit``)."""
        ids = [c.container_id for c in self._pool.members] if self._pool is not None else []
        ids += [str(c.id) for c in self._fresh.active.values()]
        self._pool = None
        if ids and self._client is not None:
            self._remove_ids_sync(ids)
        self.reaper.close()


def _close_all_at_exit() -> None:
    for sandbox in list(_LIVE):
        try:
            sandbox.close_sync()
        except Exception as exc:  # at exit, report and go on with the others
            logger.warning("sandbox cleanup at exit failed: %s", exc)


atexit.register(_close_all_at_exit)
