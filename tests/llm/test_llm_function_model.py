"""``FunctionModel``: a plain function as the client's transport, with no global registration."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from debatecode.config import LLMSettings
from debatecode.errors import ModelError, ModelRequestError, ModelTransientError, UnknownModelError
from debatecode.llm import FunctionModel, LLMClient, Message, registered_providers, registered_scripted

HELLO: list[Message] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


async def test_a_sync_function_answers_without_registering_anything(fast_settings: LLMSettings) -> None:
    providers_before, scripted_before = registered_providers(), registered_scripted()
    seen: list[list[Message]] = []

    def fn(messages: list[Message]) -> str:
        seen.append(messages)
        return "def add(a, b):\n    return a + b"

    client = LLMClient(fast_settings, transport=FunctionModel(fn))
    reply = await client.complete("function/coder", HELLO)
    assert reply.text == "def add(a, b):\n    return a + b"
    assert (reply.model, reply.provider, reply.cost_usd, reply.usage_estimated) == (
        "function/coder",
        "function",
        0.0,
        True,
    )
    assert reply.completion_tokens == 8  # 31 characters, estimated
    assert seen == [HELLO]
    assert client.prompt_style("function/coder") == "chat"
    assert registered_providers() == providers_before
    assert registered_scripted() == scripted_before


async def test_an_async_function_gets_the_tags() -> None:
    calls: list[dict[str, str]] = []

    async def fn(messages: list[Message], tags: dict[str, str]) -> str:
        calls.append(tags)
        return f"{tags.get('agent')} in {tags.get('phase')}: {messages[-1]['content']}"

    client = LLMClient(transport=FunctionModel(fn))
    reply = await client.complete("function/debater", HELLO, tags={"agent": "agent-2", "phase": "critique"})
    assert reply.text == "agent-2 in critique: hello"
    assert calls == [{"agent": "agent-2", "phase": "critique"}]
    assert reply.tags == {"agent": "agent-2", "phase": "critique"}


async def test_lambdas_and_star_args_get_the_tags_when_they_can_take_them() -> None:
    client = LLMClient(transport=FunctionModel(lambda messages, tags: tags["kind"]))
    assert (await client.complete("function/x", HELLO, tags={"kind": "vote"})).text == "vote"
    client = LLMClient(transport=FunctionModel(lambda *args: str(len(args))))
    assert (await client.complete("function/x", HELLO)).text == "2"
    client = LLMClient(transport=FunctionModel(lambda messages: str(len(messages))))
    assert (await client.complete("function/x", HELLO)).text == "2"


async def test_any_model_string_that_resolves_is_answered_by_the_function() -> None:
    client = LLMClient(transport=FunctionModel(lambda messages: "mine"))
    assert (await client.complete("scripted/never-registered", HELLO)).text == "mine"
    local = await client.complete("local/gemma-3-270m", HELLO)
    assert (local.text, local.provider) == ("mine", "local")
    assert client.prompt_style("local/gemma-3-270m") == "completion"


async def test_function_models_need_a_function_model() -> None:
    with pytest.raises(UnknownModelError, match=r"FunctionModel\(fn\)"):
        await LLMClient().complete("function/coder", HELLO)
    with pytest.raises(UnknownModelError, match="`function/` needs a name"):
        await LLMClient(transport=FunctionModel(lambda m: "x")).complete("function/", HELLO)


async def test_the_function_sees_a_copy_of_the_messages() -> None:
    def fn(messages: list[Message]) -> str:
        messages[0]["content"] = "changed"
        messages.clear()
        return "ok"

    original: list[Message] = [{"role": "user", "content": "keep me"}]
    await LLMClient(transport=FunctionModel(fn)).complete("function/x", original)
    assert original == [{"role": "user", "content": "keep me"}]


async def test_errors_from_the_function(fast_settings: LLMSettings) -> None:
    attempts = 0

    def flaky(messages: list[Message]) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ModelTransientError("busy", model="function/x", reason="rate_limit")
        return "after a retry"

    client = LLMClient(fast_settings, transport=FunctionModel(flaky))
    assert (await client.complete("function/x", HELLO)).text == "after a retry"
    assert attempts == 2

    def broken(messages: list[Message]) -> str:
        raise KeyError("oops")

    with pytest.raises(ModelError, match="KeyError"):
        await LLMClient(fast_settings, transport=FunctionModel(broken)).complete("function/x", HELLO)

    with pytest.raises(ModelRequestError, match="returned int, not the reply text"):
        await LLMClient(fast_settings, transport=FunctionModel(lambda m: 3)).complete("function/x", HELLO)  # type: ignore[arg-type]


def test_repr_names_the_function() -> None:
    def my_model(messages: list[Message]) -> str:
        return ""

    assert "my_model" in repr(FunctionModel(my_model))


def test_function_models_never_import_litellm() -> None:
    code = textwrap.dedent(
        """
        import asyncio, sys
        from debatecode.llm import FunctionModel, LLMClient
        client = LLMClient(transport=FunctionModel(lambda messages, tags: "hi " + tags["agent"]))
        reply = asyncio.run(client.complete("function/x", [{"role": "user", "content": "hi"}], tags={"agent": "a"}))
        assert reply.text == "hi a", reply.text
        assert "litellm" not in sys.modules, "a function model imported litellm"
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
