"""Sandbox backends by name: ``docker``, ``local`` and ``auto``.

Backends are imported only when their name is used, so that importing
``debatecode.sandbox`` (and ``debatecode --help``) never loads the Docker SDK.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass

from debatecode.config import SandboxSettings
from debatecode.errors import ConfigError, SandboxUnavailable
from debatecode.sandbox.base import Limits, Sandbox

__all__ = ["BACKENDS", "BackendStatus", "create_sandbox", "default_limits", "describe_backends"]

logger = logging.getLogger(__name__)

BACKENDS: dict[str, str] = {
    "docker": "debatecode.sandbox.docker:DockerSandbox",
    "local": "debatecode.sandbox.local:LocalSandbox",
}
"""Backend name -> ``module:class``, imported on demand."""
AUTO = "auto"


@dataclass(frozen=True)
class BackendStatus:
    """One backend, as ``debatecode sandbox doctor`` shows it."""

    name: str
    usable: bool
    reason: str
    """Why it is usable (what it isolates) or why not (and what to do)."""
    chosen: bool
    """``auto`` picks this backend."""


def _backend_class(name: str) -> type[Sandbox]:
    if name not in BACKENDS:
        known = ", ".join([AUTO, *BACKENDS])
        raise ConfigError(f"unknown sandbox backend {name!r}. Known backends: {known}.", key="sandbox.backend")
    module_name, _, class_name = BACKENDS[name].partition(":")
    cls: type[Sandbox] = getattr(importlib.import_module(module_name), class_name)
    return cls


def default_limits(settings: SandboxSettings) -> Limits:
    """The per-job ``Limits`` that ``settings`` describe."""
    return Limits(
        timeout_s=settings.timeout_s,
        memory_mb=settings.memory_mb,
        pids=settings.pids,
        cpus=settings.cpus,
        output_bytes=settings.output_bytes,
        disk_mb=settings.disk_mb,
    )


def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> Sandbox:
    """A ready sandbox: ``backend`` (default ``settings.backend``), checked.

    ``auto`` returns Docker when its check passes, else the local backend, with
    a WARNING naming why Docker was not usable.

    Raises:
        ConfigError: unknown backend name (the message lists the known ones).
        SandboxUnavailable: the named backend cannot run jobs here.
    """
    name = backend or settings.backend
    if name == AUTO:
        docker_sandbox = _backend_class("docker")(settings)  # type: ignore[call-arg]
        try:
            docker_sandbox.check()
        except SandboxUnavailable as exc:
            logger.warning("Docker sandbox not usable, falling back to the local sandbox: %s", exc)
            name = "local"
        else:
            return docker_sandbox
    sandbox = _backend_class(name)(settings)  # type: ignore[call-arg]
    sandbox.check()
    return sandbox


def describe_backends(settings: SandboxSettings) -> list[BackendStatus]:
    """Every backend, whether it is usable here and why, and which one ``auto`` picks. Never raises."""
    docker_usable, docker_reason = _docker_status(settings)
    local_usable, local_reason = _local_status(settings)
    auto_pick = "docker" if docker_usable else ("local" if local_usable else "")
    return [
        BackendStatus("docker", docker_usable, docker_reason, auto_pick == "docker"),
        BackendStatus("local", local_usable, local_reason, auto_pick == "local"),
    ]


def _docker_status(settings: SandboxSettings) -> tuple[bool, str]:
    try:
        sandbox = _backend_class("docker")(settings)  # type: ignore[call-arg]
        sandbox.check()
    except SandboxUnavailable as exc:
        return False, str(exc)
    except ImportError as exc:
        return False, f"the docker SDK cannot be imported: {exc} (pip install docker)"
    from debatecode.sandbox.images import image_status

    return True, f"engine answers; image {image_status(settings)}; no network, read-only root, cgroup limits"


def _local_status(settings: SandboxSettings) -> tuple[bool, str]:
    from debatecode.sandbox.local import LocalSandbox

    sandbox = LocalSandbox(settings)
    try:
        sandbox.check()
    except SandboxUnavailable as exc:
        return False, str(exc)
    return True, f"weaker than Docker: {sandbox.describe()}"
