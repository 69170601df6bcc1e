"""The warm pool without Docker: frame parsing, pool accounting, and DockerSandbox's pool glue.

``FakeEngine`` stands in for both the Docker client and the attach connection;
each fake container answers like the pool server, or misbehaves on request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from debatecode.config import SandboxSettings
from debatecode.sandbox._attach import AttachedStream, AttachError, StreamClosed
from debatecode.sandbox._docker_spec import ContainerShape
from debatecode.sandbox._pool import WarmContainer, WarmPool
from debatecode.sandbox.base import ExecJob, ExecResult, Limits
from debatecode.sandbox.docker import DockerSandbox
from debatecode.sandbox.wire import ACK_MARKER, MARKER, READY_MARKER


def frame(kind: int, payload: bytes) -> bytes:
    return bytes([kind, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload


class FakeWriter:
    def __init__(self, on_write: Callable[[bytes], None] | None = None) -> None:
        self.written = bytearray()
        self.closed = False
        self.on_write = on_write

    def write(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("closed")
        self.written += data
        if self.on_write is not None:
            self.on_write(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        self.closed = True


def stream_with(*frames: bytes, eof: bool = True) -> AttachedStream:
    reader = asyncio.StreamReader()
    for data in frames:
        reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return AttachedStream(reader, FakeWriter())  # type: ignore[arg-type]


async def test_stream_demultiplexes_stdout_lines_and_keeps_a_stderr_tail() -> None:
    stream = stream_with(frame(1, b"first li"), frame(2, b"oops\n"), frame(1, b"ne\nsecond\n"))
    assert await stream.read_line(100) == b"first line"
    assert await stream.read_line(100) == b"second"
    assert stream.stderr_tail() == "oops\n"
    with pytest.raises(StreamClosed):
        await stream.read_line(100)
    assert stream.closed


async def test_stream_refuses_a_line_over_its_cap_and_malformed_frames() -> None:
    with pytest.raises(AttachError, match="exceeded 10 bytes"):
        await stream_with(frame(1, b"x" * 50)).read_line(10)
    with pytest.raises(AttachError, match="stream type 7"):
        await stream_with(frame(7, b"?")).read_line(10)


async def test_send_after_close_is_stream_closed() -> None:
    stream = stream_with(eof=False)
    await stream.send(b"hello\n")
    stream.close()
    with pytest.raises(StreamClosed):
        await stream.send(b"again\n")


class FakeContainerHandle:
    def __init__(self, container_id: str) -> None:
        self.id = container_id


class FakeEngine:
    """Docker client + attacher. ``behaviour(payload, container_id)`` decides how each job goes."""

    def __init__(self, behaviour: Callable[[dict[str, Any], str], str] | None = None) -> None:
        self.behaviour = behaviour or (lambda payload, cid: "ok")
        self.created: list[dict[str, Any]] = []
        self.started: list[str] = []
        self.removed: list[str] = []
        self.readers: dict[str, asyncio.StreamReader] = {}
        self.running = 0
        self.max_running = 0
        self.containers = self
        self.api = self
        self.api_version = "1.41"

    # client.containers.create / client.api.start / client.api.remove_container
    def create(self, **spec: Any) -> FakeContainerHandle:
        self.created.append(spec)
        return FakeContainerHandle(f"c{len(self.created):03d}" + "0" * 60)

    def start(self, container_id: str) -> None:
        self.started.append(container_id)
        self.readers[container_id].feed_data(frame(1, (READY_MARKER + '{"pid": 1}\n').encode()))

    def remove_container(self, container_id: str, force: bool = False, v: bool = False) -> None:
        self.removed.append(container_id)

    def close(self) -> None:
        return None

    async def attach(self, container_id: str) -> AttachedStream:
        reader = asyncio.StreamReader()
        self.readers[container_id] = reader
        return AttachedStream(reader, FakeWriter(lambda data: self._on_request(container_id, data)))  # type: ignore[arg-type]

    def _on_request(self, container_id: str, data: bytes) -> None:
        payload = json.loads(data)
        asyncio.get_running_loop().create_task(self._answer(container_id, payload))

    async def _answer(self, container_id: str, payload: dict[str, Any]) -> None:
        reader = self.readers[container_id]
        how = self.behaviour(payload, container_id)
        if how == "die-before-ack":
            reader.feed_eof()
            return
        reader.feed_data(frame(1, (ACK_MARKER + "{}\n").encode()))
        if how == "die-after-ack":
            reader.feed_eof()
            return
        if how == "hang":
            return
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        await asyncio.sleep(float(payload["env"].get("SLEEP", "0")))
        self.running -= 1
        result = {"status": "ok", "exit_code": 0, "stdout": f"{container_id[:4]} {payload['argv'][-1]}\n"}
        reader.feed_data(frame(1, (MARKER + json.dumps(result) + "\n").encode()))


def pooled(engine: FakeEngine, pool_size: int = 1, **kwargs: Any) -> DockerSandbox:
    settings = SandboxSettings(image="debatecode/test:1", pool_size=pool_size, sweep_on_start=False)
    return DockerSandbox(settings, client=engine, attacher=engine.attach, **kwargs)  # type: ignore[arg-type]


def job(tag: str, *, sleep: float = 0.0, limits: Limits | None = None) -> ExecJob:
    return ExecJob(argv=["echo", tag], env={"SLEEP": str(sleep)}, limits=limits or Limits())


async def test_jobs_reuse_one_warm_container_started_once() -> None:
    engine = FakeEngine()
    sandbox = pooled(engine)
    outputs = [(await sandbox.run(job(str(i)))).stdout for i in range(3)]
    assert outputs == ["c001 0\n", "c001 1\n", "c001 2\n"]
    assert len(engine.created) == 1
    spec = engine.created[0]
    assert spec["labels"]["debatecode.kind"] == "pool" and spec["stdin_open"] and spec["auto_remove"]
    assert spec["command"][-1] == "serve" and spec["network_mode"] == "none"
    await sandbox.aclose()
    assert engine.removed == [engine.started[0]]


async def test_container_lost_before_ack_runs_the_job_fresh_and_replaces_the_member(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = FakeEngine(lambda payload, cid: "die-before-ack" if cid.startswith("c001") else "ok")
    sandbox = pooled(engine)
    fresh: list[ExecJob] = []

    async def run_fresh(exec_job: ExecJob) -> ExecResult:
        fresh.append(exec_job)
        return ExecResult(status="ok", exit_code=0, stdout="fresh\n", backend="docker")

    monkeypatch.setattr(sandbox, "run_fresh", run_fresh)
    first = await sandbox.run(job("a"))
    assert first.stdout == "fresh\n" and len(fresh) == 1
    second = await sandbox.run(job("b"))
    assert second.stdout == "c002 b\n", "the lost member was replaced by a new warm container"
    assert engine.removed[0].startswith("c001")
    await sandbox.aclose()


async def test_container_lost_mid_job_reruns_it_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = FakeEngine(lambda payload, cid: "die-after-ack")
    sandbox = pooled(engine)

    async def run_fresh(exec_job: ExecJob) -> ExecResult:
        return ExecResult(status="oom", exit_code=None, backend="docker")

    monkeypatch.setattr(sandbox, "run_fresh", run_fresh)
    result = await sandbox.run(job("a"))
    assert result.status == "oom"
    await asyncio.sleep(0.01)
    assert engine.removed and engine.removed[0].startswith("c001")
    await sandbox.aclose()


async def test_hung_container_is_a_timeout_and_is_removed() -> None:
    engine = FakeEngine(lambda payload, cid: "hang")
    sandbox = pooled(engine, host_grace_s=0.0)
    result = await sandbox.run(job("a", limits=Limits(timeout_s=0.2)))
    assert result.status == "timeout" and result.exit_code is None
    await asyncio.sleep(0.01)
    assert engine.removed and engine.removed[0].startswith("c001")
    await sandbox.aclose()


async def test_batch_keeps_job_order_and_runs_at_its_concurrency() -> None:
    engine = FakeEngine()
    sandbox = pooled(engine, pool_size=2)
    jobs = [job(str(i), sleep=0.05) for i in range(8)]
    results = await sandbox.run_batch(jobs)
    assert [r.stdout.split()[1] for r in results] == [str(i) for i in range(8)]
    assert len(engine.created) == 2 and engine.max_running == 2, "by default a batch runs at the pool size"
    await sandbox.aclose()


async def test_a_batch_grows_the_pool_to_its_concurrency_then_shrinks_it_back() -> None:
    engine = FakeEngine()
    sandbox = pooled(engine, pool_size=2)
    results = await sandbox.run_batch([job(str(i), sleep=0.05) for i in range(8)], concurrency=4)
    assert [r.stdout.split()[1] for r in results] == [str(i) for i in range(8)]
    assert len(engine.created) == 4 and engine.max_running == 4
    await asyncio.sleep(0.01)
    assert len(engine.removed) == 2, "the two extra containers go once the batch is done"
    await sandbox.aclose()
    assert sorted(engine.removed) == sorted(engine.started)


async def test_cancelled_job_discards_its_container() -> None:
    engine = FakeEngine()
    sandbox = pooled(engine)
    task = asyncio.ensure_future(sandbox.run(job("slow", sleep=5)))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.01)
    assert engine.removed and engine.removed[0].startswith("c001")
    await sandbox.aclose()


def test_a_pool_from_an_earlier_event_loop_is_removed_and_replaced() -> None:
    engine = FakeEngine()
    sandbox = pooled(engine)
    first = asyncio.run(sandbox.run(job("a")))
    second = asyncio.run(sandbox.run(job("b")))
    assert (first.stdout, second.stdout) == ("c001 a\n", "c002 b\n")
    assert engine.removed == [engine.started[0]]
    asyncio.run(sandbox.aclose())
    assert engine.removed == engine.started


class FakeMember:
    def __init__(self) -> None:
        self.stream = stream_with(eof=False)


async def test_pool_evicts_an_idle_container_of_another_shape_when_full() -> None:
    started: list[ContainerShape] = []
    removed: list[WarmContainer] = []

    async def start(shape: ContainerShape) -> WarmContainer:
        started.append(shape)
        return WarmContainer(f"id{len(started)}", f"n{len(started)}", shape, stream_with(eof=False))

    async def remove(container: WarmContainer) -> None:
        removed.append(container)

    pool = WarmPool(1, start, remove, idle_ttl_s=60)
    small, large = ContainerShape(128, 64, 1.0, 16), ContainerShape(512, 64, 1.0, 16)
    first = await pool.acquire(small)
    await pool.release(first)
    assert await pool.acquire(small) is first
    await pool.release(first)
    other = await pool.acquire(large)
    assert other is not first and other.shape == large
    await asyncio.sleep(0)
    assert removed == [first]
    await pool.release(other)
    await pool.close()
    assert removed == [first, other]
    with pytest.raises(RuntimeError, match="closed"):
        await pool.acquire(small)


async def test_pool_does_not_hand_out_containers_near_their_idle_ttl() -> None:
    async def start(shape: ContainerShape) -> WarmContainer:
        return WarmContainer("id", "n", shape, stream_with(eof=False))

    async def remove(container: WarmContainer) -> None:
        return None

    pool = WarmPool(2, start, remove, idle_ttl_s=60)
    shape = ContainerShape(128, 64, 1.0, 16)
    member = await pool.acquire(shape)
    await pool.release(member)
    member.last_used -= 59
    assert await pool.acquire(shape) is not member
    await pool.close()


async def test_warm_starts_only_what_is_missing_within_free_slots() -> None:
    count = 0

    async def start(shape: ContainerShape) -> WarmContainer:
        nonlocal count
        count += 1
        return WarmContainer(f"id{count}", "n", shape, stream_with(eof=False))

    async def remove(container: WarmContainer) -> None:
        return None

    pool = WarmPool(3, start, remove, idle_ttl_s=60)
    shape = ContainerShape(128, 64, 1.0, 16)
    assert await pool.warm(shape, 2) == 2
    assert await pool.warm(shape, 2) == 0
    assert await pool.warm(shape, 10) == 1
    assert len(pool.members) == 3
    await pool.close()


async def test_the_first_ready_container_serves_while_others_still_start() -> None:
    delays = [0.01, 1.0]

    async def start(shape: ContainerShape) -> WarmContainer:
        delay = delays.pop(0)
        await asyncio.sleep(delay)
        return WarmContainer(f"ready-after-{delay}", "n", shape, stream_with(eof=False))

    async def remove(container: WarmContainer) -> None:
        return None

    pool = WarmPool(2, start, remove, idle_ttl_s=60)
    shape = ContainerShape(128, 64, 1.0, 16)

    async def use() -> tuple[str, float]:
        started = asyncio.get_running_loop().time()
        container = await pool.acquire(shape)
        await asyncio.sleep(0.01)
        await pool.release(container)
        return container.container_id, asyncio.get_running_loop().time() - started

    (first, _), (second, waited) = await asyncio.gather(use(), use())
    assert first == second == "ready-after-0.01", "both callers used the container that was ready first"
    assert waited < 0.5
    await pool.close()
    assert len(pool.members) == 0


async def test_a_failed_start_reaches_the_caller_it_was_made_for() -> None:
    async def start(shape: ContainerShape) -> WarmContainer:
        raise RuntimeError("engine said no")

    async def remove(container: WarmContainer) -> None:
        return None

    pool = WarmPool(1, start, remove, idle_ttl_s=60)
    with pytest.raises(RuntimeError, match="engine said no"):
        await pool.acquire(ContainerShape(128, 64, 1.0, 16))
    await pool.close()
