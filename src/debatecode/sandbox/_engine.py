"""The Docker engine border: where it is, and how its failures become our errors."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import docker.errors
import requests.exceptions

from debatecode.errors import SandboxError, SandboxUnavailable

if TYPE_CHECKING:
    from docker.models.containers import Container

__all__ = ["DOCKER_ERRORS", "create_container", "engine_address", "engine_unavailable", "image_missing"]

DOCKER_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)
"""Everything the Docker SDK raises; never let these leave the sandbox package."""


def engine_address() -> str:
    """The engine's address as the Docker SDK finds it (``DOCKER_HOST``, else the default socket)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def engine_unavailable(exc: BaseException) -> SandboxUnavailable:
    """The error for an engine that does not answer, with what to do about it."""
    return SandboxUnavailable(
        f"the Docker engine does not answer at {engine_address()} (DOCKER_HOST): {exc}. "
        "Start it (for example `sudo dockerd >/var/log/dockerd.log 2>&1 &`), point DOCKER_HOST at a "
        "running engine, or run with `--sandbox local` (weaker isolation).",
        backend="docker",
    )


def image_missing(image: str) -> SandboxUnavailable:
    """The error for a missing sandbox image, with how to build it."""
    return SandboxUnavailable(
        f"the sandbox image {image!r} is not present in the Docker engine. "
        "Build it offline with `debatecode sandbox build`, or run with `--sandbox local`.",
        backend="docker",
    )


def create_container(client: docker.DockerClient, spec: Mapping[str, Any], image: str, what: str) -> Container:
    """Create (not start) ``what`` (e.g. "the job container") from ``spec``, the engine's failures as our errors.

    Raises:
        SandboxUnavailable: the engine does not answer, or ``image`` is missing.
        SandboxError: the engine refused the container.
    """
    try:
        return client.containers.create(**spec)
    except docker.errors.ImageNotFound as exc:
        raise image_missing(image) from exc
    except requests.exceptions.ConnectionError as exc:
        raise engine_unavailable(exc) from exc
    except DOCKER_ERRORS as exc:
        raise SandboxError(f"cannot create {what}: {exc}", backend="docker") from exc
