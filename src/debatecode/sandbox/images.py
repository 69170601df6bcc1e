"""Build the sandbox image offline: ``debatecode sandbox build``.

The Dockerfile ships inside the package as package data, at
``debatecode/sandbox/images_data/python/Dockerfile`` (``sandbox-images/`` at the
top of a checkout links there), so an installed debatecode builds the image as
well as a checkout does; ``$DEBATECODE_IMAGES_DIR`` points the builder at
another folder of the same shape. The builder assembles a temporary context
holding the Dockerfile, ``install_wheels.py`` and pure-Python wheels of pytest
and its dependencies, fetched from PyPI with ``pip download`` and pinned to the
versions installed here. The image gets no pip and needs no network while
building.

The base image is, in order: ``base`` when given; ``python:3.11-slim`` when it
is present or can be pulled; else the local ``debatecode/base-bookworm:latest``,
created with ``images_data/build-base.sh`` (debootstrap, root only) when
missing.

The image is tagged ``<repo>:ctx-<hash>`` with a hash of the build inputs
(Dockerfile, installer, pinned wheel set, base image id) and with
``settings.image``. When the hashed tag exists the build is skipped.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox.settings import SandboxSettings

__all__ = [
    "DEFAULT_BASE",
    "LOCAL_BASE",
    "PACKAGED_IMAGES",
    "build_image",
    "image_status",
    "images_dir",
    "wheel_requirements",
]

logger = logging.getLogger(__name__)

DEFAULT_BASE = "python:3.11-slim"
LOCAL_BASE = "debatecode/base-bookworm:latest"
PACKAGED_IMAGES = Path(__file__).resolve().with_name("images_data")
"""The image definitions shipped as package data (``sandbox-images/`` in a checkout links here)."""
WHEEL_ROOTS = ("pytest",)
_FALLBACK_REQUIREMENTS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")

Progress = Callable[[str], None]


def _say(progress: Progress | None, message: str) -> None:
    logger.info("%s", message)
    if progress is not None:
        progress(message)


def images_dir() -> Path:
    """The folder of image definitions: ``$DEBATECODE_IMAGES_DIR``, else the one shipped in the package.

    Raises:
        SandboxError: the folder holds no ``python/Dockerfile``.
    """
    explicit = os.environ.get("DEBATECODE_IMAGES_DIR")
    candidate = Path(explicit) if explicit else PACKAGED_IMAGES
    if not (candidate / "python" / "Dockerfile").is_file():
        raise SandboxError(
            f"no sandbox image definitions at {candidate} (expected python/Dockerfile there). "
            "Set DEBATECODE_IMAGES_DIR to a folder laid out like `sandbox-images` in a debatecode checkout, "
            "or reinstall debatecode (its package data holds them).",
            backend="docker",
        )
    return candidate


def wheel_requirements() -> list[str]:
    """pytest and its runtime dependencies, pinned to the versions installed here when present."""
    from packaging.markers import default_environment
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    environment: dict[str, str] = {str(key): str(value) for key, value in default_environment().items()}
    environment["extra"] = ""
    pins: dict[str, str] = {}
    pending = list(WHEEL_ROOTS)
    while pending:
        name = canonicalize_name(pending.pop())
        if name in pins:
            continue
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            pins[name] = name
            continue
        pins[name] = f"{name}=={distribution.version}"
        for spec in distribution.requires or []:
            try:
                requirement = Requirement(spec)
            except InvalidRequirement:
                continue
            if requirement.marker is None or requirement.marker.evaluate(environment):
                pending.append(requirement.name)
    if not pins:
        return list(_FALLBACK_REQUIREMENTS)
    return [pins[name] for name in sorted(pins)]


def _client(timeout_s: int = 900) -> Any:
    import docker
    import docker.errors
    import requests.exceptions

    try:
        return docker.from_env(timeout=timeout_s)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        address = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise SandboxUnavailable(
            f"the Docker engine does not answer at {address}: {exc}. Start it (`sudo dockerd &`) first.",
            backend="docker",
        ) from exc


def _split_tag(image: str) -> tuple[str, str]:
    repo, sep, tag = image.rpartition(":")
    if not sep or "/" in tag:
        return image, "latest"
    return repo, tag


def _image_id(client: Any, name: str) -> str | None:
    import docker.errors

    try:
        return str(client.images.get(name).id)
    except docker.errors.ImageNotFound:
        return None


def _resolve_base(client: Any, base: str | None, progress: Progress | None) -> str:
    import docker.errors
    import requests.exceptions

    if base is not None:
        if _image_id(client, base) is None:
            _say(progress, f"pulling base image {base}")
            try:
                client.images.pull(base)
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                raise SandboxError(
                    f"base image {base!r} is not present and cannot be pulled: {exc}", backend="docker"
                ) from exc
        return base
    if _image_id(client, DEFAULT_BASE) is not None:
        return DEFAULT_BASE
    _say(progress, f"trying to pull {DEFAULT_BASE}")
    try:
        client.images.pull(DEFAULT_BASE)
        return DEFAULT_BASE
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        _say(progress, f"cannot pull {DEFAULT_BASE} ({str(exc).splitlines()[0][:160]}); using a local Debian base")
    if _image_id(client, LOCAL_BASE) is None:
        _build_local_base(progress)
    return LOCAL_BASE


def _build_local_base(progress: Progress | None) -> None:
    script = images_dir() / "build-base.sh"
    if os.geteuid() != 0:
        raise SandboxError(
            f"no base image: {DEFAULT_BASE} cannot be pulled and {LOCAL_BASE} does not exist. Creating it needs "
            f"root (debootstrap): run `sudo sh {script}` once, or pass --base IMAGE with python3 in it.",
            backend="docker",
        )
    _say(progress, f"creating {LOCAL_BASE} with {script} (debootstrap, about a minute)")
    with subprocess.Popen(
        ["sh", str(script), LOCAL_BASE],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    ) as proc:
        assert proc.stdout is not None
        tail: list[str] = []
        for line in proc.stdout:
            line = line.rstrip()
            tail = [*tail[-19:], line]
            if line:
                _say(progress, line)
        code = proc.wait()
    if code != 0:
        raise SandboxError(f"{script} failed with exit code {code}:\n" + "\n".join(tail), backend="docker")


def _download_wheels(requirements: list[str], dest: Path, progress: Progress | None) -> list[str]:
    _say(progress, "downloading wheels: " + " ".join(requirements))
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--only-binary=:all:",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
        "-d",
        str(dest),
        *requirements,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    if completed.returncode != 0:
        raise SandboxError(
            f"`pip download` of the sandbox's wheels failed (is PyPI or a mirror reachable?):\n{completed.stderr[-2000:]}",
            backend="docker",
        )
    wheels = sorted(path.name for path in dest.glob("*.whl"))
    impure = [name for name in wheels if not name.endswith("-none-any.whl")]
    if impure:
        raise SandboxError(
            f"the sandbox image takes pure-Python wheels only, got: {', '.join(impure)}", backend="docker"
        )
    return wheels


def _inputs_hash(source: Path, requirements: list[str], base_id: str) -> str:
    digest = hashlib.sha256()
    for name in ("Dockerfile", "install_wheels.py"):
        digest.update(name.encode() + b"\0" + (source / name).read_bytes() + b"\0")
    digest.update("\n".join(requirements).encode() + b"\0" + base_id.encode())
    return digest.hexdigest()[:16]


def build_image(
    settings: SandboxSettings,
    *,
    base: str | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> str:
    """Build (or reuse) the sandbox image and tag it ``settings.image``; return the content tag.

    Raises:
        SandboxUnavailable: the Docker engine does not answer.
        SandboxError: no image definitions found, no usable base image, ``pip download``
            failed, or the build itself failed (the message carries the build log's tail).
    """
    import docker.errors
    import requests.exceptions

    source = images_dir() / "python"
    client = _client()
    try:
        base_name = _resolve_base(client, base, progress)
        base_id = _image_id(client, base_name) or base_name
        requirements = wheel_requirements()
        repo, tag = _split_tag(settings.image)
        content_tag = f"{repo}:ctx-{_inputs_hash(source, requirements, base_id)}"
        if not force and _image_id(client, content_tag) is not None:
            client.images.get(content_tag).tag(repo, tag)
            _say(progress, f"up to date: {content_tag} (tagged {settings.image})")
            return content_tag
        with tempfile.TemporaryDirectory(prefix="debatecode-build-") as tmp:
            context = Path(tmp)
            shutil.copy2(source / "Dockerfile", context / "Dockerfile")
            shutil.copy2(source / "install_wheels.py", context / "install_wheels.py")
            (context / "wheels").mkdir()
            _download_wheels(requirements, context / "wheels", progress)
            _say(progress, f"building {content_tag} from {base_name}")
            _run_build(client, context, content_tag, base_name, progress, no_cache=force)
        client.images.get(content_tag).tag(repo, tag)
        _say(progress, f"built {content_tag} (tagged {settings.image})")
        return content_tag
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"building the sandbox image failed: {exc}", backend="docker") from exc
    finally:
        client.close()


def _run_build(
    client: Any, context: Path, content_tag: str, base_name: str, progress: Progress | None, *, no_cache: bool
) -> None:
    stream = client.api.build(
        path=str(context),
        tag=content_tag,
        buildargs={"BASE": base_name},
        rm=True,
        forcerm=True,
        pull=False,
        nocache=no_cache,
        network_mode="none",
        labels={"debatecode.image": "sandbox-python"},
        decode=True,
    )
    log: list[str] = []
    for event in stream:
        if "error" in event:
            detail = event.get("errorDetail", {}).get("message") or event["error"]
            raise SandboxError(f"docker build failed: {detail}\n" + "".join(log[-20:]), backend="docker")
        text = event.get("stream")
        if text:
            log.append(text)
            if text.strip():
                _say(progress, text.strip())


def image_status(settings: SandboxSettings) -> str:
    """One line on the sandbox image for ``debatecode sandbox doctor``; never raises."""
    import docker.errors
    import requests.exceptions

    try:
        client = _client(timeout_s=10)
    except SandboxUnavailable as exc:
        return f"unknown: {exc}"
    try:
        image = client.images.get(settings.image)
    except docker.errors.ImageNotFound:
        return f"missing: {settings.image} (run `debatecode sandbox build`)"
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return f"unknown: {exc}"
    finally:
        client.close()
    size_mb = int(image.attrs.get("Size", 0)) / 1_000_000
    created = str(image.attrs.get("Created", "?"))[:19]
    tags = ", ".join(image.tags) or settings.image
    return f"present: {tags} ({image.short_id}, {size_mb:.0f} MB, created {created})"
