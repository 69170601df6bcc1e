"""Instance images in three layers, built locally and cached by content hash.

- **base** ``debatecode/swebench-base:<hash>``: FROM the sandbox image
  (``debatecode/sandbox-python:latest`` unless ``base_image`` says otherwise), plus
  the grader plugin. Hash: its Dockerfile, the plugin and the FROM image's id.
- **env** ``debatecode/swebench-env:<hash>``: FROM base, plus the repository's
  Python dependencies at ``environment_setup_commit``: its requirements files
  (``RepoSpec.requirements_files``), ``RepoSpec.requirements`` and pytest (pinned
  to the host's version unless a requirement names it). Wheels are downloaded on
  the host (``pip download`` for the image's Python, probed once per base) and
  installed with no network. Hash: the Dockerfile, the base id, the target Python
  and the requirements text, so repositories with the same requirements share one.
- **instance** ``debatecode/swebench-instance:<id>-<hash>``: FROM env, plus the
  repository at ``base_commit`` in ``/opt/swebench/repo``. Hash: the env id and the
  commit's tree hash.

A layer whose tag exists is not built again. Every build runs with
``network_mode=none`` and removes its intermediate containers.

Instances graded at once (``--jobs``) share one builder. Each tag is built under
a lock of its own, so two instances that need the same env or instance image wait
for one build and then reuse it, while different images build side by side. The
interpreter probe of a base image runs once.

Builders of other processes on the same machine (Ray tasks, ``--executor ray``,
each with a builder of its own) are kept from building one tag at once by a file
lock per tag (``node_lock``, under the system's temporary folder): the second
waits, then finds the image and reuses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from filelock import FileLock
from pydantic import BaseModel

from debatecode.bench.swebench._dockerfiles import BASE_DOCKERFILE, ENV_DOCKERFILE, INSTANCE_DOCKERFILE
from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.errors import ImageBuildError
from debatecode.bench.swebench.execution import SandboxFactory, docker_sandbox
from debatecode.bench.swebench.repos import RepoMirror, RepoSpec
from debatecode.errors import SandboxUnavailable
from debatecode.sandbox.base import ExecJob, Limits

__all__ = [
    "BASE_REPO",
    "ENV_REPO",
    "INSTANCE_REPO",
    "ImageBuilder",
    "ImageSet",
    "LayerImage",
    "PythonTarget",
    "node_lock",
]

BASE_REPO = "debatecode/swebench-base"
ENV_REPO = "debatecode/swebench-env"
INSTANCE_REPO = "debatecode/swebench-instance"
_UNSUPPORTED_LINE = re.compile(r"^\s*(-e\b|--editable\b|\.|/|file:)")
_PROBE = (
    "import json, os, platform, sys; "
    "libc = os.confstr('CS_GNU_LIBC_VERSION') if hasattr(os, 'confstr') else ''; "
    "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], 'implementation': sys.implementation.name, "
    "'machine': platform.machine(), 'glibc': libc or ''}))"
)
Progress = Callable[[str], None]


class PythonTarget(BaseModel):
    """The image's interpreter, as ``pip download`` needs to know it."""

    version: str
    implementation: str
    machine: str
    glibc: str = ""

    def pip_args(self) -> list[str]:
        """``pip download`` options that pick wheels for this interpreter."""
        digits = self.version.replace(".", "")
        args = ["--only-binary=:all:", "--python-version", self.version, "--implementation", "cp"]
        for abi in (f"cp{digits}", "abi3", "none"):
            args += ["--abi", abi]
        platforms: list[str] = []
        match = re.match(r"glibc (\d+)\.(\d+)", self.glibc)
        if match:
            major, minor = int(match.group(1)), int(match.group(2))
            platforms += [f"manylinux_{major}_{m}_{self.machine}" for m in range(minor, 4, -1)]
            if self.machine in ("x86_64", "i686"):
                platforms += [
                    f"manylinux2014_{self.machine}",
                    f"manylinux2010_{self.machine}",
                    f"manylinux1_{self.machine}",
                ]
            elif minor >= 17:
                platforms.append(f"manylinux2014_{self.machine}")
        platforms.append(f"linux_{self.machine}")
        for platform in platforms:
            args += ["--platform", platform]
        return args


