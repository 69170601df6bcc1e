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
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.retry"):
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


def _missing_key_errors() -> list[BaseException]:
    """What litellm raises when no API key is set, built as litellm chains them (probed with litellm 1.x)."""
    import openai
    from litellm.llms.openai.common_utils import OpenAIError as LiteLLMOpenAIError

    text = "Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` environment variable."
    openai_missing = litellm.InternalServerError(
        f"OpenAIException - {text}", llm_provider="openai", model=MODEL
    )  # openai/...: the SDK's base OpenAIError, wrapped as a 500
    inner = LiteLLMOpenAIError(status_code=500, message=text)
    inner.__cause__ = openai.OpenAIError(text)
    openai_missing.__cause__ = inner
    gemini_missing = litellm.APIConnectionError(  # gemini/...: a ValueError, wrapped as a connection error
        "Missing Gemini API key. Set the GEMINI_API_KEY or GOOGLE_API_KEY environment variable.",
        llm_provider="gemini",
        model="gemini/gemini-1.5-flash",
    )
    gemini_missing.__cause__ = ValueError("Missing Gemini API key.")
    anthropic_missing = litellm.AuthenticationError(  # anthropic/...: already a 401
        "Missing Anthropic API Key - A call is being made to anthropic but no key is set",
        llm_provider="anthropic",
        model="anthropic/claude-3-5-sonnet-20240620",
    )
    return [openai_missing, gemini_missing, anthropic_missing]


@pytest.mark.parametrize("error", _missing_key_errors(), ids=["openai-500", "gemini-connection", "anthropic-401"])
async def test_a_missing_api_key_is_an_auth_error_never_retried(error: BaseException) -> None:
    transport = FakeTransport([error, error, error])
    slow = LLMSettings(max_retries=3, retry_base_delay_s=30)  # a retry would take 30 s
    with pytest.raises(ModelAuthError) as info:
        await LLMClient(slow, transport=transport).complete(MODEL, PROMPT)
    assert transport.attempts == 1
    message = str(info.value)
    assert message.startswith(f"no credentials for {MODEL!r}") and "API_KEY" in message
    assert "server errors" not in message


async def test_a_client_side_openai_error_is_not_retried(fast_settings: LLMSettings) -> None:
    import openai

    error = litellm.InternalServerError("OpenAIException - bad client option", llm_provider="openai", model=MODEL)
    error.__cause__ = openai.OpenAIError("The base_url client option must be a URL")
    transport = FakeTransport([error, error])
    with pytest.raises(ModelRequestError, match="could not send the request"):
        await LLMClient(fast_settings, transport=transport).complete(MODEL, PROMPT)
    assert transport.attempts == 1


async def test_missing_openai_key_with_real_litellm_fails_at_once(
    allow_model_requests: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The reported case: no OPENAI_API_KEY. litellm raises it as a 500, which was retried for 44 s."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    settings = LLMSettings(max_retries=3, retry_base_delay_s=30)
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.retry"), pytest.raises(ModelAuthError) as info:
        await LLMClient(settings).complete(MODEL, PROMPT, max_tokens=5)
    assert "OPENAI_API_KEY" in str(info.value)
    assert not [r for r in caplog.records if r.name == "debatecode.llm.retry"]  # no retry was logged
    assert isinstance(info.value.__cause__, litellm.InternalServerError)  # the class litellm really raises


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
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.retry"):
        await LLMClient(settings, transport=FakeTransport(errors)).complete(MODEL, PROMPT)
    delays = [r.args[-1] for r in caplog.records if r.name == "debatecode.llm.retry"]  # type: ignore[index]
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
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.retry"), pytest.raises(ModelUnreachable) as info:
        await LLMClient(settings).complete(MODEL, PROMPT, max_tokens=5)
    message = str(info.value)
    assert MODEL in message
    assert api_base in message
    assert "server is running" in message and "API key" in message
    assert "after 2 attempts" in message
    assert len([r for r in caplog.records if r.name == "debatecode.llm.retry"]) == 1
    assert not any(type(e).__module__.startswith("litellm") for e in [info.value])
