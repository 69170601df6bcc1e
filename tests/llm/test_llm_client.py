"""LLMClient with an injected transport: usage, cost, budget, defaults and the test guard."""

from __future__ import annotations

import litellm
import pytest
from llm_fakes import FakeTransport

from debatecode.config import LLMSettings
from debatecode.errors import BudgetExceeded, ModelRequestsDisabled
from debatecode.llm import LLMClient, Message, ScriptedModel, register_scripted
from debatecode.llm import client as client_module

PROMPT: list[Message] = [{"role": "user", "content": "write add(a, b)"}]


async def test_usage_and_cost_are_recorded_per_call(fast_settings: LLMSettings) -> None:
    import litellm

    transport = FakeTransport(prompt_tokens=1000, completion_tokens=500)
    client = LLMClient(fast_settings, transport=transport)
    first = await client.complete("openai/gpt-4o-mini", PROMPT, tags={"agent": "agent-1"})
    await client.complete("openai/gpt-4o-mini", PROMPT)

    prompt_cost, completion_cost = litellm.cost_per_token(
        model="openai/gpt-4o-mini", prompt_tokens=1000, completion_tokens=500
    )
    assert first.cost_usd == pytest.approx(prompt_cost + completion_cost)
    assert first.cost_usd > 0
    assert (first.prompt_tokens, first.completion_tokens, first.total_tokens) == (1000, 500, 1500)
    assert first.usage_estimated is False
    assert first.provider == "openai"
    assert first.latency_s > 0
    assert first.tags == {"agent": "agent-1"}
    assert client.calls[0] == first and len(client.calls) == 2
    assert client.usage.calls == 2
    assert client.usage.total_tokens == 3000
    assert client.usage.cost_usd == pytest.approx(2 * first.cost_usd)


async def test_cost_reported_by_the_transport_is_kept(fast_settings: LLMSettings) -> None:
    client = LLMClient(fast_settings, transport=FakeTransport(cost_usd=0.125))
    assert (await client.complete("openai/gpt-4o-mini", PROMPT)).cost_usd == 0.125


async def test_models_without_a_price_cost_nothing(fast_settings: LLMSettings) -> None:
    client = LLMClient(fast_settings, transport=FakeTransport())
    assert (await client.complete("ollama/qwen2.5-coder-made-up", PROMPT)).cost_usd == 0.0
    assert (await client.complete("local/gemma-3-270m", PROMPT)).cost_usd == 0.0


async def test_missing_token_counts_are_estimated_and_flagged(fast_settings: LLMSettings) -> None:
    transport = FakeTransport(text="y" * 20, prompt_tokens=None, completion_tokens=None)
    reply = await LLMClient(fast_settings, transport=transport).complete("openai/gpt-4o-mini", PROMPT)
    assert reply.usage_estimated is True
    # Counted by litellm's tokenizer for an API model (llm/tokens.py), not by characters.
    assert reply.prompt_tokens == litellm.token_counter(model="gpt-4o-mini", messages=PROMPT)
    assert reply.completion_tokens == litellm.token_counter(model="gpt-4o-mini", text="y" * 20)
    assert reply.prompt_tokens != 4, "chars/4 would give 4"


async def test_request_is_filled_from_settings_and_arguments() -> None:
    settings = LLMSettings(max_tokens=77, temperature=0.3, api_base="http://127.0.0.1:1/v1", request_timeout_s=9)
    transport = FakeTransport()
    client = LLMClient(settings, transport=transport)
    await client.complete("openai/gpt-4o-mini", PROMPT)
    await client.complete("openai/gpt-4o-mini", PROMPT, max_tokens=5, temperature=0.0, seed=7, stop=["\ndef "])
    defaults, explicit = transport.requests
    assert (defaults.max_tokens, defaults.temperature, defaults.seed, defaults.stop) == (77, 0.3, None, None)
    assert (defaults.api_base, defaults.timeout_s) == ("http://127.0.0.1:1/v1", 9)
    assert (explicit.max_tokens, explicit.temperature, explicit.seed, explicit.stop) == (5, 0.0, 7, ["\ndef "])
    assert defaults.resolved.kind == "litellm" and defaults.resolved.name == "gpt-4o-mini"


async def test_budget_caps_max_tokens_at_what_is_left(fast_settings: LLMSettings) -> None:
    transport = FakeTransport(prompt_tokens=60, completion_tokens=20)
    client = LLMClient(fast_settings, token_budget=100, transport=transport)
    await client.complete("openai/gpt-4o-mini", PROMPT, max_tokens=50)
    assert transport.requests[0].max_tokens == 50
    assert client.remaining_tokens == 20
    await client.complete("openai/gpt-4o-mini", PROMPT, max_tokens=50)
    assert transport.requests[1].max_tokens == 20


async def test_budget_exceeded_is_raised_before_the_call(fast_settings: LLMSettings) -> None:
    transport = FakeTransport(prompt_tokens=70, completion_tokens=30)
    client = LLMClient(fast_settings, token_budget=100, transport=transport)
    await client.complete("openai/gpt-4o-mini", PROMPT)
    with pytest.raises(BudgetExceeded) as info:
        await client.complete("openai/gpt-4o-mini", PROMPT)
    assert transport.attempts == 1  # the second call never reached the transport
    assert (info.value.used, info.value.budget) == (100, 100)
    assert client.usage.calls == 1


async def test_budget_counts_scripted_estimates_too() -> None:
    register_scripted("chatty", ScriptedModel(default="z" * 400))
    client = LLMClient(token_budget=100)  # one call: 4 prompt + 100 completion tokens (estimated)
    await client.complete("scripted/chatty", PROMPT)
    with pytest.raises(BudgetExceeded):
        await client.complete("scripted/chatty", PROMPT)


async def test_network_model_is_refused_without_opt_in() -> None:
    settings = LLMSettings(api_base="http://127.0.0.1:9/v1", max_retries=0)
    with pytest.raises(ModelRequestsDisabled) as info:
        await LLMClient(settings).complete("openai/gpt-4o-mini", PROMPT)
    assert "openai/gpt-4o-mini" in str(info.value)
    assert "allow_model_requests" in str(info.value)


@pytest.mark.parametrize(("value", "allowed"), [(None, True), ("1", True), ("0", False), ("false", False)])
def test_allow_flag_reads_the_environment(monkeypatch: pytest.MonkeyPatch, value: str | None, allowed: bool) -> None:
    if value is None:
        monkeypatch.delenv("DEBATECODE_ALLOW_MODEL_REQUESTS", raising=False)
    else:
        monkeypatch.setenv("DEBATECODE_ALLOW_MODEL_REQUESTS", value)
    assert client_module._env_allows_requests() is allowed


def test_opt_in_fixture_flips_the_flag(allow_model_requests: None) -> None:
    assert client_module.ALLOW_MODEL_REQUESTS is True


def test_prompt_style_follows_the_model_unless_set() -> None:
    auto = LLMClient()
    assert auto.prompt_style("local/gemma-3-270m") == "completion"
    assert auto.prompt_style("scripted/anything") == "chat"
    assert LLMClient(LLMSettings(prompt_style="chat")).prompt_style("local/gemma-3-270m") == "chat"
