"""The sandbox contract: what every backend promises and what it raises.

A sandbox runs one *job*: a set of files written into a fresh, empty work
directory, then one command run there under resource limits. The job's own
failures (non-zero exit, timeout, memory exhaustion) are *results*, never
exceptions. Exceptions mean the sandbox itself could not do its work.
"""

from __future__ import annotations

import abc
import asyncio
import os
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from debatecode._concurrency import gather_all
from debatecode.sandbox.settings import MAX_TIMEOUT_S

if TYPE_CHECKING:
    from debatecode.sandbox.settings import SandboxSettings

__all__ = ["ExecJob", "ExecResult", "ExecStatus", "Limits", "Sandbox"]

ExecStatus = Literal["ok", "error", "timeout", "oom"]
"""``ok``: exit code 0. ``error``: non-zero exit. ``timeout``: killed at the
wall-clock limit. ``oom``: killed for exceeding the memory limit."""


class Limits(BaseModel):
    """Resource limits for one job."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(default=30.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Wall-clock limit for the whole job, in seconds (at most one day). The job's whole process tree is killed at it."""
    memory_mb: int = Field(default=512, ge=32)
    """Memory limit in MiB (swap included)."""
    pids: int = Field(default=128, ge=8)
    """Maximum number of processes and threads."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU quota, in cores."""
    output_bytes: int = Field(default=1_000_000, ge=1024)
    """Cap on captured stdout and on captured stderr, each. Output past the cap is dropped and flagged."""
    disk_mb: int = Field(default=64, ge=1)
    """Size cap of the writable work directory, in MiB."""

    @classmethod
    def from_settings(cls, settings: SandboxSettings, **overrides: float) -> Limits:
        """The limits that ``settings`` (a ``[sandbox]`` section) describe, with ``overrides`` on top.

        Every limit has a setting of the same name; ``overrides`` name limits too
        (``Limits.from_settings(settings, timeout_s=60)``).

        Raises:
            ValidationError: an override is not a limit, or a value is out of range.
        """
        values: dict[str, float] = {name: getattr(settings, name) for name in cls.model_fields}
        return cls.model_validate({**values, **overrides})


class ExecJob(BaseModel):
    """One job: files to write into the work dir, then a command to run there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files: dict[str, str] = Field(default_factory=dict)
    """Relative path -> text content, written before the command starts."""
    argv: list[str]
    """The command. ``python3`` is the sandbox's interpreter with pytest importable."""
    limits: Limits = Field(default_factory=Limits)
    collect: list[str] = Field(default_factory=list)
    """Relative paths to read back from the work dir after the command ends (missing ones are skipped)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for the command."""


class ExecResult(BaseModel):
    """What happened to one job."""

    model_config = ConfigDict(extra="forbid")

    status: ExecStatus
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_s: float = 0.0
    files: dict[str, str] = Field(default_factory=dict)
    """The ``collect``-ed files that existed, capped like the output."""
    backend: str = ""

    @property
    def truncated(self) -> bool:
        return self.stdout_truncated or self.stderr_truncated


class Sandbox(abc.ABC):
    """An isolated place to run untrusted code.

    Implementations: ``DockerSandbox`` (default when an engine answers) and
    ``LocalSandbox`` (weaker isolation, loud about it). Tests use
    ``DummySandbox`` behind the same interface.
    """

    name: str = "abstract"

    @abc.abstractmethod
    async def run(self, job: ExecJob) -> ExecResult:
        """Run one job in a fresh work directory and return its result.

        Raises:
            SandboxUnavailable: the backend cannot run jobs on this machine
                (engine down, image missing).
            SandboxError: the backend failed while running the job (not the
                job's own failure, which is reported in the result).
        """

    @property
    def default_concurrency(self) -> int:
        """How many jobs ``run_batch`` runs at once when not told: the number of CPUs."""
        return os.cpu_count() or 1

    async def run_batch(self, jobs: Sequence[ExecJob], *, concurrency: int | None = None) -> list[ExecResult]:
        """Run many jobs, at most ``concurrency`` at once, and return their results in job order.

        The default runs ``run`` under a semaphore; backends that can do better override it.

        Raises:
            SandboxUnavailable, SandboxError: as for ``run``, for the first job that raised;
                the jobs still running are cancelled.
        """
        semaphore = asyncio.Semaphore(max(1, concurrency or self.default_concurrency))

        async def one(job: ExecJob) -> ExecResult:
            async with semaphore:
                return await self.run(job)

        return await gather_all(*(one(job) for job in jobs))

    def check(self) -> None:  # noqa: B027 - optional hook: most backends are always ready
        """Verify that the backend can run jobs now.

        Raises:
            SandboxUnavailable: with a message that says why and what to do.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook: nothing to release by default
        """Release containers, processes and clients this sandbox holds."""

    async def __aenter__(self) -> Self:
        """``async with create_sandbox(settings) as sandbox:`` closes it (``aclose``) on the way out."""
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
