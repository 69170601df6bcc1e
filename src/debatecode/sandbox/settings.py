"""Settings of the sandbox layer (the ``[sandbox]`` section of ``debatecode.toml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_TIMEOUT_S", "SandboxSettings"]

MAX_TIMEOUT_S = 86_400.0
"""Longest time limit a job or a test may have: one day. Larger values (``1e300``) overflow the timers that enforce them."""


class SandboxSettings(BaseModel):
    """Where and under which limits generated code runs."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    backend: Literal["auto", "docker", "local", "unsafe-host"] = "auto"
    """``auto``: ``docker`` when the engine answers and the image is built, else ``local`` (bubblewrap, weaker; it warns), else refuse. ``local``: bubblewrap only. ``unsafe-host``: no isolation but rlimits; the code can reach the host's network, files and processes; only when named."""
    image: str = "debatecode/sandbox-python:latest"
    """Docker image built by ``debatecode sandbox build``."""
    timeout_s: float = Field(default=10.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Default per-test time limit in seconds, at most 86400 (one day); a task's ``time_limit`` overrides it."""
    memory_mb: int = Field(default=512, ge=32)
    """Default memory limit in MiB; a task's ``memory_limit`` overrides it."""
    pids: int = Field(default=128, ge=8)
    """Process and thread limit per job."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU quota per job, in cores."""
    output_bytes: int = Field(default=200_000, ge=1024)
    """Cap on captured stdout and stderr, each, per job."""
    disk_mb: int = Field(default=64, ge=1)
    """Size of the job's writable work directory, in MiB."""
    max_host_share: float = Field(default=0.5, gt=0, le=1)
    """Largest share of this machine's memory and CPUs one Docker container may get; larger requests are clamped to it, with a WARNING."""
    pool_size: int = Field(default=2, ge=0)
    """Warm Docker containers kept running for jobs; each runs one job at a time and is fully reset in between. 0: a fresh container per job."""
    concurrency: int | None = Field(default=None, ge=1)
    """Jobs a batch runs at once; by default the pool size (Docker, at least 1) or the number of CPUs (local)."""
    pool_idle_ttl_s: float = Field(default=300.0, gt=0)
    """A warm container idle this long exits and is removed; the next job starts a new one."""
    sweep_on_start: bool = True
    """On first use, remove containers left behind by debatecode processes that died."""
