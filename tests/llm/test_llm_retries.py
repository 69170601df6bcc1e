"""Retries and error translation: what is retried, what is not, and what escapes."""

from __future__ import annotations

import logging
import socket

import httpx
import litellm
import pytest
from llm_fakes import FakeTransport

from debatecode.config import LLMSettings
from debatecode.errors import (
    ModelAuthError,
    ModelError,
    ModelRequestError,
    ModelTransientError,
    ModelUnreachable,
)
from debatecode.llm import LLMClient, Message

MODEL = "openai/gpt-4o-mini"
PROMPT: list[Message] = [{"role": "user", "content": "hi"}]
_RESPONSE_403 = httpx.Response(403, request=httpx.Request("POST", "http://127.0.0.1/v1"))


def transient_errors() -> list[BaseException]:
    return [
        litellm.RateLimitError("slow down", llm_provider="openai", model=MODEL),
        litellm.InternalServerError("boom", llm_provider="openai", model=MODEL),
        litellm.ServiceUnavailableError("busy", llm_provider="openai", model=MODEL),
        litellm.Timeout("took too long", model=MODEL, llm_provider="openai"),
        litellm.APIConnectionError("reset", llm_provider="openai", model=MODEL),
        ConnectionRefusedError("refused"),
    ]


@pytest.mark.parametrize("error", transient_errors(), ids=lambda e: type(e).__name__)
async def test_transient_errors_are_retried_until_success(
    error: BaseException, fast_settings: LLMSettings, caplog: pytest.LogCaptureFixture
) -> None:
    transport = FakeTransport([error, error])
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.client"):
        reply = await LLMClient(fast_settings, transport=transport).complete(MODEL, PROMPT)
    assert reply.text == "ok"
    assert transport.attempts == 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert all(MODEL in r.getMessage() for r in warnings)


def final_errors() -> list[tuple[BaseException, type[ModelError]]]:
    return [
        (litellm.AuthenticationError("bad key", llm_provider="openai", model=MODEL), ModelAuthError),
        (
            litellm.PermissionDeniedError("no access", llm_provider="openai", model=MODEL, response=_RESPONSE_403),
            ModelAuthError,
        ),
        (litellm.BadRequestError("bad", model=MODEL, llm_provider="openai"), ModelRequestError),
        (litellm.NotFoundError("no such model", model=MODEL, llm_provider="openai"), ModelRequestError),
        (litellm.ContextWindowExceededError("too long", model=MODEL, llm_provider="openai"), ModelRequestError),
    ]


@pytest.mark.parametrize(("error", "expected"), final_errors(), ids=lambda e: type(e).__name__)
async def test_auth_and_request_errors_are_never_retried(
    error: BaseException, expected: type[ModelError], fast_settings: LLMSettings
) -> None:
    transport = FakeTransport([error])
    with pytest.raises(expected) as info:
        await LLMClient(fast_settings, transport=transport).complete(MODEL, PROMPT)
    assert transport.attempts == 1
    assert info.value.__cause__ is error
    assert info.value.model == MODEL
    assert not type(info.value).__module__.startswith("litellm")


async def test_rate_limit_after_retries_is_a_model_error_not_unreachable(fast_settings: LLMSettings) -> None:
    errors = [litellm.RateLimitError("slow down", llm_provider="openai", model=MODEL) for _ in range(3)]
    transport = FakeTransport(errors)
    with pytest.raises(ModelError) as info:
        await LLMClient(fast_settings, transport=transport).complete(MODEL, PROMPT)
    assert type(info.value) is ModelError
    assert "rate limited after 3 attempts" in str(info.value)
    assert transport.attempts == fast_settings.max_retries + 1


async def test_timeouts_after_retries_are_unreachable(fast_settings: LLMSettings) -> None:
    errors = [litellm.Timeout("took too long", model=MODEL, llm_provider="openai") for _ in range(3)]
    with pytest.raises(ModelUnreachable) as info:
        await LLMClient(fast_settings, transport=FakeTransport(errors)).complete(MODEL, PROMPT)
    assert isinstance(info.value.__cause__, ModelTransientError)
    assert MODEL in str(info.value) and "timeout" in str(info.value)


async def test_backoff_doubles_from_the_base_delay_with_jitter(caplog: pytest.LogCaptureFixture) -> None:
    settings = LLMSettings(max_retries=3, retry_base_delay_s=0.01)
    errors = [litellm.InternalServerError("boom", llm_provider="openai", model=MODEL) for _ in range(3)]
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.client"):
        await LLMClient(settings, transport=FakeTransport(errors)).complete(MODEL, PROMPT)
    delays = [r.args[-1] for r in caplog.records if r.name == "debatecode.llm.client"]  # type: ignore[index]
    assert len(delays) == 3
    for delay, nominal in zip(delays, [0.01, 0.02, 0.04], strict=True):
        assert nominal <= delay <= 1.5 * nominal  # jittered over [d, 1.5 d]


async def test_unexpected_exceptions_become_model_errors_without_retry(fast_settings: LLMSettings) -> None:
    transport = FakeTransport([ValueError("weird")])
    with pytest.raises(ModelError) as info:
        await LLMClient(fast_settings, transport=transport).complete(MODEL, PROMPT)
    assert transport.attempts == 1
    assert "ValueError" in str(info.value)


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_closed_port_is_unreachable_after_retries_with_real_litellm(
    allow_model_requests: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-tests")
    api_base = f"http://127.0.0.1:{_closed_port()}/v1"
    settings = LLMSettings(api_base=api_base, max_retries=1, retry_base_delay_s=0.001, request_timeout_s=10)
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.client"), pytest.raises(ModelUnreachable) as info:
        await LLMClient(settings).complete(MODEL, PROMPT, max_tokens=5)
    message = str(info.value)
    assert MODEL in message
    assert api_base in message
    assert "server is running" in message and "API key" in message
    assert "after 2 attempts" in message
    assert len([r for r in caplog.records if r.name == "debatecode.llm.client"]) == 1
    assert not any(type(e).__module__.startswith("litellm") for e in [info.value])
