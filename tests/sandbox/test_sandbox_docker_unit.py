"""``DockerSandbox`` against a fake injected Docker client: error translation and lifecycle."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import docker.errors
import pytest
import requests.exceptions

from debatecode.config import SandboxSettings
from debatecode.errors import SandboxError, SandboxUnavailable
from debatecode.sandbox._hygiene import OwnerToken
from debatecode.sandbox.base import ExecJob, Limits
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.wire import MARKER


def result_line(**fields: Any) -> bytes:
    data = {"status": "ok", "exit_code": 0, "stdout": "", "stderr": "", "duration_s": 0.01, "files": {}, **fields}
    return ("\n" + MARKER + json.dumps(data) + "\n").encode()


class FakeContainer:
    def __init__(self, logs: Iterator[bytes] | list[bytes], *, oom: bool = False, exit_code: int = 0) -> None:
        self.id = "c0ffee" * 10
        self._logs = logs
        self.attrs: dict[str, Any] = {"State": {"OOMKilled": oom, "ExitCode": exit_code}}
        self.calls: list[str] = []
        self.wait_error: BaseException | None = None
        self.start_error: BaseException | None = None

    def start(self) -> None:
        self.calls.append("start")
        if self.start_error is not None:
            raise self.start_error

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        self.calls.append("wait")
        if isinstance(self.wait_error, requests.exceptions.ReadTimeout):
            time.sleep(timeout or 0)
        if self.wait_error is not None:
            raise self.wait_error
        return {"StatusCode": self.attrs["State"]["ExitCode"]}

    def reload(self) -> None:
        self.calls.append("reload")

    def logs(self, **kwargs: Any) -> Any:
        if kwargs.get("stream"):
            return iter(self._logs)
        return b"runner stderr tail"

    def kill(self) -> None:
        self.calls.append("kill")

    def remove(self, force: bool = False, v: bool = False) -> None:
        self.calls.append(f"remove(force={force})")
        self.removed_volumes = v


class FakeContainers:
    def __init__(self, container: FakeContainer | None = None, error: BaseException | None = None) -> None:
        self.container = container
        self.error = error
        self.created: list[dict[str, Any]] = []

    def create(self, **spec: Any) -> FakeContainer:
        self.created.append(spec)
        if self.error is not None:
            raise self.error
        assert self.container is not None
        return self.container


class FakeImages:
    def __init__(self, present: bool = True) -> None:
        self.present = present

    def get(self, name: str) -> object:
        if not self.present:
            raise docker.errors.ImageNotFound(f"No such image: {name}")
        return object()


class FakeClient:
    def __init__(
        self,
        *,
        containers: FakeContainers | None = None,
        image_present: bool = True,
        ping_error: BaseException | None = None,
    ) -> None:
        self.containers = containers or FakeContainers()
        self.images = FakeImages(image_present)
        self.ping_error = ping_error

    def ping(self) -> bool:
        if self.ping_error is not None:
            raise self.ping_error
        return True

    def close(self) -> None:
        self.closed = True


def make(client: FakeClient, host_grace_s: float = 15.0) -> DockerSandbox:
    """A sandbox that runs every job in a fresh container (no pool) and skips the start-up sweep."""
    settings = SandboxSettings(image="debatecode/test:1", pool_size=0, sweep_on_start=False)
    return DockerSandbox(settings, client=client, host_grace_s=host_grace_s)  # type: ignore[arg-type]


def test_check_engine_down_names_docker_host_and_the_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nowhere/docker.sock")
    sandbox = make(FakeClient(ping_error=requests.exceptions.ConnectionError("refused")))
    with pytest.raises(SandboxUnavailable) as info:
        sandbox.check()
    message = str(info.value)
    assert "unix:///nowhere/docker.sock" in message and "DOCKER_HOST" in message
    assert "dockerd" in message and "--sandbox local" in message
    assert isinstance(info.value.__cause__, requests.exceptions.ConnectionError)
    assert info.value.backend == "docker"


def test_check_missing_image_says_to_build_it() -> None:
    with pytest.raises(SandboxUnavailable, match="debatecode sandbox build") as info:
        make(FakeClient(image_present=False)).check()
    assert "debatecode/test:1" in str(info.value)
    assert isinstance(info.value.__cause__, docker.errors.ImageNotFound)


def test_check_passes_when_engine_and_image_are_there() -> None:
    make(FakeClient()).check()


async def test_run_parses_the_result_and_always_removes_the_container() -> None:
    container = FakeContainer([b"noise\n", result_line(stdout="hello\n")])
    client = FakeClient(containers=FakeContainers(container))
    result = await make(client).run(ExecJob(argv=["python3", "-c", "print('hello')"]))
    assert result.status == "ok" and result.stdout == "hello\n" and result.backend == "docker"
    assert container.calls == ["start", "wait", "reload", "remove(force=True)"]
    assert container.removed_volumes, "anonymous volumes go with the container"


async def test_container_spec_is_locked_down() -> None:
    containers = FakeContainers(FakeContainer([result_line()]))
    limits = Limits(memory_mb=256, pids=64, cpus=0.5, disk_mb=32, timeout_s=3)
    await make(FakeClient(containers=containers)).run(ExecJob(argv=["true"], limits=limits))
    (spec,) = containers.created
    assert spec["image"] == "debatecode/test:1"
    assert spec["command"][:2] == ["python3", "-c"]
    assert spec["network_mode"] == "none"
    assert spec["user"] == "10001:10001"
    assert spec["read_only"] is True
    assert spec["cap_drop"] == ["ALL"] and spec["security_opt"][0] == "no-new-privileges"
    assert spec["security_opt"][1].startswith("seccomp=")
    assert spec["mem_limit"] == spec["memswap_limit"] == "256m"
    assert spec["pids_limit"] == 64 and spec["nano_cpus"] == 500_000_000
    assert spec["tmpfs"]["/work"].startswith("size=32m") and "exec" in spec["tmpfs"]["/work"].split(",")
    assert spec["working_dir"] == "/work"
    assert spec["labels"]["debatecode"] == "1" and len(spec["labels"]["debatecode.job"]) == 32
    assert spec["labels"]["debatecode.kind"] == "job"
    assert spec["labels"]["debatecode.owner"] == OwnerToken.current().label()
    assert int(spec["labels"]["debatecode.expires"]) > time.time() + 3
    assert spec["name"].startswith("debatecode-job-")
    assert spec["ipc_mode"] == "private" and spec["shm_size"] == "16m"
    assert spec["tmpfs"]["/tmp"].startswith("size=16m")
    assert set(spec["environment"]) == {"DC_PAYLOAD_0"}
    assert {u["Name"] for u in spec["ulimits"]} == {"nofile", "fsize", "core"}


async def test_missing_image_at_create_is_unavailable() -> None:
    client = FakeClient(containers=FakeContainers(error=docker.errors.ImageNotFound("gone")))
    with pytest.raises(SandboxUnavailable, match="sandbox build"):
        await make(client).run(ExecJob(argv=["true"]))


async def test_api_error_at_create_becomes_sandbox_error_from_it() -> None:
    error = docker.errors.APIError("500 boom")
    client = FakeClient(containers=FakeContainers(error=error))
    with pytest.raises(SandboxError) as info:
        await make(client).run(ExecJob(argv=["true"]))
    assert not isinstance(info.value, SandboxUnavailable)
    assert info.value.__cause__ is error


async def test_start_failure_carries_the_container_id_and_removes_it() -> None:
    container = FakeContainer([])
    container.start_error = docker.errors.APIError("cannot start")
    with pytest.raises(SandboxError) as info:
        await make(FakeClient(containers=FakeContainers(container))).run(ExecJob(argv=["true"]))
    assert info.value.container_id == container.id
    assert container.calls[-1] == "remove(force=True)"


async def test_host_side_timeout_kills_and_reports_timeout() -> None:
    container = FakeContainer([])
    container.wait_error = requests.exceptions.ReadTimeout("read timed out")
    sandbox = make(FakeClient(containers=FakeContainers(container)), host_grace_s=0.0)
    result = await sandbox.run(ExecJob(argv=["sleep", "99"], limits=Limits(timeout_s=0.2)))
    assert result.status == "timeout" and result.exit_code is None
    assert container.calls == ["start", "wait", "kill", "remove(force=True)"]


async def test_connection_lost_long_before_the_limit_is_an_engine_error_not_a_timeout() -> None:
    container = FakeContainer([])
    container.wait_error = requests.exceptions.ConnectionError("connection reset")
    with pytest.raises(SandboxError, match="lost the Docker engine") as info:
        await make(FakeClient(containers=FakeContainers(container))).run(ExecJob(argv=["true"]))
    assert info.value.container_id == container.id
    assert container.calls[-1] == "remove(force=True)"


async def test_oom_killed_runner_without_result_reports_oom() -> None:
    container = FakeContainer([b""], oom=True, exit_code=137)
    result = await make(FakeClient(containers=FakeContainers(container))).run(ExecJob(argv=["true"]))
    assert result.status == "oom"
    assert "memory" in result.stderr


async def test_oom_flag_turns_a_failed_result_into_oom() -> None:
    container = FakeContainer([result_line(status="error", exit_code=1)], oom=True)
    result = await make(FakeClient(containers=FakeContainers(container))).run(ExecJob(argv=["true"]))
    assert result.status == "oom"


async def test_no_result_line_is_a_sandbox_error_with_container_id() -> None:
    container = FakeContainer([b"Traceback: something broke\n"], exit_code=1)
    with pytest.raises(SandboxError, match="returned no result") as info:
        await make(FakeClient(containers=FakeContainers(container))).run(ExecJob(argv=["true"]))
    assert info.value.container_id == container.id
    assert "runner stderr tail" in str(info.value)
    assert container.calls[-1] == "remove(force=True)"


async def test_log_reading_stops_at_the_cap() -> None:
    def endless() -> Iterator[bytes]:
        while True:
            yield b"x" * 65536

    container = FakeContainer(endless())
    job = ExecJob(argv=["true"], limits=Limits(output_bytes=1024))
    with pytest.raises(SandboxError, match="exceeded"):
        await make(FakeClient(containers=FakeContainers(container))).run(job)
    assert container.calls[-1] == "remove(force=True)"


async def test_engine_vanishing_mid_job_is_a_sandbox_error() -> None:
    container = FakeContainer([])
    container.wait_error = docker.errors.APIError("engine went away")
    with pytest.raises(SandboxError, match="waiting") as info:
        await make(FakeClient(containers=FakeContainers(container))).run(ExecJob(argv=["true"]))
    assert info.value.container_id == container.id


async def test_oversized_payload_is_a_sandbox_error_before_any_container() -> None:
    containers = FakeContainers(FakeContainer([]))
    job = ExecJob(files={"big.txt": "x" * 2_000_000}, argv=["true"])
    with pytest.raises(SandboxError, match="limit"):
        await make(FakeClient(containers=containers)).run(job)
    assert containers.created == []


async def test_start_up_sweep_runs_once_per_engine_and_not_when_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from debatecode.sandbox import docker as docker_module
    from debatecode.sandbox._hygiene import SweepReport

    monkeypatch.setattr(docker_module, "_SWEPT", set())
    monkeypatch.setenv("DOCKER_HOST", "unix:///engine-a.sock")
    calls: list[str] = []

    def fake_sweep(self: DockerSandbox, *, everything: bool = False, dry_run: bool = False) -> SweepReport:
        calls.append(docker_module.engine_address())
        return SweepReport()

    monkeypatch.setattr(DockerSandbox, "sweep", fake_sweep)
    off = DockerSandbox(SandboxSettings(sweep_on_start=False), client=FakeClient())  # type: ignore[arg-type]
    await off._sweep_once()
    assert calls == [], "sweep_on_start=false never sweeps"
    on = DockerSandbox(SandboxSettings(), client=FakeClient())  # type: ignore[arg-type]
    await on._sweep_once()
    await DockerSandbox(SandboxSettings(), client=FakeClient())._sweep_once()  # type: ignore[arg-type]
    assert calls == ["unix:///engine-a.sock"], "one sweep per engine and process"
    monkeypatch.setenv("DOCKER_HOST", "unix:///engine-b.sock")
    await on._sweep_once()
    assert calls == ["unix:///engine-a.sock", "unix:///engine-b.sock"]


def test_sweep_on_start_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from debatecode.config import load_config

    monkeypatch.setenv("DEBATECODE_SANDBOX__SWEEP_ON_START", "true")
    assert load_config(use_file=False).sandbox.sweep_on_start is True
    monkeypatch.setenv("DEBATECODE_SANDBOX__SWEEP_ON_START", "false")
    assert load_config(use_file=False).sandbox.sweep_on_start is False
