"""The embedded model's pool of copies: one caller keeps one copy, concurrent callers get their own, up to the size."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from debatecode.errors import ModelError
from debatecode.llm import local

NAME = "pool-test-model"
HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None


class FakeLlama:
    def __init__(self, number: int) -> None:
        self.number = number

    def close(self) -> None:
        pass


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A model of two copies whose loads are faked and counted (the copy numbers, in load order)."""
    loaded: list[int] = []

    def new_llama(name: str, *, copy: int) -> FakeLlama:
        assert name == NAME
        loaded.append(copy)
        return FakeLlama(copy)

    monkeypatch.setattr(local, "_loaded", {})
    monkeypatch.setattr(local, "_new_llama", new_llama)
    monkeypatch.setitem(local.LOCAL_MODELS, NAME, local.LocalModelSpec(name=NAME, size_hint="0 MB", instances=2))
    yield loaded


def test_one_caller_at_a_time_never_loads_a_second_copy(loads: list[int]) -> None:
    pool = local._pool(NAME)
    for _ in range(3):
        with pool.copy() as model:
            assert model is pool.first
    assert loads == [1]


def test_a_call_while_every_copy_is_busy_loads_another_up_to_the_size_then_waits(loads: list[int]) -> None:
    pool = local._pool(NAME)
    third_got: list[Any] = []
    with pool.copy() as first, pool.copy() as second:
        assert (first.llama.number, second.llama.number) == (1, 2)

        def third() -> None:
            with pool.copy() as model:
                third_got.append(model)

        waiter = threading.Thread(target=third)
        waiter.start()
        waiter.join(timeout=0.3)
        assert waiter.is_alive() and not third_got, "a pool of two holds no third copy: the third call waits"
    waiter.join(timeout=5)
    assert not waiter.is_alive() and third_got[0] is pool.first, "the first copy returned serves it"
    assert loads == [1, 2]


def test_a_failed_load_of_another_copy_is_reported_and_leaves_the_pool_usable(
    loads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = local._pool(NAME)

    def broken(name: str, *, copy: int) -> FakeLlama:
        raise ModelError(f"could not load local/{name} (copy {copy})", model=f"local/{name}")

    monkeypatch.setattr(local, "_new_llama", broken)
    with pool.copy(), pytest.raises(ModelError, match="copy 2"), pool.copy():
        pass
    with pool.copy() as model:
        assert model is pool.first and pool._loading == 0


def test_the_default_size_is_the_cores_over_the_threads_per_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local.os, "cpu_count", lambda: 8)
    assert local._copies(local.LocalModelSpec(name="x", size_hint="", n_threads=1)) == 8
    assert local._copies(local.LocalModelSpec(name="x", size_hint="", n_threads=3)) == 2
    assert local._copies(local.LocalModelSpec(name="x", size_hint="")) == 1, "7 threads by default: one copy"
    assert local._copies(local.LocalModelSpec(name="x", size_hint="", n_threads=1, instances=3)) == 3
    monkeypatch.setattr(local.os, "cpu_count", lambda: 2)
    assert local._copies(local.LocalModelSpec(name="x", size_hint="")) == 2


def test_concurrent_async_calls_generate_on_as_many_copies_as_the_pool_holds(
    loads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    busy: set[int] = set()
    most = 0
    guard = threading.Lock()
    release = threading.Event()

    def generate(name: str, prompt: Any, **_: Any) -> int:
        nonlocal most
        with local._pool(name).copy() as model:
            with guard:
                busy.add(model.llama.number)
                most = max(most, len(busy))
            release.wait(timeout=5)
            with guard:
                busy.discard(model.llama.number)
            return int(model.llama.number)

    monkeypatch.setattr(local, "generate_local", generate)

    async def main() -> list[Any]:
        calls = [asyncio.create_task(local.agenerate_local(NAME, "x", max_tokens=1)) for _ in range(4)]
        await asyncio.sleep(0.3)
        release.set()
        return await asyncio.gather(*calls)

    copies = asyncio.run(main())
    assert most == 2 and sorted(set(copies)) == [1, 2] and loads == [1, 2]


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.skipif(not HAS_LLAMA, reason="llama-cpp-python is not installed (pip install 'debatecode[local]')")
def test_two_copies_of_the_real_model_give_the_same_replies_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "qwen2.5-coder-0.5b"
    monkeypatch.setattr(local, "_loaded", {})
    monkeypatch.setitem(
        local.LOCAL_MODELS, name, dataclasses.replace(local.LOCAL_MODELS[name], instances=2, n_threads=1)
    )
    messages = [{"role": "user", "content": "Write a Python function that reverses a string."}]
    sampling: dict[str, Any] = {"max_tokens": 24, "temperature": 0.7, "seed": 5}
    try:
        alone = local.generate_local(name, messages, **sampling).text
        replies: list[str] = []
        start = threading.Barrier(2)

        def call() -> None:
            start.wait()
            replies.append(local.generate_local(name, messages, **sampling).text)

        threads = [threading.Thread(target=call) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        pool = local._loaded[name]
        assert len(pool.copies) == 2, "the second call found the first copy busy and loaded another"
        assert replies == [alone, alone]
    finally:
        if name in local._loaded:
            for model in local._loaded[name].copies:
                model.llama.close()
