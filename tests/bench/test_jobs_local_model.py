"""``--jobs N`` with a ``local/...`` model: N concurrent callers share the model's pool of copies, their calls queued.

The llama.cpp class is replaced by a fake that counts how often it is built and
how many generations overlap, so no weights are needed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest

import debatecode.llm.local as local

NAME = "gemma-3-270m"


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: counts instances, overlapping generations and threads used."""

    built: ClassVar[int] = 0
    running: ClassVar[int] = 0
    most_running: ClassVar[int] = 0
    threads: ClassVar[set[int]] = set()
    prompts: ClassVar[list[str]] = []
    seconds: ClassVar[float] = 0.01

    def __init__(self, **settings: Any) -> None:
        type(self).built += 1

    def create_completion(self, prompt: str, **sampling: Any) -> dict[str, Any]:
        cls = type(self)
        cls.running += 1
        cls.most_running = max(cls.most_running, cls.running)
        cls.threads.add(threading.get_ident())
        cls.prompts.append(prompt)
        time.sleep(cls.seconds)
        cls.running -= 1
        return {
            "choices": [{"text": f"answer to {prompt}", "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4},
        }

    def close(self) -> None:
        """Nothing to free."""


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> type[FakeLlama]:
    pytest.importorskip("llama_cpp")
    FakeLlama.built = FakeLlama.running = FakeLlama.most_running = 0
    FakeLlama.threads = set()
    FakeLlama.prompts = []
    FakeLlama.seconds = 0.01
    monkeypatch.setattr(local, "_loaded", {})
    monkeypatch.setattr(local, "_batch_aligned_llama", lambda: FakeLlama)
    monkeypatch.setattr(local, "_weights_path", lambda spec: Path("/nonexistent/fake.gguf"))
    monkeypatch.setattr(local, "_route_llama_logs", lambda: None)
    copies(monkeypatch, 1)
    return FakeLlama


def copies(monkeypatch: pytest.MonkeyPatch, instances: int) -> None:
    """The model's pool holds at most ``instances`` copies."""
    monkeypatch.setitem(local.LOCAL_MODELS, NAME, dataclasses.replace(local.LOCAL_MODELS[NAME], instances=instances))


async def _many(count: int) -> list[local.LocalGeneration]:
    return list(
        await asyncio.gather(*(local.agenerate_local(NAME, f"problem {i}", max_tokens=8) for i in range(count)))
    )


def test_concurrent_calls_share_one_loaded_model_and_queue_in_order(fake_llama: type[FakeLlama]) -> None:
    results = asyncio.run(_many(12))
    assert fake_llama.built == 1, "a pool of one: one model instance for all concurrent callers"
    assert fake_llama.most_running == 1, "llama.cpp generates one call at a time"
    assert [r.text for r in results] == [f"answer to problem {i}" for i in range(12)]
    assert fake_llama.prompts == [f"problem {i}" for i in range(12)], "calls are served in arrival order"


def test_concurrent_calls_generate_on_as_many_copies_as_the_pool_holds_and_no_more(
    fake_llama: type[FakeLlama], monkeypatch: pytest.MonkeyPatch
) -> None:
    copies(monkeypatch, 2)
    fake_llama.seconds = 0.05
    results = asyncio.run(_many(12))
    assert fake_llama.built == 2 and fake_llama.most_running == 2, "two copies, two calls at once, never three"
    assert [r.text for r in results] == [f"answer to problem {i}" for i in range(12)]


def test_waiting_calls_do_not_hold_worker_threads(fake_llama: type[FakeLlama], monkeypatch: pytest.MonkeyPatch) -> None:
    fake_llama.seconds = 0.05

    async def main() -> int:
        # A pool smaller than the calls: were each waiting call to hold a thread, the pool would be full.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=4))
        calls = asyncio.ensure_future(_many(8))
        await asyncio.sleep(0.02)
        # While the queue drains, the default pool still runs other work at once.
        started = time.monotonic()
        await asyncio.wait_for(asyncio.to_thread(lambda: None), timeout=1)
        waited = time.monotonic() - started
        await calls
        return int(waited * 1000)

    copies(monkeypatch, 2)
    waited_ms = asyncio.run(main())
    assert waited_ms < 100, f"other thread work waited {waited_ms} ms behind queued model calls"
    assert fake_llama.built == 2
