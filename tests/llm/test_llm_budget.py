"""``TokenBudget``: per-session budgets on a shared client."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from llm_fakes import FakeTransport

from debatecode.config import LLMSettings
from debatecode.errors import BudgetExceeded
from debatecode.llm import Completion, LLMClient, Message, TokenBudget

PROMPT: list[Message] = [{"role": "user", "content": "write add(a, b)"}]


async def test_two_budgets_on_one_client_do_not_see_each_others_spend(fast_settings: LLMSettings) -> None:
    client = LLMClient(fast_settings, transport=FakeTransport(prompt_tokens=10, completion_tokens=5))
    small, large = TokenBudget(40), TokenBudget(1000)

    for _ in range(3):  # 15 tokens a call: 45 >= 40 after the third
        await client.complete("scripted/x", PROMPT, budget=small)
    with pytest.raises(BudgetExceeded) as info:
        await client.complete("scripted/x", PROMPT, budget=small)
    assert (info.value.used, info.value.budget) == (45, 40)

    reply = await client.complete("scripted/x", PROMPT, budget=large)  # the other session is untouched
    assert reply.text == "ok"
    assert (small.used, small.remaining, small.usage.calls) == (45, 0, 3)
    assert (large.used, large.remaining, large.usage.calls) == (15, 985, 1)
    assert (client.usage.calls, client.usage.total_tokens, len(client.calls)) == (4, 60, 4)
    assert client.token_budget is None and client.remaining_tokens is None


async def test_concurrent_sessions_are_charged_separately(fast_settings: LLMSettings) -> None:
    client = LLMClient(fast_settings, transport=FakeTransport(prompt_tokens=3, completion_tokens=2))

    async def session(budget: TokenBudget, calls: int) -> None:
        for _ in range(calls):
            await client.complete("scripted/x", PROMPT, budget=budget)
            await asyncio.sleep(0)

    first, second = TokenBudget(None), TokenBudget(500)
    await asyncio.gather(session(first, 7), session(second, 4))
    assert (first.usage.calls, first.used) == (7, 35)
    assert (second.usage.calls, second.used) == (4, 20)
    assert client.usage.total_tokens == 55


async def test_a_budget_caps_max_tokens(fast_settings: LLMSettings) -> None:
    transport = FakeTransport(prompt_tokens=10, completion_tokens=5)
    client = LLMClient(fast_settings, transport=transport)
    budget = TokenBudget(20)
    await client.complete("scripted/x", PROMPT, max_tokens=64, budget=budget)
    await client.complete("scripted/x", PROMPT, max_tokens=64, budget=budget)
    assert [r.max_tokens for r in transport.requests] == [20, 5]


async def test_a_given_budget_replaces_the_clients_own(fast_settings: LLMSettings) -> None:
    client = LLMClient(fast_settings, token_budget=20, transport=FakeTransport(prompt_tokens=10, completion_tokens=5))
    budget = TokenBudget(None)
    for _ in range(3):  # 45 tokens: past the client's 20, but the session budget is unlimited
        await client.complete("scripted/x", PROMPT, budget=budget)
    assert budget.used == 45
    with pytest.raises(BudgetExceeded):  # without a budget the client's own applies, as before
        await client.complete("scripted/x", PROMPT)


async def test_failed_calls_are_not_charged(fast_settings: LLMSettings) -> None:
    from debatecode.errors import ModelAuthError

    client = LLMClient(fast_settings, transport=FakeTransport([ModelAuthError("no", model="scripted/x")]))
    budget = TokenBudget(100)
    with pytest.raises(ModelAuthError):
        await client.complete("scripted/x", PROMPT, budget=budget)
    assert (budget.used, budget.usage.calls) == (0, 0)


def _completion(prompt_tokens: int, completion_tokens: int, cost: float = 0.0) -> Completion:
    return Completion(
        text="",
        model="scripted/x",
        provider="scripted",
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost,
        latency_s=0.0,
        usage_estimated=True,
    )


def test_reserve_remaining_and_charge() -> None:
    unlimited = TokenBudget(None)
    assert (unlimited.remaining, unlimited.reserve(10_000)) == (None, 10_000)
    budget = TokenBudget(100)
    assert budget.reserve(64) == 64
    budget.charge(_completion(50, 20, cost=0.5))
    assert (budget.used, budget.remaining, budget.reserve(64)) == (70, 30, 30)
    usage = budget.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost_usd, usage.calls) == (50, 20, 0.5, 1)
    usage.calls = 99  # a snapshot: changing it changes nothing
    assert budget.usage.calls == 1
    budget.charge(_completion(30, 0))
    with pytest.raises(BudgetExceeded, match="100 of 100 tokens used"):
        budget.reserve(1)
    assert "limit=100" in repr(budget)
    with pytest.raises(ValueError, match="negative"):
        TokenBudget(-1)


def test_charging_from_many_threads_loses_nothing() -> None:
    budget = TokenBudget(None)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: budget.charge(_completion(2, 1)), range(2000)))
    assert (budget.used, budget.usage.calls) == (6000, 2000)
