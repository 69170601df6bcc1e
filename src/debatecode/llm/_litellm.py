"""The litellm border: litellm imported on demand, its exceptions translated, its prices read.

Third-party exceptions (litellm's, openai's, httpx's, the OS's) never leak past
``translate_error``: each becomes a ``debatecode.errors`` error, and those worth
another attempt become ``ModelTransientError`` (``debatecode.llm.retry`` retries
them). Never retried: authentication and permission errors and a missing API key
(``ModelAuthError``; litellm raises a missing key as a 500 or a connection error,
so it is told apart by its words before any retry), bad requests, unknown models,
context-window overflows and requests the client refused to send
(``ModelRequestError``).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
from typing import Any, Literal, NoReturn

from debatecode.errors import (
    DebatecodeError,
    ModelAuthError,
    ModelError,
    ModelRequestError,
    ModelTransientError,
)
from debatecode.llm.retry import exception_chain

__all__ = ["import_litellm", "raise_translated", "response_cost", "token_cost", "translate_error"]

logger = logging.getLogger(__name__)


def import_litellm() -> Any:
    """litellm, imported on first need (about 4 s) without fetching its price map from the internet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List" banners printed on errors
    litellm.telemetry = False
    return litellm


def _network_reason(exc: BaseException) -> Literal["timeout", "connection"] | None:
    openai = sys.modules.get("openai")
    httpx = sys.modules.get("httpx")
    for link in exception_chain(exc):
        if isinstance(link, TimeoutError) or (openai is not None and isinstance(link, openai.APITimeoutError)):
            return "timeout"
        if httpx is not None and isinstance(link, httpx.TimeoutException):
            return "timeout"
        if isinstance(link, (ConnectionError, socket.gaierror)):
            return "connection"
        if openai is not None and isinstance(link, openai.APIConnectionError):
            return "connection"
        if httpx is not None and isinstance(link, httpx.NetworkError):
            return "connection"
    return None


_MISSING_KEY = re.compile(
    r"missing credentials"
    r"|missing\b[^.]{0,40}\bapi[ _-]?key"
    r"|\bapi[ _-]?key\b[^.]{0,40}\b(?:is required|must be set|is not set)"
    r"|\b[A-Z][A-Z0-9_]*_API_KEY\b[^.]{0,20}\bis not set",
    re.IGNORECASE,
)
"""How litellm and the SDKs under it say that no API key was given (the request was never sent)."""


def _missing_credentials(exc: BaseException) -> bool:
    """Whether ``exc`` says no API key was given.

    litellm reports a missing key in many shapes: openai's own ``OpenAIError`` wrapped as an
    ``InternalServerError`` (status 500), Gemini's ``ValueError`` wrapped as an ``APIConnectionError``,
    Anthropic's ``AuthenticationError``. By class they look like server or connection errors, which are
    retried; only their words tell them apart.
    """
    return any(_MISSING_KEY.search(str(link)) for link in exception_chain(exc))


def _client_side(exc: BaseException, openai: Any) -> bool:
    """Whether the first error in ``exc``'s chain is openai's base ``OpenAIError``: the client refused to send.

    The openai SDK raises its base class only for problems found before any request (no key, bad
    options); a server's answer or a network failure is always a subclass (``APIError``).
    """
    innermost = list(exception_chain(exc))[-1]
    return type(innermost) is openai.OpenAIError


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def translate_error(exc: BaseException, model: str) -> DebatecodeError:
    """Map a litellm, openai, httpx or OS exception to ``debatecode.errors``.

    A ``DebatecodeError`` found in the exception's chain (raised inside the local
    provider and wrapped by litellm) is returned as it is.
    """
    for link in exception_chain(exc):
        if isinstance(link, DebatecodeError):
            return link
    detail = _short(exc)
    if _missing_credentials(exc):
        return ModelAuthError(
            f"no credentials for {model!r}: {detail}. Set the provider's API key variable named there "
            "(e.g. OPENAI_API_KEY), or use a model that needs none (local/..., scripted/...).",
            model=model,
        )
    openai = sys.modules.get("openai")
    if openai is not None:
        if _client_side(exc, openai):
            return ModelRequestError(
                f"the model client for {model!r} could not send the request: {detail}. "
                "Check the model's settings (api_base, API key variables).",
                model=model,
            )
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return ModelAuthError(
                f"the provider rejected the credentials for {model!r}: {detail}. "
                "Check the provider's API key variable (e.g. OPENAI_API_KEY) and its permissions.",
                model=model,
            )
        if isinstance(exc, openai.RateLimitError):
            return ModelTransientError(detail, model=model, reason="rate_limit")
        if isinstance(exc, (openai.BadRequestError, openai.NotFoundError, openai.UnprocessableEntityError)):
            return ModelRequestError(f"the provider rejected the request to {model!r}: {detail}", model=model)
    network = _network_reason(exc)
    if network is not None:
        return ModelTransientError(detail, model=model, reason=network)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status >= 500 or status == 429):
        return ModelTransientError(detail, model=model, reason="rate_limit" if status == 429 else "server_error")
    if isinstance(status, int) and 400 <= status < 500:
        return ModelRequestError(f"the provider rejected the request to {model!r} ({status}): {detail}", model=model)
    return ModelError(f"call to {model!r} failed: {type(exc).__name__}: {detail}", model=model)


def raise_translated(exc: BaseException, model: str) -> NoReturn:
    error = translate_error(exc, model)
    if error is exc or any(link is error for link in exception_chain(exc)):
        raise error
    raise error from exc


def response_cost(response: Any) -> float:
    """The cost of a litellm response in USD, or 0.0 when litellm has no price for the model."""
    litellm = import_litellm()
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception as exc:
        logger.debug("no price for %s: %s", getattr(response, "model", "?"), exc)
        return 0.0


def token_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """The cost of a call from its token counts, or 0.0 when litellm has no price for the model."""
    litellm = import_litellm()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception as exc:
        logger.debug("no price for %s: %s", model, exc)
        return 0.0
    return float(prompt_cost + completion_cost)
