"""Warm containers: create, attach, start and remove the containers of the pool.

A warm container runs the pool server (``pool_server.py``) as PID 1. It is
attached *before* it starts, so the host cannot miss its ready line; it keeps
no log (its output only ever goes to the attached host) and removes itself
when its server exits.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping

import docker
import docker.errors

from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox._attach import Attacher, AttachError, AttachUnsupported, engine_attacher
from debatecode.sandbox._docker_spec import ContainerShape, container_spec
from debatecode.sandbox._engine import DOCKER_ERRORS, create_container, engine_address
from debatecode.sandbox._hygiene import ContainerReaper
from debatecode.sandbox._pool import ContainerLost, WarmContainer
from debatecode.sandbox.wire import server_source

__all__ = ["READY_TIMEOUT_S", "WarmContainerFactory"]

logger = logging.getLogger(__name__)

BACKEND = "docker"
READY_TIMEOUT_S = 30.0
IDLE_TTL_ENV = "DC_IDLE_TTL_S"


class WarmContainerFactory:
    """Starts ready warm containers and removes them.

    Args:
        client: returns the Docker client.
        image: the sandbox image.
        owner: the owner label of this process.
        labels: extra labels for every container.
        idle_ttl_s: the server exits after this long without a job.
        attacher: opens attach connections; by default a raw connection to the engine at ``DOCKER_HOST``.
        reaper: forgets a container once it is removed.
    """

    def __init__(
        self,
        client: Callable[[], docker.DockerClient],
        image: str,
        *,
        owner: str,
        labels: Mapping[str, str],
        idle_ttl_s: float,
        attacher: Attacher | None,
        reaper: ContainerReaper,
    ) -> None:
        self._client = client
        self._image = image
        self._owner = owner
        self._labels = dict(labels)
        self._idle_ttl_s = idle_ttl_s
        self._attacher = attacher
        self._reaper = reaper
        self.problem = ""
        """Why warm containers cannot work with this engine (empty while they can)."""

    async def start(self, shape: ContainerShape) -> WarmContainer:
        """A started warm container of ``shape`` whose server said it is ready.

        Raises:
            SandboxUnavailable: the engine does not answer or the image is missing.
            SandboxError: the container did not start or become ready (it is removed again).
        """
        spec = container_spec(
            self._image,
            shape,
            kind="pool",
            command=["python3", "-c", server_source(), "serve"],
            environment={IDLE_TTL_ENV: f"{self._idle_ttl_s:g}"},
            owner=self._owner,
            labels=self._labels,
        )
        container_id = await asyncio.to_thread(self._create, spec)
        try:
            stream = await self._get_attacher()(container_id)
            await asyncio.to_thread(self._start, container_id)
            warm = WarmContainer(container_id, spec["name"], shape, stream)
            await warm.wait_ready(READY_TIMEOUT_S)
        except (AttachError, ContainerLost) as exc:
            await asyncio.to_thread(self.remove_by_id, container_id)
            raise SandboxError(
                f"the warm container did not start: {exc}", backend=BACKEND, container_id=container_id
            ) from exc
        except BaseException:
            await asyncio.to_thread(self.remove_by_id, container_id)
            raise
        logger.debug("warm container %s ready", spec["name"])
        return warm

    async def remove(self, container: WarmContainer) -> None:
        """Close the container's connection and remove it. Never raises."""
        self._reaper.unwatch(container.container_id)
        container.stream.close()
        await asyncio.to_thread(self.remove_by_id, container.container_id)

    def remove_by_id(self, container_id: str) -> None:
        """Force-remove a container and its anonymous volumes. Never raises; a container already gone is fine."""
        try:
            self._client().api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as exc:
            if exc.status_code == 409 and "in progress" in str(exc):
                self._wait_until_removed(container_id)
                return
            logger.warning("could not remove sandbox container %s: %s", container_id[:12], exc)
        except (SandboxUnavailable, *DOCKER_ERRORS) as exc:
            logger.warning("could not remove sandbox container %s: %s", container_id[:12], exc)

    def _wait_until_removed(self, container_id: str, within_s: float = 10.0) -> None:
        """Another removal (the container's own ``--rm``, a sweep) is running: wait for it to finish."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            try:
                self._client().api.inspect_container(container_id)
            except docker.errors.NotFound:
                return
            except (SandboxUnavailable, *DOCKER_ERRORS):
                return
            time.sleep(0.1)
        logger.warning("sandbox container %s is still being removed after %.0f s", container_id[:12], within_s)

    def _get_attacher(self) -> Attacher:
        if self._attacher is None:
            client = self._client()
            try:
                self._attacher = engine_attacher(engine_address(), str(client.api.api_version))
            except AttachUnsupported as exc:
                self.problem = str(exc)
                logger.warning("warm pool off, every job gets a fresh container: %s", exc)
                raise
        return self._attacher

    def _create(self, spec: dict[str, object]) -> str:
        return str(create_container(self._client(), spec, self._image, "a warm container").id)

    def _start(self, container_id: str) -> None:
        try:
            self._client().api.start(container_id)
        except DOCKER_ERRORS as exc:
            raise SandboxError(
                f"cannot start a warm container: {exc}", backend=BACKEND, container_id=container_id
            ) from exc
