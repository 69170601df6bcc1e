"""A vote's sampled drafts are decoded in blocks, each draft the same whichever sample asks first."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from debatecode.bench.humaneval.draft_blocks import DraftBlocks, block_of
from debatecode.llm.client import ResolvedModel
from debatecode.llm.transport import CompletionRequest, RawCompletion


def _request(index: int, temperature: float = 0.7) -> CompletionRequest:
    return CompletionRequest(
        model="local/qwen2.5-coder-0.5b",
        resolved=ResolvedModel(kind="local", provider="local", name="qwen2.5-coder-0.5b", prompt_style_default="chat"),
        messages=[{"role": "user", "content": "write f"}],
        max_tokens=64,
        temperature=temperature,
        seed=100 + index,
    )


class _Batcher:
    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    async def __call__(self, request: CompletionRequest, seeds: Sequence[int]) -> list[RawCompletion]:
        self.calls.append(list(seeds))
        return [
            RawCompletion(text=f"draft for seed {s} at {request.temperature}", prompt_tokens=50, completion_tokens=s)
            for s in seeds
        ]


def test_blocks_start_after_the_greedy_sample() -> None:
    assert list(block_of(0, 4)) == [0]
    assert list(block_of(1, 4)) == [1, 2, 3, 4]
    assert list(block_of(4, 4)) == [1, 2, 3, 4]
    assert list(block_of(5, 4)) == [5, 6, 7, 8]
    assert list(block_of(3, 1)) == [3]


def test_one_batched_call_serves_the_whole_block_and_charges_the_prompt_once() -> None:
    blocks, send = DraftBlocks(), _Batcher()

    async def draw() -> list[RawCompletion]:
        return [await blocks.draft(_request(k), k, 4, send, lambda _k: 0.7) for k in (1, 2, 3, 4, 5)]

    drafts = asyncio.run(draw())
    assert send.calls == [[101, 102, 103, 104], [105, 106, 107, 108]]
    assert [d.text for d in drafts] == [f"draft for seed {100 + k} at 0.7" for k in (1, 2, 3, 4, 5)]
    assert [d.prompt_tokens for d in drafts] == [50, 0, 0, 0, 50]


def test_a_draft_is_the_same_whichever_sample_of_its_block_asks_first() -> None:
    in_order, resumed = DraftBlocks(), DraftBlocks()

    async def draw(blocks: DraftBlocks, order: Sequence[int]) -> dict[int, str]:
        return {k: (await blocks.draft(_request(k), k, 4, _Batcher(), lambda _k: 0.7)).text for k in order}

    assert asyncio.run(draw(in_order, [1, 2, 3])) == asyncio.run(draw(resumed, [3, 1, 2]))


def test_a_request_unlike_the_block_s_goes_out_on_its_own() -> None:
    blocks, send = DraftBlocks(), _Batcher()

    async def draw() -> RawCompletion:
        await blocks.draft(_request(1), 1, 4, send, lambda _k: 0.7)
        changed = _request(2).model_copy(update={"max_tokens": 32})
        return await blocks.draft(changed, 2, 4, send, lambda _k: 0.7)

    asyncio.run(draw())
    assert send.calls == [[101, 102, 103, 104], [101, 102, 103, 104]]


def test_mixed_temperatures_are_not_batched() -> None:
    blocks, send = DraftBlocks(), _Batcher()
    asyncio.run(blocks.draft(_request(1), 1, 4, send, lambda k: 0.0 if k == 2 else 0.7))
    assert send.calls == [[101]]
