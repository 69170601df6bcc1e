"""N drafts of one prompt: the embedded model's batched decode, and ``LLMClient.complete_n`` over any transport."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import pytest

from debatecode.errors import ModelRequestError
from debatecode.llm import LLMClient, TokenBudget, local, local_batch, local_provider
from debatecode.llm.client import CompletionRequest, RawCompletion

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
requires_llama = pytest.mark.skipif(
    not HAS_LLAMA, reason="llama-cpp-python is not installed (pip install 'debatecode[local]')"
)
MODEL = "qwen2.5-coder-0.5b"
ADD = [
    {"role": "system", "content": "You are an expert Python programmer."},
    {
        "role": "user",
        "content": "Complete the following Python function. Reply with the whole function in one ```python block."
        '\n\n```python\ndef add(a, b):\n    """Return a + b."""\n```',
    },
]
RANDOM = "import random\nrandom.seed("


# --- the client, with a transport that batches (no model) ----------------------------------------------


class BatchingTransport:
    """Answers one request per call, or ``len(seeds)`` from one ``complete_batch`` call; records both."""

    def __init__(self) -> None:
        self.calls: list[CompletionRequest] = []
        self.batches: list[tuple[CompletionRequest, list[int]]] = []

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        self.calls.append(request)
        return RawCompletion(text=f"seed {request.seed}", prompt_tokens=100, completion_tokens=7)

    async def complete_batch(self, request: CompletionRequest, seeds: Sequence[int]) -> list[RawCompletion]:
        self.batches.append((request, list(seeds)))
        return [RawCompletion(text=f"seed {s}", prompt_tokens=100, completion_tokens=10 + s) for s in seeds]


class OneAtATime(BatchingTransport):
    complete_batch = None  # type: ignore[assignment]


async def test_a_batch_charges_its_prompt_once_and_every_completion() -> None:
    transport = BatchingTransport()
    budget = TokenBudget(None)
    client = LLMClient(transport=transport)
    drafts = await client.complete_n(
        "scripted/x", [{"role": "user", "content": "hi"}], 3, seeds=[4, 5, 6], budget=budget
    )
    assert [d.text for d in drafts] == ["seed 4", "seed 5", "seed 6"]
    assert [d.prompt_tokens for d in drafts] == [100, 0, 0]
    assert [d.completion_tokens for d in drafts] == [14, 15, 16]
    assert {d.batch_size for d in drafts} == {3}
    assert client.usage.prompt_tokens == budget.usage.prompt_tokens == 100
    assert client.usage.completion_tokens == budget.usage.completion_tokens == 45
    assert client.usage.calls == 3 and not transport.calls
    assert transport.batches[0][1] == [4, 5, 6]


async def test_each_draft_of_a_batch_gets_an_nth_of_the_budget_left() -> None:
    transport = BatchingTransport()
    client = LLMClient(transport=transport)
    await client.complete_n(
        "scripted/x", [{"role": "user", "content": "hi"}], 4, max_tokens=500, budget=TokenBudget(1000)
    )
    request, seeds = transport.batches[0]
    assert request.max_tokens == 250 and seeds == [0, 1, 2, 3]


async def test_without_a_batching_transport_the_drafts_are_sampled_one_after_another() -> None:
    transport = OneAtATime()
    client = LLMClient(transport=transport)
    drafts = await client.complete_n("scripted/x", [{"role": "user", "content": "hi"}], 3, seeds=[7, 8, 9])
    assert [r.seed for r in transport.calls] == [7, 8, 9]
    assert [d.text for d in drafts] == ["seed 7", "seed 8", "seed 9"]
    assert client.usage.prompt_tokens == 300, "three calls, three prompts"
    assert {d.batch_size for d in drafts} == {1}


async def test_a_draft_count_without_its_seeds_is_refused() -> None:
    client = LLMClient(transport=BatchingTransport())
    with pytest.raises(ValueError, match="n seeds"):
        await client.complete_n("scripted/x", [{"role": "user", "content": "hi"}], 3, seeds=[1])
    with pytest.raises(ValueError, match="n >= 1"):
        await client.complete_n("scripted/x", [{"role": "user", "content": "hi"}], 0)
    with pytest.raises(ValueError, match="3 drafts need 3 seeds"):
        local_batch.generate_local_batch(MODEL, "x", 3, max_tokens=4, seeds=[1])


def test_litellm_n_gets_one_seed_per_choice() -> None:
    assert local_provider.batch_sampling({"n": 3, "seed": 10, "max_tokens": 8}, None, 3)["seeds"] == [10, 11, 12]
    assert local_provider.batch_sampling({"n": 2}, None, 2)["seeds"] == [0, 1]
    metadata = {"metadata": {local_provider.SEEDS_METADATA_KEY: [5, 3]}}
    assert local_provider.batch_sampling({"n": 2, "seed": 10}, metadata, 2)["seeds"] == [5, 3]
    with pytest.raises(ModelRequestError, match="3 choices need 3 seeds"):
        local_provider.batch_sampling({"n": 3}, metadata, 3)


# --- the embedded model -------------------------------------------------------------------------------


def _greedy(n: int, **kwargs: Any) -> list[local.LocalGeneration]:
    return local_batch.generate_local_batch(MODEL, ADD, n, max_tokens=32, temperature=0.0, **kwargs)


@pytest.mark.local_model
@requires_llama
def test_greedy_drafts_are_one_answer_with_exact_counts_and_leave_the_single_path_as_it_was() -> None:
    before = local.generate_local(MODEL, ADD, max_tokens=32, temperature=0.0)
    drafts = _greedy(3)
    after = local.generate_local(MODEL, ADD, max_tokens=32, temperature=0.0)
    assert after == before, "the model's own context and prompt cache are untouched by a batch"
    assert len(drafts) == 3 and len({d.text for d in drafts}) == 1
    assert "return a + b" in drafts[0].text.replace("(a + b)", "a + b")
    prompt_tokens = local.count_local_tokens(MODEL, ADD)
    assert all(d.prompt_tokens == prompt_tokens for d in drafts)
    assert all(d.finish_reason == "stop" and 0 < d.completion_tokens < 32 for d in drafts)
    # The chat template's end-of-turn token ends a draft and is not counted, as on the single path.
    assert drafts[0].completion_tokens == before.completion_tokens
    context = local_batch._contexts[local._load(MODEL).llama]
    import llama_cpp

    assert all(llama_cpp.llama_memory_seq_pos_max(context.memory, s) == -1 for s in range(3)), "KV cache cleared"


@pytest.mark.local_model
@requires_llama
def test_seeded_drafts_differ_from_each_other_and_repeat_exactly() -> None:
    sampling: dict[str, Any] = {"max_tokens": 6, "temperature": 1.5, "seeds": [11, 12, 13, 14]}
    drafts = local_batch.generate_local_batch(MODEL, RANDOM, 4, **sampling)
    again = local_batch.generate_local_batch(MODEL, RANDOM, 4, **sampling)
    assert again == drafts
    assert len({d.text for d in drafts}) == 4, [d.text for d in drafts]
    assert all(1 <= d.completion_tokens <= 6 for d in drafts)
    assert drafts[0].finish_reason in {"stop", "length"}


@pytest.mark.local_model
@requires_llama
def test_drafts_that_do_not_fit_the_window_together_run_in_waves_after_one_prompt_evaluation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evaluated: list[int] = []
    waves: list[int] = []
    evaluate, decode_wave = local_batch._evaluate_prompt, local_batch._decode_wave

    def count_prompt(name: str, context: Any, tokens: Sequence[int]) -> None:
        evaluated.append(len(tokens))
        evaluate(name, context, tokens)

    def count_wave(*args: Any) -> None:
        waves.append(len(args[4]))
        decode_wave(*args)

    monkeypatch.setattr(local_batch, "_evaluate_prompt", count_prompt)
    monkeypatch.setattr(local_batch, "_decode_wave", count_wave)
    # 3 drafts of up to 4000 tokens: two fit the 8192-token window beside the prompt, the third waits.
    drafts = local_batch.generate_local_batch(MODEL, ADD, 3, max_tokens=4000, temperature=0.0)
    assert waves == [2, 1] and len(evaluated) == 1
    assert all("return a + b" in d.text.replace("(a + b)", "a + b") for d in drafts)


@pytest.mark.local_model
@requires_llama
def test_a_prompt_beyond_the_window_is_refused_before_any_decoding() -> None:
    with pytest.raises(ModelRequestError, match="context window holds 8191"):
        local_batch.generate_local_batch(MODEL, [{"role": "user", "content": "x " * 9000}], 2, max_tokens=4)


@pytest.mark.local_model
@requires_llama
async def test_the_client_samples_local_drafts_in_one_batch_through_litellm_n() -> None:
    async with LLMClient() as client:
        drafts = await client.complete_n(f"local/{MODEL}", ADD, 3, max_tokens=32, temperature=0.0)
    prompt_tokens = local.count_local_tokens(MODEL, ADD)
    assert [d.prompt_tokens for d in drafts] == [prompt_tokens, 0, 0]
    assert all(d.batch_size == 3 and not d.usage_estimated and d.completion_tokens > 5 for d in drafts)
    assert client.usage.prompt_tokens == prompt_tokens
    assert client.usage.completion_tokens == sum(d.completion_tokens for d in drafts)
    assert len({d.text for d in drafts}) == 1 and "return a + b" in drafts[0].text.replace("(a + b)", "a + b")


@pytest.mark.local_model
@requires_llama
def test_the_batch_context_grows_for_more_drafts_and_is_freed_with_its_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_loaded", {})  # a model of this test's own, closed at its end
    llama = local._load(MODEL).llama
    try:
        local_batch.generate_local_batch(MODEL, "def f(", 2, max_tokens=2)
        small = local_batch._contexts[llama]
        assert small.n_seq_max == local_batch.BATCH_MIN_SEQUENCES
        drafts = local_batch.generate_local_batch(MODEL, "def f(", 9, max_tokens=2, temperature=0.8)
        large = local_batch._contexts[llama]
        assert large.n_seq_max == 16 and small.ctx is None, "replaced by one for 16 sequences, and freed"
        assert len(drafts) == 9 and all(d.completion_tokens <= 2 for d in drafts)
    finally:
        llama.close()
    assert large.ctx is None, "closing the model frees its batch context first"


def test_litellm_n_below_one_is_refused() -> None:
    assert local_provider._choices(MODEL, {}) == 1
    with pytest.raises(ModelRequestError, match="n must be at least 1, not 0"):
        local_provider._choices(MODEL, {"n": 0})
