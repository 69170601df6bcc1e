"""Backend selection, the public surface, the doctor command and the test-only DummySandbox."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
from tests.support.dummy_sandbox import DummySandbox
from typer.testing import CliRunner

import debatecode.sandbox
from debatecode.config import SandboxSettings
from debatecode.errors import ConfigError, SandboxUnavailable
from debatecode.sandbox import ExecJob, ExecResult, Limits, create_sandbox, default_limits, describe_backends
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.local import LocalSandbox


def test_public_names_are_pinned() -> None:
    assert debatecode.sandbox.__all__ == [
        "BackendStatus",
        "CheckJob",
        "CheckResult",
        "DockerSandbox",
        "ExecJob",
        "ExecResult",
        "Limits",
        "LocalSandbox",
        "Sandbox",
        "TestCaseResult",
        "TestOutcome",
        "create_sandbox",
        "default_limits",
        "describe_backends",
        "run_checks",
    ]
    for name in debatecode.sandbox.__all__:
        assert getattr(debatecode.sandbox, name) is not None


def test_importing_the_package_does_not_import_the_docker_sdk() -> None:
    code = "import sys, debatecode.sandbox as s; s.create_sandbox; print('docker' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "False"


def test_unknown_backend_is_a_config_error_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError) as info:
        create_sandbox(SandboxSettings(), backend="podman")
    assert "podman" in str(info.value)
    for name in ("auto", "docker", "local", "unsafe-host"):
        assert name in str(info.value)


def test_local_backend_by_name_is_bubblewrap() -> None:
    sandbox = create_sandbox(SandboxSettings(), backend="local")
    assert isinstance(sandbox, LocalSandbox) and sandbox.isolation == "bubblewrap"


def _docker_down(self: DockerSandbox) -> None:
    raise SandboxUnavailable("engine down for this test", backend="docker")


def test_auto_falls_back_to_bubblewrap_with_a_warning_naming_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(DockerSandbox, "check", _docker_down)
    with caplog.at_level(logging.WARNING, logger="debatecode.sandbox.registry"):
        sandbox = create_sandbox(SandboxSettings(backend="auto"))
    assert isinstance(sandbox, LocalSandbox) and sandbox.isolation == "bubblewrap"
    assert "engine down for this test" in caplog.text and "bubblewrap" in caplog.text


def test_docker_by_name_propagates_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DockerSandbox, "check", _docker_down)
    with pytest.raises(SandboxUnavailable, match="engine down"):
        create_sandbox(SandboxSettings(), backend="docker")


def test_describe_backends_marks_exactly_what_auto_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DockerSandbox, "check", _docker_down)
    statuses = {status.name: status for status in describe_backends(SandboxSettings())}
    assert set(statuses) == {"docker", "local", "unsafe-host"}
    assert not statuses["docker"].usable and "engine down" in statuses["docker"].reason
    assert statuses["local"].usable and statuses["local"].chosen and not statuses["docker"].chosen
    assert "weaker than Docker" in statuses["local"].reason and "bubblewrap" in statuses["local"].reason
    assert not statuses["unsafe-host"].chosen


def test_default_limits_follow_the_settings() -> None:
    limits = default_limits(SandboxSettings(timeout_s=3, memory_mb=64, pids=16, cpus=0.5, output_bytes=2048, disk_mb=8))
    assert (limits.timeout_s, limits.memory_mb, limits.pids, limits.cpus, limits.output_bytes, limits.disk_mb) == (
        3,
        64,
        16,
        0.5,
        2048,
        8,
    )


def test_doctor_prints_every_backend_and_the_auto_choice(monkeypatch: pytest.MonkeyPatch, isolated_cwd: object) -> None:
    from debatecode.cli.sandbox import app

    monkeypatch.setattr(DockerSandbox, "check", _docker_down)
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "docker" in result.output and "local" in result.output and "unsafe-host" in result.output
    assert "auto picks local" in result.output and "engine down" in result.output


def test_local_sandbox_warns_once_about_weaker_isolation(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio

    sandbox = LocalSandbox()
    with caplog.at_level(logging.WARNING, logger="debatecode.sandbox.local"):
        asyncio.run(sandbox.run(ExecJob(argv=["python3", "-c", "pass"])))
        asyncio.run(sandbox.run(ExecJob(argv=["python3", "-c", "pass"])))
    warnings = [r for r in caplog.records if "weaker than Docker" in r.getMessage()]
    assert len(warnings) == 1
    assert sandbox.isolation in warnings[0].getMessage()


async def test_dummy_sandbox_really_runs_and_records_jobs() -> None:
    sandbox = DummySandbox()
    code = "print(len(open('m.py').read()))"
    job = ExecJob(files={"m.py": code}, argv=["python3", "m.py"], collect=["m.py"])
    result = await sandbox.run(job)
    assert (result.status, result.stdout) == ("ok", f"{len(code)}\n")
    assert result.files["m.py"].startswith("print")
    assert sandbox.jobs == [job]


async def test_dummy_sandbox_times_out_and_scripts_results() -> None:
    slow = ExecJob(argv=["python3", "-c", "import time; time.sleep(30)"], limits=Limits(timeout_s=0.5))
    timed = await DummySandbox().run(slow)
    assert timed.status == "timeout"
    scripted = DummySandbox(handler=lambda job: ExecResult(status="error", exit_code=2, stderr=job.argv[0]))
    result = await scripted.run(ExecJob(argv=["anything"]))
    assert (result.status, result.exit_code, result.stderr) == ("error", 2, "anything")
    assert len(scripted.jobs) == 1