class LayerImage(BaseModel):
    """One layer: its tag, and whether (and how long) this run built it."""

    tag: str
    built: bool = False
    build_s: float = 0.0


class ImageSet(BaseModel):
    """The three layers of one instance's image."""

    base: LayerImage
    env: LayerImage
    instance: LayerImage


@contextlib.contextmanager
def node_lock(tag: str) -> Iterator[None]:
    """Hold this machine's file lock of ``tag`` (blocking): one process at a time builds an image tag.

    The lock is filelock's ``FileLock`` (``flock`` on Unix) on a file under
    ``<tmp>/debatecode-swebench-locks/``; the kernel releases it when its holder
    exits, even when killed. Each call takes a lock of its own, so two threads of
    one process wait for each other too.
    """
    folder = Path(tempfile.gettempdir()) / "debatecode-swebench-locks"
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(folder / f"{_hash(tag)}.lock"):
        yield


def _hash(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _slug(text: str, limit: int = 80) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.")[:limit] or "instance"


def _source(name: str) -> str:
    return resources.files("debatecode.bench.swebench").joinpath(name).read_text(encoding="utf-8")


def _host_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


class ImageBuilder:
    """Builds (or finds) the base, env and instance images of each instance.

    Args:
        base_image: the FROM image of the base layer; the sandbox image by default.
        client: a ``docker.DockerClient``; made from the environment when omitted.
        sandbox_factory: runs the interpreter probe in the base image.
        progress: receives one line per step (built, reused, downloading...).
    """

    def __init__(
        self,
        *,
        base_image: str | None = None,
        client: Any = None,
        sandbox_factory: SandboxFactory = docker_sandbox,
        progress: Progress | None = None,
    ) -> None:
        from debatecode.sandbox.settings import SandboxSettings

        self.base_image = base_image or SandboxSettings().image
        self._client = client
        self._owns_client = client is None
        self._factory = sandbox_factory
        self._progress = progress
        self._targets: dict[str, PythonTarget] = {}
        self._base: LayerImage | None = None
        self._lock = threading.Lock()
        self._tag_locks: dict[str, threading.Lock] = {}
        self._client_lock = threading.Lock()
        self._probe_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def _lock_for(self, tag: str) -> threading.Lock:
        """The lock under which ``tag`` is looked up and built (one per tag)."""
        with self._lock:
            return self._tag_locks.setdefault(tag, threading.Lock())

    def _say(self, message: str) -> None:
        if self._progress is not None:
            self._progress(message)

    def _docker(self) -> Any:
        import docker

        from debatecode.sandbox._engine import DOCKER_ERRORS, engine_unavailable

        with self._client_lock:
            if self._client is None:
                try:
                    self._client = docker.from_env(timeout=900)
                except DOCKER_ERRORS as exc:
                    raise engine_unavailable(exc) from exc
            return self._client

    def _image_id(self, tag: str) -> str | None:
        import docker.errors

        from debatecode.sandbox._engine import DOCKER_ERRORS, engine_unavailable

        try:
            return str(self._docker().images.get(tag).id)
        except docker.errors.ImageNotFound:
            return None
        except DOCKER_ERRORS as exc:
            raise engine_unavailable(exc) from exc

    def _build(self, layer: str, context: Path, tag: str, base: str, labels: dict[str, str]) -> None:
        from debatecode.sandbox._engine import DOCKER_ERRORS

        log: list[str] = []
        try:
            stream = self._docker().api.build(
                path=str(context),
                tag=tag,
                buildargs={"BASE": base},
                rm=True,
                forcerm=True,
                pull=False,
                network_mode="none",
                labels={"debatecode.image": f"swebench-{layer}", **labels},
                decode=True,
            )
            for event in stream:
                if "error" in event:
                    detail = event.get("errorDetail", {}).get("message") or event["error"]
                    raise ImageBuildError(layer, f"{detail}\n" + "".join(log[-30:]))
                text = event.get("stream")
                if text:
                    log.append(text)
        except DOCKER_ERRORS as exc:
            raise ImageBuildError(layer, f"{exc}\n" + "".join(log[-30:])) from exc

    def _layer(self, layer: str, tag: str, make: Callable[[Path], str], labels: dict[str, str]) -> LayerImage:
        """Reuse ``tag`` or build it from the context ``make`` fills (``make`` returns the FROM image)."""
        if self._image_id(tag) is not None:
            return LayerImage(tag=tag)
        started = time.perf_counter()
        with node_lock(tag):
            if self._image_id(tag) is not None:  # another process built it while this one waited
                return LayerImage(tag=tag)
            with tempfile.TemporaryDirectory(prefix=f"debatecode-swebench-{layer}-") as tmp:
                context = Path(tmp)
                base = make(context)
                self._say(f"building {layer} image {tag}")
                self._build(layer, context, tag, base, labels)
        elapsed = time.perf_counter() - started
        self._say(f"built {layer} image {tag} in {elapsed:.1f}s")
        return LayerImage(tag=tag, built=True, build_s=round(elapsed, 2))

    def base_layer(self) -> LayerImage:
        """The base layer (built once per builder at most).

        Raises:
            SandboxUnavailable: the engine does not answer, or the FROM image is missing.
            ImageBuildError: the build failed.
        """
        with self._lock:
            if self._base is not None:
                return self._base
            from_id = self._image_id(self.base_image)
            if from_id is None:
                raise SandboxUnavailable(
                    f"the image {self.base_image!r} the SWE-bench images build on is not present. Build it offline "
                    "with `debatecode sandbox build`, or pass --base-image with an image that has python3.",
                    backend="docker",
                )
            plugin = _source("_grader_plugin.py")
            tag = f"{BASE_REPO}:{_hash(BASE_DOCKERFILE, plugin, from_id)}"

            def make(context: Path) -> str:
                (context / "Dockerfile").write_text(BASE_DOCKERFILE)
                (context / "debatecode_swebench_grader.py").write_text(plugin)
                return self.base_image

            self._base = self._layer("base", tag, make, {})
            return self._base

    async def python_target(self, base_tag: str) -> PythonTarget:
        """The interpreter of ``base_tag``, probed once in a sandbox container.

        Raises:
            SandboxUnavailable, SandboxError: the probe could not run.
            ImageBuildError: the probe printed no interpreter description.
        """
        loop = asyncio.get_running_loop()
        if self._probe_lock is None or self._probe_lock[0] is not loop:
            # A builder can outlive one event loop (a test session grades several runs with one builder).
            self._probe_lock = (loop, asyncio.Lock())
        async with self._probe_lock[1]:
            if base_tag not in self._targets:
                self._targets[base_tag] = await self._probe(base_tag)
            return self._targets[base_tag]

    async def _probe(self, base_tag: str) -> PythonTarget:
        sandbox = self._factory(base_tag, 0)
        try:
            result = await sandbox.run(ExecJob(argv=["python3", "-I", "-c", _PROBE], limits=Limits(timeout_s=60)))
        finally:
            await sandbox.aclose()
        try:
            target = PythonTarget.model_validate_json(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError) as exc:
            raise ImageBuildError(
                "env", f"cannot tell the base image's Python: {result.stdout} {result.stderr}"
            ) from exc
        return target

    def _requirements(self, mirror: RepoMirror, instance: SWEBenchInstance, spec: RepoSpec) -> dict[str, str]:
        """Requirement files by relative path, ``all.txt`` included (unsupported lines commented out)."""
        commit = instance.environment_setup_commit
        files: dict[str, str] = {}
        for relpath in sorted(mirror.files(commit, spec.requirements_files)):
            text = mirror.read(commit, relpath).decode("utf-8", "replace")
            files[relpath] = "".join(
                f"# (not installable offline) {line}\n" if _UNSUPPORTED_LINE.match(line) else f"{line}\n"
                for line in text.splitlines()
            )
        lines = [f"-r {relpath}" for relpath in files]
        lines += spec.requirements
        named = " ".join([*spec.requirements, *files.values()]).lower()
        if not re.search(r"(^|[\s\"'])pytest\s*($|[=<>!~\[;])", named, flags=re.M):
            version = _host_version("pytest")
            lines.append(f"pytest=={version}" if version else "pytest")
        files["all.txt"] = "\n".join(lines) + "\n"
        return files

    def _download(self, requirements_dir: Path, wheels: Path, target: PythonTarget) -> None:
        pip_version = _host_version("pip")
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--quiet",
            "--dest",
            str(wheels),
            *target.pip_args(),
            "-r",
            "all.txt",
            f"pip=={pip_version}" if pip_version else "pip",
        ]
        self._say("downloading wheels on the host: " + (requirements_dir / "all.txt").read_text().replace("\n", " "))
        completed = subprocess.run(
            command, cwd=requirements_dir, capture_output=True, text=True, errors="replace", check=False
        )
        if completed.returncode != 0:
            raise ImageBuildError(
                "env",
                "`pip download` failed (is PyPI or a mirror reachable? does every requirement have a wheel for "
                f"Python {target.version} on {target.machine}?):\n{completed.stderr[-2000:]}",
            )

    async def ensure(self, mirror: RepoMirror, instance: SWEBenchInstance, spec: RepoSpec) -> ImageSet:
        """The three layers for ``instance``, building the missing ones.

        Raises:
            SandboxUnavailable: the engine does not answer, or the FROM image is missing.
            ImageBuildError: a download or a build failed.
            VersionControlError: the repository could not be read.
        """
        base = await asyncio.to_thread(self.base_layer)
        target = await self.python_target(base.tag)
        env = await asyncio.to_thread(self._env_layer, mirror, instance, spec, base.tag, target)
        image = await asyncio.to_thread(self._instance_layer, mirror, instance, env.tag)
        return ImageSet(base=base, env=env, instance=image)

    def _env_layer(
        self, mirror: RepoMirror, instance: SWEBenchInstance, spec: RepoSpec, base_tag: str, target: PythonTarget
    ) -> LayerImage:
        requirements = self._requirements(mirror, instance, spec)
        base_id = self._image_id(base_tag) or base_tag
        text = json.dumps(requirements, sort_keys=True)
        tag = f"{ENV_REPO}:{_hash(ENV_DOCKERFILE, base_id, target.model_dump_json(), text)}"

        def make(context: Path) -> str:
            (context / "Dockerfile").write_text(ENV_DOCKERFILE)
            for relpath, content in requirements.items():
                path = context / "requirements" / relpath
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content)
            (context / "wheels").mkdir()
            self._download(context / "requirements", context / "wheels", target)
            return base_tag

        with self._lock_for(tag):
            return self._layer("env", tag, make, {"debatecode.swebench.repo": instance.repo})

    def _instance_layer(self, mirror: RepoMirror, instance: SWEBenchInstance, env_tag: str) -> LayerImage:
        env_id = self._image_id(env_tag) or env_tag
        tree = mirror.tree_hash(instance.base_commit)
        tag = f"{INSTANCE_REPO}:{_slug(instance.instance_id)}-{_hash(INSTANCE_DOCKERFILE, env_id, tree)}"

        def make(context: Path) -> str:
            (context / "Dockerfile").write_text(INSTANCE_DOCKERFILE)
            checkout = mirror.worktree(instance.base_commit, context / "checkout")
            try:
                shutil.copytree(checkout, context / "repo", symlinks=True, ignore=shutil.ignore_patterns(".git"))
            finally:
                mirror.remove_worktree(checkout)
                shutil.rmtree(checkout, ignore_errors=True)
            return env_tag

        labels = {"debatecode.swebench.repo": instance.repo, "debatecode.swebench.instance": instance.instance_id}
        with self._lock_for(tag):
            return self._layer("instance", tag, make, labels)

    def close(self) -> None:
        """Close a Docker client this builder made."""
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            client.close()
