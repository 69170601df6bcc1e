"""Sandbox backends by name: ``docker``, ``local``, ``unsafe-host`` and ``auto``.

- ``docker``: a container per job (or a warm pool); the strongest isolation.
- ``local``: a local process inside bubblewrap; refused when bubblewrap is unusable here.
- ``unsafe-host``: a plain local process under rlimits. The code can reach the
  host's network, files and processes, so it runs only when named explicitly,
  and it logs a WARNING saying so.
- ``auto``: Docker when it is usable, else ``local`` (with a WARNING naming what
  bubblewrap isolates), else a ``SandboxUnavailable`` that names every fix.
  ``auto`` never picks ``unsafe-host``.

Backends are imported only when their name is used, so that importing
``debatecode.sandbox`` (and ``debatecode --help``) never loads the Docker SDK.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from debatecode.errors import ConfigError, SandboxUnavailable
from debatecode.sandbox.base import Limits, Sandbox
from debatecode.sandbox.settings import SandboxSettings

if TYPE_CHECKING:
    from debatecode.sandbox.local import LocalSandbox

__all__ = [
    "AUTO",
    "BACKENDS",
    "UNSAFE_HOST",
    "BackendStatus",
    "auto_refusal",
    "create_sandbox",
    "default_limits",
    "describe_backends",
]

logger = logging.getLogger(__name__)

BACKENDS: dict[str, str] = {
    "docker": "debatecode.sandbox.docker:DockerSandbox",
    "local": "debatecode.sandbox.local:LocalSandbox",
    "unsafe-host": "debatecode.sandbox.local:LocalSandbox",
}
"""Backend name -> ``module:class``, imported on demand."""
_OPTIONS: dict[str, dict[str, str]] = {
    "local": {"isolation": "bubblewrap"},
    "unsafe-host": {"isolation": "rlimits"},
}
"""Backend name -> keyword arguments of its class."""
AUTO = "auto"
UNSAFE_HOST = "unsafe-host"

_START_DOCKER = (
    "start Docker (`sudo dockerd >/var/log/dockerd.log 2>&1 &` or `sudo systemctl start docker`, "
    "or point DOCKER_HOST at a running engine), then build the image if it is missing (`debatecode sandbox build`)"
)
_INSTALL_BWRAP = "install bubblewrap (`apt-get install bubblewrap`)"
_OPT_IN = (
    "only for code you would run yourself, opt in to running it on this host without isolation "
    '(`--sandbox unsafe-host`, or sandbox.backend = "unsafe-host")'
)
_HOST_REACH = (
    "the host's network (the internet and services listening on localhost), every file the job's uid can "
    "read or write, the other processes of that uid (signals, /proc, their environment) and the host's "
    "/tmp, /dev/shm and SysV IPC; only rlimits cap its CPU time, memory and file sizes"
)


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


def _instantiate(name: str, settings: SandboxSettings) -> Sandbox:
    """An unchecked sandbox of backend ``name``."""
    return _backend_class(name)(settings, **_OPTIONS.get(name, {}))  # type: ignore[call-arg]


def _local(name: str, settings: SandboxSettings) -> LocalSandbox:
    """An unchecked ``local`` or ``unsafe-host`` sandbox."""
    from debatecode.sandbox.local import LocalSandbox

    sandbox = _instantiate(name, settings)
    assert isinstance(sandbox, LocalSandbox)
    return sandbox


def default_limits(settings: SandboxSettings) -> Limits:
    """The per-job ``Limits`` that ``settings`` describe (``Limits.from_settings``)."""
    return Limits.from_settings(settings)


def auto_refusal(docker_reason: str, local_reason: str) -> str:
    """Why ``auto`` refuses to run jobs here, and every way to fix it, as one message."""
    return (
        "no sandbox is usable here, so no generated code was run "
        "(debatecode runs it unsandboxed only when asked to with `--sandbox unsafe-host`). "
        f"Docker: {docker_reason.rstrip('.')}. Bubblewrap: {local_reason.rstrip('.')}. "
        f"To fix it, do one of: {_START_DOCKER}; {_INSTALL_BWRAP}; or, {_OPT_IN}."
    )


def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> Sandbox:
    """A ready sandbox: ``backend`` (default ``settings.backend``), checked.

    ``auto`` returns Docker when its check passes, else the local backend under
    bubblewrap (with a WARNING naming why Docker was not usable and what
    bubblewrap isolates), else raises. ``unsafe-host`` logs a WARNING naming
    what the code can reach.

    Raises:
        ConfigError: unknown backend name (the message lists the known ones).
        SandboxUnavailable: the named backend cannot run jobs here; for ``auto``,
            neither Docker nor bubblewrap can, and the message names every fix.
    """
    name = backend or settings.backend
    if name == AUTO:
        return _auto(settings)
    if name == "local":
        local = _local(name, settings)
        _check_bubblewrap(local)
        return local
    if name == UNSAFE_HOST:
        host = _local(name, settings)
        host.check()
        host.name = UNSAFE_HOST  # results, reports and the session then say what ran the code
        logger.warning(
            "sandbox unsafe-host: generated code runs on this host without isolation (%s). It can reach %s.",
            host.describe(),
            _HOST_REACH,
        )
        return host
    sandbox = _instantiate(name, settings)
    sandbox.check()
    return sandbox


def _auto(settings: SandboxSettings) -> Sandbox:
    docker_sandbox, docker_reason = _try_docker(settings)
    if docker_sandbox is not None:
        return docker_sandbox
    local = _local("local", settings)
    try:
        local.check()
    except SandboxUnavailable as exc:
        raise SandboxUnavailable(auto_refusal(docker_reason, str(exc)), backend=AUTO) from exc
    logger.warning(
        "sandbox auto: Docker is not usable (%s), so jobs run in the local sandbox under %s; "
        "weaker than Docker (docs/sandbox.md lists the differences).",
        docker_reason.rstrip("."),
        local.describe(),
    )
    return local


def _check_bubblewrap(sandbox: LocalSandbox) -> None:
    """``check`` the ``local`` backend, adding the fixes when bubblewrap is what is missing."""
    try:
        sandbox.check()
    except SandboxUnavailable as exc:
        if sandbox.probe.bwrap is not None:
            raise
        raise SandboxUnavailable(
            f"{str(exc).rstrip('.')}. The local sandbox runs jobs only under bubblewrap: {_INSTALL_BWRAP}, "
            f"or use Docker (`--sandbox docker`; {_START_DOCKER}), or, {_OPT_IN}.",
            backend="local",
        ) from exc


def _docker_problem(exc: SandboxUnavailable, settings: SandboxSettings) -> str:
    """What is wrong with Docker, without the advice of the docker backend's own message."""
    import docker.errors

    from debatecode.sandbox._engine import DOCKER_ERRORS, engine_address

    cause = exc.__cause__
    if isinstance(cause, docker.errors.ImageNotFound):
        return f"the engine answers, but the sandbox image {settings.image!r} is not built"
    if isinstance(cause, DOCKER_ERRORS):
        return f"the engine does not answer at {engine_address()} (DOCKER_HOST): {cause}"
    return str(exc)


