"""The retry policy of model calls: what is retried, how long to wait, and the error once attempts run out.

Retried (up to ``llm.max_retries`` times): ``ModelTransientError``, which the
litellm border (``_litellm.translate_error``) raises for rate limits, server
errors (5xx), timeouts and connection errors, and transports raise for cut-off
or malformed replies and replies without choices. Everything else is raised at
once.

The n-th wait is drawn from ``[d, 1.5 d]`` with ``d = retry_base_delay_s * 2**(n-1)``
(capped at ``MAX_BACKOFF_S``), and is never shorter than the provider's
``Retry-After`` (or ``retry-after-ms``), honoured up to ``MAX_RETRY_AFTER_S``.
Each retry is logged as a warning naming the model, the error and the wait.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from debatecode.errors import ModelError, ModelTransientError, ModelUnreachable
from debatecode.llm.transport import CompletionRequest

__all__ = ["MAX_BACKOFF_S", "MAX_RETRY_AFTER_S", "exception_chain", "retry_after_s", "retrying"]

logger = logging.getLogger(__name__)

MAX_BACKOFF_S = 60.0
"""The longest backoff between two attempts (unless ``retry_base_delay_s`` is longer still)."""
MAX_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` honoured; a provider asking for more is retried after this long."""

_T = TypeVar("_T")


async def retrying(
    request: CompletionRequest, send: Callable[[], Awaitable[_T]], *, max_retries: int, base_delay_s: float
) -> _T:
    """``send()``, attempted again on ``ModelTransientError`` up to ``max_retries`` times, with backoff.

    Raises:
        ModelUnreachable: connection errors or timeouts persisted through every attempt.
        ModelError: rate limits or server errors persisted through every attempt.
        Any other error of ``send``: at once, as it is.
    """
    attempts = max_retries + 1
    attempting = AsyncRetrying(
        stop=stop_after_attempt(attempts),
        wait=_backoff(base_delay_s),
        retry=retry_if_exception_type(ModelTransientError),
        before_sleep=_log_retry(request.model, attempts),
        reraise=True,
    )
    try:
        async for attempt in attempting:
            with attempt:
                result = await send()
    except ModelTransientError as exc:
        raise _exhausted(exc, request, attempts) from exc
    return result


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then its cause or context, and so on (each exception once)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _backoff(base_delay_s: float) -> Callable[[RetryCallState], float]:
    """The wait before the next attempt: jittered exponential backoff, never shorter than the ``Retry-After`` asked."""
    cap = max(MAX_BACKOFF_S, base_delay_s)

    def wait(state: RetryCallState) -> float:
        nominal = min(cap, base_delay_s * 2 ** (state.attempt_number - 1))
        # Jitter spreads the retries of concurrent calls that failed together over [d, 1.5 d].
        delay = min(cap, nominal * (1.0 + random.random() / 2))
        error = state.outcome.exception() if state.outcome is not None else None
        asked = retry_after_s(error) if error is not None else None
        if asked is not None:
            delay = max(delay, min(asked, MAX_RETRY_AFTER_S))
        return delay

    return wait


def retry_after_s(exc: BaseException) -> float | None:
    """The wait a failed response asked for, in seconds, or None when it asked for none.

    Read from the response headers found on the exception's chain (litellm, openai and
    httpx exceptions carry them): ``retry-after-ms`` (OpenAI's), else ``Retry-After`` as
    seconds or as an HTTP date. A date in the past is 0.
    """
    for link in exception_chain(exc):
        for headers in (
            getattr(link, "litellm_response_headers", None),
            getattr(link, "headers", None),
            getattr(getattr(link, "response", None), "headers", None),
        ):
            if headers is None or not hasattr(headers, "get"):
                continue
            millis = _seconds(headers.get("retry-after-ms") or headers.get("Retry-After-Ms"))
            if millis is not None:
                return millis / 1000
            seconds = _seconds(headers.get("retry-after") or headers.get("Retry-After"))
            if seconds is not None:
                return seconds
            date = _http_date_delay(headers.get("retry-after") or headers.get("Retry-After"))
            if date is not None:
                return date
    return None


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(str(value))
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _http_date_delay(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _log_retry(model: str, attempts: int) -> Callable[[RetryCallState], None]:
    def log(state: RetryCallState) -> None:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        logger.warning(
            "model %s: %s (attempt %s of %s); retrying in %.2fs",
            model,
            error,
            state.attempt_number,
            attempts,
            delay,
        )

    return log


def _exhausted(exc: ModelTransientError, request: CompletionRequest, attempts: int) -> ModelError:
    model = request.model
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if exc.reason in ("connection", "timeout"):
        where = request.api_base or "the provider's default URL"
        return ModelUnreachable(
            f"cannot reach model {model!r} after {tries} ({exc.reason}): {exc}. "
            f"Check that the server is running, that api_base ({where}) is right, "
            "that the API key is set, and the network; raise llm.request_timeout_s for slow servers.",
            model=model,
        )
    if exc.reason == "rate_limit":
        return ModelError(
            f"model {model!r} is still rate limited after {tries}: {exc}. "
            "Lower max_concurrency, wait, or raise llm.max_retries / llm.retry_base_delay_s.",
            model=model,
        )
    return ModelError(f"model {model!r} kept failing with server errors after {tries}: {exc}", model=model)
