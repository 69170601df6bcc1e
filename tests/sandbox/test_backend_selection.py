"""Backend selection: no unsandboxed execution unless asked for by name.

``auto`` is Docker, else bubblewrap (saying so), else a refusal that names every
fix; ``local`` is bubblewrap only; ``unsafe-host`` (plain rlimits) runs only when
named and warns what the code can reach. Docker is made unreachable with a
``DOCKER_HOST`` that points nowhere; bubblewrap with a ``PATH`` that has no ``bwrap``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import docker.errors
import pytest
from tests.cli.helpers import run_cli
from typer.testing import CliRunner

from debatecode.config import SandboxSettings, load_config
from debatecode.errors import ConfigError, SandboxUnavailable
from debatecode.sandbox import ExecJob, create_sandbox, describe_backends
from debatecode.sandbox._engine import image_missing
from debatecode.sandbox._isolation import probe_isolation
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.local import LocalSandbox

REPO = Path(__file__).resolve().parents[2]
NO_DOCKER = "unix:///nonexistent/debatecode-test-docker.sock"
FIXES = ("dockerd", "systemctl start docker", "debatecode sandbox build", "apt-get install bubblewrap")
REGISTRY = "debatecode.sandbox.registry"


@pytest.fixture
def docker_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_DOCKER)


@pytest.fixture
def docker_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DockerSandbox, "check", lambda self: None)
    monkeypatch.setattr("debatecode.sandbox.images.image_status", lambda settings: "present (test)")


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``bwrap`` is not on PATH (the isolation probe is cached per interpreter: re-probe around the test)."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    probe_isolation.cache_clear()
    yield
    monkeypatch.undo()
    probe_isolation.cache_clear()


@pytest.fixture
def bwrap_usable() -> None:
    probe = probe_isolation(sys.executable)
    if probe.bwrap is None:
        pytest.skip(f"bubblewrap is not usable here: {probe.bwrap_problem}")


def _registry_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == REGISTRY and r.levelno >= logging.WARNING]


def test_auto_picks_docker_when_it_is_usable(docker_up: None, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=REGISTRY):
        sandbox = create_sandbox(SandboxSettings(backend="auto"))
    assert isinstance(sandbox, DockerSandbox)
    assert _registry_warnings(caplog) == []


async def test_auto_without_docker_runs_under_bubblewrap_and_says_so_in_one_line(
    docker_down: None, bwrap_usable: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=REGISTRY):
        sandbox = create_sandbox(SandboxSettings(backend="auto"))
    assert isinstance(sandbox, LocalSandbox) and sandbox.isolation == "bubblewrap"
    (warning,) = _registry_warnings(caplog)
    assert "\n" not in warning
    assert "bubblewrap" in warning and "no network" in warning and NO_DOCKER in warning
    result = await sandbox.run(ExecJob(argv=["python3", "-c", "print('hi')"]))
    assert (result.status, result.stdout) == ("ok", "hi\n")


def test_auto_refuses_without_docker_or_bubblewrap_and_names_every_fix(
    docker_down: None, no_bwrap: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    monkeypatch.setattr(LocalSandbox, "run", lambda self, job: started.append(job))
    with pytest.raises(SandboxUnavailable) as info:
        create_sandbox(SandboxSettings(backend="auto"))
    message = str(info.value)
    assert info.value.exit_code == 3 and info.value.backend == "auto"
    for fix in (*FIXES, "--sandbox unsafe-host"):
        assert fix in message, fix
    assert NO_DOCKER in message and "bwrap is not on PATH" in message
    assert "--sandbox local" not in message, "local is unusable too: it must not be offered as a fix"
    assert started == []


def test_auto_refusal_says_when_only_the_image_is_missing(no_bwrap: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def image_not_built(self: DockerSandbox) -> None:
        raise image_missing(self.settings.image) from docker.errors.ImageNotFound("no such image")

    monkeypatch.setattr(DockerSandbox, "check", image_not_built)
    with pytest.raises(SandboxUnavailable) as info:
        create_sandbox(SandboxSettings(backend="auto", image="debatecode/not-built:1"))
    message = str(info.value)
    assert "'debatecode/not-built:1' is not built" in message and "debatecode sandbox build" in message


def test_local_means_bubblewrap(bwrap_usable: None) -> None:
    sandbox = create_sandbox(SandboxSettings(), backend="local")
    assert isinstance(sandbox, LocalSandbox) and sandbox.isolation == "bubblewrap"


def test_local_refuses_without_bubblewrap_and_names_the_fix(no_bwrap: None, docker_up: None) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        create_sandbox(SandboxSettings(backend="local"))
    message = str(info.value)
    assert "apt-get install bubblewrap" in message and "--sandbox unsafe-host" in message
    assert info.value.backend == "local"


@pytest.mark.parametrize("how", ["argument", "settings", "environment"])
def test_unsafe_host_is_rlimits_mode_and_warns_what_the_code_can_reach(
    how: str, monkeypatch: pytest.MonkeyPatch, isolated_cwd: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Whether rlimits mode may run here (not as root without a uid to drop to) is LocalSandbox's own check.
    monkeypatch.setattr(LocalSandbox, "check", lambda self: None)
    with caplog.at_level(logging.INFO, logger=REGISTRY):
        if how == "argument":
            sandbox = create_sandbox(SandboxSettings(), backend="unsafe-host")
        elif how == "settings":
            sandbox = create_sandbox(SandboxSettings(backend="unsafe-host"))
        else:
            monkeypatch.setenv("DEBATECODE_SANDBOX__BACKEND", "unsafe-host")
            sandbox = create_sandbox(load_config().sandbox)
    assert isinstance(sandbox, LocalSandbox) and sandbox.isolation == "rlimits"
    assert sandbox.name == "unsafe-host"
    (warning,) = _registry_warnings(caplog)
    for reach in ("without isolation", "network", "localhost", "file", "processes", "environment", "/tmp"):
        assert reach in warning, reach


def test_unsafe_host_is_refused_when_its_own_check_fails(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(self: LocalSandbox) -> None:
        raise SandboxUnavailable("rlimits mode will not run jobs as root here", backend="local")

    monkeypatch.setattr(LocalSandbox, "check", refuse)
    with caplog.at_level(logging.INFO, logger=REGISTRY), pytest.raises(SandboxUnavailable, match="as root"):
        create_sandbox(SandboxSettings(), backend="unsafe-host")
    assert _registry_warnings(caplog) == []


def test_unknown_name_is_a_config_error_listing_every_backend(isolated_cwd: Path) -> None:
    with pytest.raises(ConfigError) as info:
        create_sandbox(SandboxSettings(), backend="podman")
    for name in ("podman", "auto", "docker", "local", "unsafe-host"):
        assert name in str(info.value)
    (isolated_cwd / "debatecode.toml").write_text('[sandbox]\nbackend = "host"\n')
    with pytest.raises(ConfigError, match="unsafe-host"):
        load_config()


def test_describe_backends_shows_all_three_and_never_picks_unsafe_host(docker_down: None, no_bwrap: None) -> None:
    statuses = {status.name: status for status in describe_backends(SandboxSettings())}
    assert list(statuses) == ["docker", "local", "unsafe-host"]
    assert not statuses["docker"].usable and not statuses["local"].usable
    assert "apt-get install bubblewrap" in statuses["local"].reason
    assert "never picked by auto" in statuses["unsafe-host"].reason
    assert not any(status.chosen for status in statuses.values())


def _doctor() -> str:
    from debatecode.cli.sandbox import app

    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_doctor_shows_auto_refusing_and_why(docker_down: None, no_bwrap: None, isolated_cwd: Path) -> None:
    output = _doctor()
    for name in ("docker", "local", "unsafe-host"):
        assert name in output
    assert "auto would refuse" in output
    for fix in (*FIXES, "--sandbox unsafe-host"):
        assert fix in output, fix


def test_doctor_shows_auto_picking_bubblewrap(docker_down: None, bwrap_usable: None, isolated_cwd: Path) -> None:
    output = _doctor()
    assert "unsafe-host" in output and "never" in output
    assert "auto picks local (bubblewrap) because Docker is not usable" in output


def test_doctor_shows_auto_picking_docker(docker_up: None, isolated_cwd: Path) -> None:
    assert "auto picks docker" in _doctor()


def test_solve_without_docker_or_bubblewrap_exits_3_and_runs_nothing(tmp_path: Path) -> None:
    """The acceptance check, through the real console script: one message with the fixes, no job started."""
    canary = tmp_path / "canary"
    replies = tmp_path / "replies.yaml"
    code = f"import pathlib\npathlib.Path({str(canary)!r}).write_text('ran')\n\n\ndef add(a, b):\n    return a + b\n"
    replies.write_text("default: |\n  ```python\n" + "".join(f"  {line}\n" for line in code.splitlines()) + "  ```\n")
    only_python = tmp_path / "bin"
    only_python.mkdir()
    (only_python / "python3").symlink_to(sys.executable)
    jobs_tmp = tmp_path / "tmp"
    jobs_tmp.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    proc = run_cli(
        "solve",
        str(REPO / "examples" / "tasks" / "add.md"),
        "--model",
        f"scripted:{replies}",
        "--no-checkpoints",
        cwd=work,
        env={"DOCKER_HOST": NO_DOCKER, "PATH": str(only_python), "TMPDIR": str(jobs_tmp)},
        timeout=300,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (message,) = [line for line in proc.stderr.splitlines() if "no sandbox is usable here" in line]
    assert message.startswith("error:"), proc.stderr
    for fix in (*FIXES, "--sandbox unsafe-host"):
        assert fix in message, fix
    assert "Traceback" not in proc.stderr
    # Nothing ran: the task's code never wrote its canary, no local job dir was made, no session was stored.
    assert not canary.exists()
    assert [p.name for p in jobs_tmp.iterdir() if p.name.startswith("debatecode-job-")] == []
    db = work / ".debatecode" / "debatecode.db"
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert list(conn.execute("select id from debate_sessions")) == []
    assert os.listdir(work) in ([], [".debatecode"])
