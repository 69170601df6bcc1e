"""``async with`` a sandbox closes it; ``Limits.from_settings`` is the one way settings become limits."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from debatecode.sandbox import Limits, create_sandbox, default_limits
from debatecode.sandbox.base import ExecJob, ExecResult, Sandbox
from debatecode.sandbox.settings import SandboxSettings


class _Recording(Sandbox):
    name = "recording"

    def __init__(self) -> None:
        self.closes = 0

    async def run(self, job: ExecJob) -> ExecResult:
        return ExecResult(status="ok", exit_code=0, backend=self.name)

    async def aclose(self) -> None:
        self.closes += 1


def test_async_with_returns_the_sandbox_and_closes_it_once() -> None:
    sandbox = _Recording()

    async def main() -> ExecResult:
        async with sandbox as entered:
            assert entered is sandbox
            assert sandbox.closes == 0
            return await entered.run(ExecJob(argv=["true"]))

    assert asyncio.run(main()).status == "ok"
    assert sandbox.closes == 1


def test_async_with_closes_the_sandbox_when_the_block_raises() -> None:
    sandbox = _Recording()

    async def main() -> None:
        async with sandbox:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(main())
    assert sandbox.closes == 1


def test_a_created_backend_runs_jobs_inside_async_with() -> None:
    async def main() -> ExecResult:
        async with create_sandbox(SandboxSettings(pool_size=0), "local") as sandbox:
            return await sandbox.run(ExecJob(files={"a.py": "print(6 * 7)"}, argv=["python3", "a.py"]))

    result = asyncio.run(main())
    assert result.status == "ok" and result.stdout.strip() == "42"


def test_limits_from_settings_takes_every_limit_and_the_overrides() -> None:
    settings = SandboxSettings(timeout_s=3, memory_mb=64, pids=16, cpus=0.5, output_bytes=2048, disk_mb=8)
    assert Limits.from_settings(settings) == Limits(
        timeout_s=3, memory_mb=64, pids=16, cpus=0.5, output_bytes=2048, disk_mb=8
    )
    assert Limits.from_settings(settings) == default_limits(settings)
    assert Limits.from_settings(settings, timeout_s=60, disk_mb=128) == Limits(
        timeout_s=60, memory_mb=64, pids=16, cpus=0.5, output_bytes=2048, disk_mb=128
    )
    assert set(Limits.model_fields) <= set(SandboxSettings.model_fields), "every limit has a setting"
    with pytest.raises(ValidationError):
        Limits.from_settings(settings, memory_mb=1)
    with pytest.raises(ValidationError):
        Limits.from_settings(settings, shares=2)