def describe_backends(settings: SandboxSettings) -> list[BackendStatus]:
    """Every backend, whether it is usable here and why, and which one ``auto`` picks. Never raises.

    When neither ``docker`` nor ``local`` is usable, no status is ``chosen``:
    ``auto`` refuses (``auto_refusal`` says why and how to fix it).
    """
    docker_sandbox, docker_reason = _try_docker(settings)
    docker_usable = docker_sandbox is not None
    local_usable, local_reason = _local_status(settings)
    host_usable, host_reason = _unsafe_host_status(settings)
    auto_pick = "docker" if docker_usable else ("local" if local_usable else "")
    return [
        BackendStatus("docker", docker_usable, docker_reason, auto_pick == "docker"),
        BackendStatus("local", local_usable, local_reason, auto_pick == "local"),
        BackendStatus(UNSAFE_HOST, host_usable, host_reason, False),
    ]


def _try_docker(settings: SandboxSettings) -> tuple[Sandbox | None, str]:
    """Docker, checked (None when unusable), and what it isolates or why it is not usable."""
    try:
        sandbox = _instantiate("docker", settings)
        sandbox.check()
    except SandboxUnavailable as exc:
        return None, _docker_problem(exc, settings)
    except ImportError as exc:
        return None, f"the docker SDK cannot be imported: {exc} (pip install docker)"
    from debatecode.sandbox.images import image_status

    return sandbox, f"engine answers; image {image_status(settings)}; no network, read-only root, cgroup limits"


def _local_status(settings: SandboxSettings) -> tuple[bool, str]:
    sandbox = _local("local", settings)
    try:
        sandbox.check()
    except SandboxUnavailable as exc:
        reason = str(exc)
        return (
            False,
            reason if "apt-get install bubblewrap" in reason else f"{reason.rstrip('.')}. Fix: {_INSTALL_BWRAP}.",
        )
    return True, f"weaker than Docker: {sandbox.describe()}"


def _unsafe_host_status(settings: SandboxSettings) -> tuple[bool, str]:
    sandbox = _local(UNSAFE_HOST, settings)
    try:
        sandbox.check()
    except SandboxUnavailable as exc:
        return False, f"never picked by auto; not usable here either: {exc}"
    return True, (
        f"NO isolation; never picked by auto, runs only with `--sandbox unsafe-host`: {sandbox.describe()}. "
        f"The code can reach {_HOST_REACH}"
    )
