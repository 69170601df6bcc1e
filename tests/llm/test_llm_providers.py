"""Providers: the registry ``ModelRouter`` dispatches through, and the client's lifecycle (``aclose``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_fakes import FakeTransport

from debatecode.config import LLMSettings
from debatecode.errors import UnknownModelError
from debatecode.llm import (
    KNOWN_PREFIXES,
    CompletionRequest,
    LLMClient,
    Message,
    RawCompletion,
    provider,
    register_provider,
    registered_providers,
    resolve_model,
    unregister_provider,
)
from debatecode.llm.client import LiteLLMTransport, LocalTransport, ModelRouter
from debatecode.llm.function import FunctionTransport
from debatecode.llm.providers import known_prefixes
from debatecode.llm.scripted import ScriptedTransport, ScriptFileTransport

HELLO: list[Message] = [{"role": "user", "content": "hello"}]


class EchoTransport:
    """Answers with the last message and the model name; counts instances and closes."""

    made = 0

    def __init__(self) -> None:
        type(self).made += 1
        self.requests: list[CompletionRequest] = []
        self.closed = 0

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        self.requests.append(request)
        return RawCompletion(text=f"{request.resolved.name}: {request.messages[-1]['content']}")

    async def aclose(self) -> None:
        self.closed += 1


@pytest.fixture
def echo() -> type[EchoTransport]:
    EchoTransport.made = 0
    return EchoTransport


def test_the_built_ins_are_registered() -> None:
    assert {"function", "litellm", "local", "scripted", "scripted_file"} <= set(registered_providers())
    router = ModelRouter()
    assert isinstance(router.transport("litellm"), LiteLLMTransport)
    assert isinstance(router.transport("local"), LocalTransport)
    assert isinstance(router.transport("scripted"), ScriptedTransport)
    assert isinstance(router.transport("scripted_file"), ScriptFileTransport)
    assert isinstance(router.transport("function"), FunctionTransport)
    assert provider("scripted_file").reported == "scripted"
    assert provider("local").prompt_style == "completion"


async def test_a_registered_provider_is_dispatched_to_and_unregistered_afterwards(
    echo: type[EchoTransport], fast_settings: LLMSettings
) -> None:
    register_provider("echo-test", prefix="echotest/", prompt_style="completion", label="echo")(echo)
    try:
        assert "echo-test" in registered_providers()
        assert "echotest/" in known_prefixes()
        resolved = resolve_model("echotest/parrot")
        assert (resolved.kind, resolved.provider, resolved.name, resolved.prompt_style_default) == (
            "echo-test",
            "echo",
            "parrot",
            "completion",
        )
        client = LLMClient(fast_settings)
        assert client.prompt_style("echotest/parrot") == "completion"
        first = await client.complete("echotest/parrot", HELLO, tags={"agent": "agent-1"})
        second = await client.complete("echotest/parrot", HELLO)
        assert (first.text, first.provider, first.tags) == ("parrot: hello", "echo", {"agent": "agent-1"})
        assert second.text == "parrot: hello"
        assert first.usage_estimated and first.cost_usd == 0.0
        assert echo.made == 1  # one transport per client, made on first use
        assert client.usage.calls == 2
        with pytest.raises(UnknownModelError, match="`echotest/` needs a name"):
            resolve_model("echotest/")
    finally:
        unregister_provider("echo-test")
    assert "echo-test" not in registered_providers()
    assert known_prefixes() == KNOWN_PREFIXES
    with pytest.raises(UnknownModelError, match="no provider registered as 'echo-test'"):
        provider("echo-test")
    with pytest.raises(UnknownModelError):
        await LLMClient(fast_settings).complete("echotest/parrot", HELLO)  # now a string litellm does not know


async def test_the_longest_prefix_wins_and_a_check_refuses_names(echo: type[EchoTransport]) -> None:
    register_provider("wide", prefix="nest/")(echo)
    register_provider("narrow", prefix="nest/deep/", check=lambda name: None if name == "ok" else "only ok")(echo)
    assert resolve_model("nest/deep/ok").kind == "narrow"
    assert resolve_model("nest/other").kind == "wide"
    with pytest.raises(UnknownModelError, match="only ok") as info:
        resolve_model("nest/deep/bad")
    assert "nest/" in info.value.known_prefixes and "nest/deep/" in info.value.known_prefixes
    assert info.value.known_prefixes[-1] == "(any litellm provider)"


async def test_a_built_in_can_be_replaced(echo: type[EchoTransport]) -> None:
    register_provider("scripted", prefix="scripted/")(echo)
    reply = await LLMClient().complete("scripted/not-registered-anywhere", HELLO)
    assert reply.text == "not-registered-anywhere: hello"


async def test_a_provider_without_prefix_is_reached_by_kind_only(echo: type[EchoTransport]) -> None:
    register_provider("by-kind")(echo)
    router = ModelRouter()
    resolved = resolve_model("function/x").model_copy(update={"kind": "by-kind"})
    request = CompletionRequest(model="function/x", resolved=resolved, messages=HELLO, max_tokens=8, temperature=0)
    assert (await router(request)).text == "x: hello"
    with pytest.raises(UnknownModelError, match="no provider registered as 'gone'"):
        await router(request.model_copy(update={"resolved": resolved.model_copy(update={"kind": "gone"})}))


def test_register_provider_refuses_empty_names_and_prefixes(echo: type[EchoTransport]) -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        register_provider("")(echo)
    with pytest.raises(ValueError, match="prefix must be non-empty"):
        register_provider("x", prefix="")(echo)


def test_unregistering_an_unknown_provider_is_a_no_op() -> None:
    before = registered_providers()
    unregister_provider("never-registered")
    assert registered_providers() == before


# --- lifecycle ------------------------------------------------------------------------------------


async def test_async_with_closes_the_transport() -> None:
    transport = EchoTransport()
    async with LLMClient(transport=transport) as client:
        assert (await client.complete("function/x", HELLO)).text == "x: hello"
        assert transport.closed == 0
    assert transport.closed == 1
    await client.aclose()  # idempotent from the client's side: it just closes again
    assert transport.closed == 2


async def test_aclose_is_a_no_op_for_transports_without_one() -> None:
    async with LLMClient(transport=FakeTransport()) as client:
        await client.complete("scripted/x", HELLO)
    await client.aclose()
    assert client.usage.calls == 1


async def test_the_router_closes_the_transports_it_made_and_makes_new_ones_after(echo: type[EchoTransport]) -> None:
    register_provider("closing", prefix="closing/")(echo)
    client = LLMClient()
    await client.complete("closing/a", HELLO)
    router = client._transport
    assert isinstance(router, ModelRouter)
    made = router.transport("closing")
    assert isinstance(made, EchoTransport)
    await client.aclose()
    assert made.closed == 1
    await client.complete("closing/a", HELLO)  # a closed client reopens what it needs
    assert echo.made == 2


async def test_closing_a_client_replays_script_files_from_the_start(tmp_path: Path) -> None:
    script = tmp_path / "two.yaml"
    script.write_text("replies: [first, second]\n")
    model = f"scripted:{script}"
    async with LLMClient() as client:
        assert (await client.complete(model, HELLO)).text == "first"
    assert (await client.complete(model, HELLO)).text == "first"
    assert (await client.complete(model, HELLO)).text == "second"


async def test_a_failing_close_still_closes_the_others() -> None:
    class Broken:
        async def __call__(self, request: CompletionRequest) -> RawCompletion:
            return RawCompletion(text="broken")

        async def aclose(self) -> None:
            raise OSError("cannot close")

    closing = EchoTransport()
    register_provider("broken", prefix="broken/")(Broken)
    register_provider("fine", prefix="fine/")(lambda: closing)
    client = LLMClient()
    await client.complete("broken/x", HELLO)
    await client.complete("fine/x", HELLO)
    with pytest.raises(OSError, match="cannot close"):
        await client.aclose()
    assert closing.closed == 1
