"""``LLMClient``: the one gateway for every model call.

A call goes ``LLMClient.complete`` → budget check (the client's ``token_budget``, or
a per-session ``TokenBudget``) → ``Transport`` (with retries) → usage and cost
recorded. The default transport, ``ModelRouter``, dispatches on the resolved
model's ``kind`` to the provider registered under that name
(``debatecode.llm.providers``):

- ``scripted/<name>`` and ``scripted:<file.yaml>`` answer in-process and never import litellm;
- ``local/<name>`` runs llama.cpp in-process through litellm's custom-provider hook;
- ``function/<name>`` is answered by a ``FunctionModel`` passed as the transport;
- everything else is a litellm model string and goes over the network.

Network requests pass one guard, ``ALLOW_MODEL_REQUESTS`` (switched off under
pytest; tests opt in with the ``allow_model_requests`` fixture). Third-party
exceptions are translated into ``debatecode.errors`` here and never leak.

Retried (up to ``llm.max_retries`` times, with jittered exponential backoff):
rate limits, server errors (5xx), timeouts, connection errors, cut-off or
malformed replies and replies without choices. The n-th wait is drawn from
``[d, 1.5 d]`` with ``d = retry_base_delay_s * 2**(n-1)`` (capped at
``MAX_BACKOFF_S``), and is never shorter than the provider's ``Retry-After``
(or ``retry-after-ms``), honoured up to ``MAX_RETRY_AFTER_S``. Never retried:
authentication and permission errors and a missing API key (``ModelAuthError``;
litellm raises a missing key as a 500 or a connection error, so it is told
apart by its words before any retry), bad requests, unknown models,
context-window overflows and requests the client refused to send
(``ModelRequestError``). Only the
attempt that succeeds is counted in the usage totals.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import os
import random
import re
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NoReturn, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from debatecode.errors import (
    BudgetExceeded,
    DebatecodeError,
    ModelAuthError,
    ModelError,
    ModelRequestError,
    ModelRequestsDisabled,
    ModelTransientError,
    ModelUnreachable,
    UnknownModelError,
)
from debatecode.llm.budget import TokenBudget
from debatecode.llm.local import LOCAL_MODELS
from debatecode.llm.providers import KNOWN_PREFIXES, known_prefixes, match_provider, provider, register_provider
from debatecode.llm.scripted import load_script_or_raise, registered_or_raise
from debatecode.llm.settings import LLMSettings
from debatecode.llm.tokens import context_window, count_tokens, fit_messages
from debatecode.llm.transport import (
    Completion,
    CompletionRequest,
    RawCompletion,
    ResolvedModel,
    Transport,
    UsageTotals,
)
from debatecode.llm.types import CodeReply, Message, PromptStyle, estimate_tokens

__all__ = [
    "ALLOW_MODEL_REQUESTS",
    "KNOWN_PREFIXES",
    "MAX_BACKOFF_S",
    "MAX_RETRY_AFTER_S",
    "BatchSender",
    "Completion",
    "CompletionRequest",
    "LLMClient",
    "LiteLLMTransport",
    "LocalTransport",
    "Message",
    "ModelRouter",
    "PromptStyle",
    "RawCompletion",
    "ResolvedModel",
    "TokenBudget",
    "Transport",
    "UsageTotals",
    "batch_sender",
    "estimate_tokens",
    "resolve_model",
    "retry_after_s",
    "validate_model",
]

logger = logging.getLogger(__name__)


def _env_allows_requests() -> bool:
    value = os.environ.get("DEBATECODE_ALLOW_MODEL_REQUESTS", "1").strip().lower()
    return value not in {"0", "false", "no", "off"}


ALLOW_MODEL_REQUESTS: bool = _env_allows_requests()
"""Whether network models may be called. ``DEBATECODE_ALLOW_MODEL_REQUESTS=0`` (set under pytest) turns it off."""

MAX_BACKOFF_S = 60.0
"""The longest backoff between two attempts (unless ``retry_base_delay_s`` is longer still)."""
MAX_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` honoured; a provider asking for more is retried after this long."""


# --- model strings ------------------------------------------------------------------------------


def resolve_model(model: str) -> ResolvedModel:
    """Parse a model string: the registered provider whose prefix starts it, else a litellm model.

    Network model strings are checked with litellm (imported on demand). Whether a
    ``scripted/<name>`` is registered, or a script file parses, is checked by
    ``validate_model`` and at call time, not here.

    Raises:
        UnknownModelError: empty name, unknown ``local/`` model, or a string litellm has no provider for.
    """
    spec = match_provider(model)
    if spec is not None and spec.prefix is not None:
        name = model.removeprefix(spec.prefix)
        problem = spec.refusal(name)
        if problem:
            raise UnknownModelError(model, known_prefixes(), problem)
        return ResolvedModel(
            kind=spec.name,
            provider=spec.reported,
            name=name,
            prompt_style_default=spec.style(name),
            code_reply_default=spec.code_reply(name),
        )
    litellm = _import_litellm()
    try:
        name, litellm_provider, _key, _base = litellm.get_llm_provider(model)
    except Exception as exc:
        raise UnknownModelError(model, known_prefixes(), "litellm knows no provider for it") from exc
    return ResolvedModel(
        kind="litellm",
        provider=str(litellm_provider),
        name=str(name),
        prompt_style_default=provider("litellm", model=model).prompt_style,
    )


def validate_model(model: str) -> ResolvedModel:
    """``resolve_model`` plus the checks that need the outside world: registration and script files.

    Raises:
        UnknownModelError: as ``resolve_model``; also an unregistered ``scripted/<name>``
            (listing the registered names) or a missing or malformed script file (naming file and line).
    """
    resolved = resolve_model(model)
    if resolved.kind == "scripted":
        registered_or_raise(model, resolved.name)
    elif resolved.kind == "scripted_file":
        load_script_or_raise(model, Path(resolved.name))
    return resolved


# --- the default transport ----------------------------------------------------------------------


class ModelRouter:
    """The default ``Transport``: sends each request to the provider named by ``request.resolved.kind``.

    Each provider's transport is made by its registered factory on the router's first
    request for it, and kept (so script files are loaded once per router, hence once
    per client, and keep their reply state there). ``aclose`` closes and forgets them.
    """

    def __init__(self) -> None:
        self._transports: dict[str, Transport] = {}
        self._lock = threading.Lock()

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Send one request.

        Raises:
            UnknownModelError: no provider of that kind, an unregistered scripted name or a bad script file.
            ScriptExhausted: a scripted model has no reply left.
            ModelRequestsDisabled: a network model while ``ALLOW_MODEL_REQUESTS`` is off.
            ModelError: and its subclasses, translated from litellm.
        """
        return await self.transport(request.resolved.kind, model=request.model)(request)

    def transport(self, kind: str, *, model: str | None = None) -> Transport:
        """This router's transport for provider ``kind``, made on first use.

        Raises:
            UnknownModelError: no provider is registered as ``kind``.
        """
        with self._lock:
            transport = self._transports.get(kind)
            if transport is None:
                transport = self._transports[kind] = provider(kind, model=model).factory()
            return transport

    async def aclose(self) -> None:
        """Close every transport made so far (those that have an ``aclose``) and forget them.

        A later request makes new ones.
        """
        with self._lock:
            transports = list(self._transports.values())
            self._transports.clear()
        await _close_all(transports)


async def _close_all(transports: list[Any]) -> None:
    errors: list[BaseException] = []
    for transport in transports:
        close = getattr(transport, "aclose", None)
        if close is None:
            continue
        try:
            await close()
        except Exception as exc:
            errors.append(exc)
    if errors:
        raise errors[0]


@register_provider("litellm")
class LiteLLMTransport:
    """Provider ``litellm``: network models (``openai/...``, ``ollama/...``, ...), through litellm.

    Model strings no other provider's prefix matches resolve to it. Requests are refused
    while ``ALLOW_MODEL_REQUESTS`` is off.
    """

    network = True
    """Whether requests go over the network (guarded, priced, sent to ``api_base``)."""

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Send one request through ``litellm.acompletion``.

        Raises:
            ModelRequestsDisabled: a network model while ``ALLOW_MODEL_REQUESTS`` is off.
            ModelError: and its subclasses, translated from litellm.
        """
        network = self.network
        if network and not ALLOW_MODEL_REQUESTS:
            raise ModelRequestsDisabled(
                f"refusing to call network model {request.model!r}: model requests are disabled "
                "(DEBATECODE_ALLOW_MODEL_REQUESTS=0, as under pytest). Tests opt in with the "
                "`allow_model_requests` fixture; use `scripted/...` or `local/...` models otherwise.",
                model=request.model,
            )
        litellm = _import_litellm()
        try:
            response = await litellm.acompletion(**self._kwargs(litellm, request))
        except Exception as exc:
            _raise_translated(exc, request.model)
        if not getattr(response, "choices", None):
            # Seen under load and from content filters: a fault of the provider, worth another attempt.
            raise ModelTransientError("the provider answered with no choices", model=request.model)
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return RawCompletion(
            text=choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            finish_reason=choice.finish_reason,
            cost_usd=_response_cost(response) if network else 0.0,
        )

    def _kwargs(self, litellm: Any, request: CompletionRequest) -> dict[str, Any]:
        """``litellm.acompletion``'s arguments for ``request``."""
        network = self.network
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "timeout": request.timeout_s,
            "num_retries": 0,  # LLMClient retries; litellm must not retry as well
        }
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if network and request.api_base:
            kwargs["api_base"] = request.api_base
        if not network:
            from debatecode.llm.local import STOP_METADATA_KEY
            from debatecode.llm.local import register_provider as register_local_provider

            register_local_provider(litellm)
            if request.stop:
                kwargs["metadata"] = {STOP_METADATA_KEY: list(request.stop)}
        return kwargs


def _check_local(name: str) -> str | None:
    if name in LOCAL_MODELS:
        return None
    known = ", ".join(f"local/{n}" for n in LOCAL_MODELS)
    return f"no embedded model of that name; known: {known}"


def _local_style(name: str) -> PromptStyle:
    return LOCAL_MODELS[name].prompt_style


def _local_code_reply(name: str) -> CodeReply:
    return LOCAL_MODELS[name].code_reply


@register_provider(
    "local",
    prefix="local/",
    prompt_style="completion",
    check=_check_local,
    style_of=_local_style,
    code_reply_of=_local_code_reply,
)
class LocalTransport(LiteLLMTransport):
    """Provider ``local``: the embedded llama.cpp models, in-process, through litellm's custom-provider hook.

    Never a network request; the cost is 0. The model itself is loaded once per process and
    shared by every client (see ``debatecode.llm.local``), so closing a client leaves it loaded.
    """

    network = False

    async def complete_batch(self, request: CompletionRequest, seeds: Sequence[int]) -> list[RawCompletion]:
        """``len(seeds)`` samples of ``request`` in one batched decode: litellm's ``n``, which the local handler honours.

        Each reports the prompt's tokens (evaluated once) and its own completion tokens.

        Raises:
            ModelError: and its subclasses (see ``debatecode.llm.local_batch.generate_local_batch``).
        """
        from debatecode.llm.local import SEEDS_METADATA_KEY

        litellm = _import_litellm()
        kwargs = self._kwargs(litellm, request)
        kwargs["n"] = len(seeds)
        kwargs["metadata"] = {**kwargs.get("metadata", {}), SEEDS_METADATA_KEY: list(seeds)}
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as exc:
            _raise_translated(exc, request.model)
        choices = list(getattr(response, "choices", None) or [])
        if len(choices) != len(seeds):
            raise ModelError(f"asked for {len(seeds)} choices, got {len(choices)}", model=request.model)
        usage = getattr(response, "usage", None)
        return [
            RawCompletion(
                text=choice.message.content or "",
                prompt_tokens=getattr(usage, "prompt_tokens", None),
                completion_tokens=(choice.message.provider_specific_fields or {}).get("completion_tokens"),
                finish_reason=choice.finish_reason,
                cost_usd=0.0,
            )
            for choice in choices
        ]


# --- the client ---------------------------------------------------------------------------------


class LLMClient:
    """Calls models, enforces the token budget, retries transient failures, records usage.

    Share one client between agents (and sessions): its ``usage`` and ``calls`` cover
    every call it made. The budget is either the client's ``token_budget`` (over all its
    calls) or a ``TokenBudget`` passed to each call (one per session). Safe to use from
    concurrent tasks. ``aclose()`` (or ``async with``) closes what its transport holds.
    """

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        token_budget: int | None = None,
        transport: Transport | None = None,
    ) -> None:
        self.settings = settings or LLMSettings()
        self.token_budget = token_budget
        self.usage = UsageTotals()
        self.calls: list[Completion] = []
        self._transport: Transport = transport or ModelRouter()
        self._resolved: dict[str, ResolvedModel] = {}
        self._lock = threading.Lock()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close what the transport holds: ``transport.aclose()`` when it has one, else nothing.

        The default ``ModelRouter`` closes each provider transport it made (a script file's
        replay state is dropped). The embedded ``local/`` model is shared by every client of
        the process and stays loaded. The client stays usable: a later call reopens what it needs.
        """
        await _close_all([self._transport])

    def resolve(self, model: str) -> ResolvedModel:
        """``resolve_model``, cached per client.

        Raises:
            UnknownModelError: see ``resolve_model``.
        """
        if model not in self._resolved:
            self._resolved[model] = resolve_model(model)
        return self._resolved[model]

    def prompt_style(self, model: str) -> PromptStyle:
        """The prompt style for ``model``: the setting, or the model's default when it is ``auto``.

        Raises:
            UnknownModelError: see ``resolve_model``.
        """
        if self.settings.prompt_style != "auto":
            return self.settings.prompt_style
        return self.resolve(model).prompt_style_default

    def code_reply(self, model: str) -> CodeReply:
        """How a chat prompt asks ``model`` for code: the setting, or the model's default when it is ``auto``.

        Raises:
            UnknownModelError: see ``resolve_model``.
        """
        if self.settings.code_reply != "auto":
            return self.settings.code_reply
        return self.resolve(model).code_reply_default

    @property
    def remaining_tokens(self) -> int | None:
        """Tokens left in the budget, or None without a budget."""
        if self.token_budget is None:
            return None
        return max(0, self.token_budget - self.usage.total_tokens)

    async def complete(
        self,
        model: str,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        stop: list[str] | None = None,
        tags: dict[str, str] | None = None,
        budget: TokenBudget | None = None,
    ) -> Completion:
        """Call ``model`` once (retrying transient failures) and record the usage.

        ``max_tokens`` and ``temperature`` default to the settings; ``max_tokens`` is
        capped at the tokens left in the budget (calls running concurrently each see
        the budget as it was when they started, so together they may overshoot it by
        their completions). The budget is ``budget`` when given (the call is charged to
        it, and the client's ``token_budget`` is ignored), else the client's
        ``token_budget``; either way the call counts in ``usage`` and ``calls``. ``tags`` describe the call
        (``agent``, ``phase``, ``round``, ``kind``, ``role``); scripted models match
        replies on them and they are kept on the ``Completion``.

        When the model's context window is known (``llm.tokens.context_window``), a prompt that would
        not leave room for ``max_tokens`` is first cut down by ``llm.tokens.fit_messages``: the cut is
        logged as a warning and listed in ``Completion.dropped``. Token counts the transport does not
        report are counted by ``llm.tokens.count_tokens``.

        Raises:
            UnknownModelError: the model string names no model.
            BudgetExceeded: the budget was already spent before this call.
            ModelRequestsDisabled: a network model while requests are disabled (pytest).
            ModelUnreachable: connection errors or timeouts persisted through every retry.
            ModelAuthError: the provider rejected the credentials (never retried).
            ModelRequestError: the provider rejected the request (never retried), or the prompt cannot be
                cut to fit the model's context window.
            ScriptExhausted: a scripted model has no reply for these tags.
            ModelError: rate limits or server errors persisted through every retry, or any other failure.
        """
        resolved = self.resolve(model)
        reply_tokens = self._reserve(max_tokens if max_tokens is not None else self.settings.max_tokens, budget)
        messages, dropped = await self._fit(model, messages, reply_tokens)
        request = CompletionRequest(
            model=model,
            resolved=resolved,
            messages=messages,
            max_tokens=reply_tokens,
            temperature=temperature if temperature is not None else self.settings.temperature,
            seed=seed,
            stop=stop,
            tags=dict(tags or {}),
            api_base=self.settings.api_base,
            timeout_s=self.settings.request_timeout_s,
        )
        started = time.perf_counter()
        raw = await self._send_with_retries(request)
        completion = self._record(request, raw, time.perf_counter() - started, dropped)
        if budget is not None:
            budget.charge(completion)
        return completion

    def can_batch(self, model: str) -> bool:
        """Whether ``complete_n`` samples ``model``'s completions in one batched call (``local/`` models)."""
        return batch_sender(self._transport, self.resolve(model), model) is not None

    async def complete_n(
        self,
        model: str,
        messages: list[Message],
        n: int,
        *,
        seeds: Sequence[int] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        tags: dict[str, str] | None = None,
        budget: TokenBudget | None = None,
    ) -> list[Completion]:
        """``n`` completions of one prompt (drafts), completion ``i`` sampled with ``seeds[i]`` (default ``i``).

        A provider whose transport has ``complete_batch`` (``local/``) samples them in one batched
        decode: the prompt is evaluated once and charged once, to the first completion (the others
        report 0 prompt tokens; each reports its own completion tokens and ``batch_size=n``), and each
        draft's ``max_tokens`` is capped at an ``n``-th of the tokens left in the budget. Any other
        model gets ``n`` calls of ``complete``, one after another. Arguments and errors as ``complete``.

        Raises:
            ValueError: ``n`` < 1 or fewer ``seeds`` than ``n``.
        """
        seeds = list(range(n)) if seeds is None else list(seeds)[:n]
        if n < 1 or len(seeds) < n:
            raise ValueError(f"n drafts need n >= 1 and n seeds; got n={n} and {len(seeds)} seeds")
        resolved = self.resolve(model)
        send = batch_sender(self._transport, resolved, model) if n > 1 else None
        if send is None:
            return [
                await self.complete(
                    model,
                    messages,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=seed,
                    stop=stop,
                    tags=tags,
                    budget=budget,
                )
                for seed in seeds
            ]
        wanted = max_tokens if max_tokens is not None else self.settings.max_tokens
        reply_tokens = max(1, self._reserve(wanted * n, budget) // n)
        messages, dropped = await self._fit(model, messages, reply_tokens)
        request = CompletionRequest(
            model=model,
            resolved=resolved,
            messages=messages,
            max_tokens=reply_tokens,
            temperature=temperature if temperature is not None else self.settings.temperature,
            seed=seeds[0],
            stop=stop,
            tags=dict(tags or {}),
            api_base=self.settings.api_base,
            timeout_s=self.settings.request_timeout_s,
        )
        started = time.perf_counter()
        raws = await self._retrying(request, lambda: _send_batch(send, request, seeds))
        latency_s = time.perf_counter() - started
        completions = [
            self._record(
                request.model_copy(update={"seed": seed}),
                raw if i == 0 else raw.model_copy(update={"prompt_tokens": 0}),
                latency_s,
                dropped,
                batch_size=n,
            )
            for i, (seed, raw) in enumerate(zip(seeds, raws, strict=True))
        ]
        if budget is not None:
            for completion in completions:
                budget.charge(completion)
        return completions

    async def _fit(
        self, model: str, messages: list[Message], reply_tokens: int
    ) -> tuple[list[Message], tuple[str, ...]]:
        """The messages cut to fit the model's context window (when it has a known one), and what was dropped."""
        if context_window(model) is None:
            return messages, ()
        # Counting a local prompt waits for the model's lock (a generation may hold it): not on the event loop.
        fitted = await asyncio.to_thread(fit_messages, model, messages, reply_tokens)
        for note in fitted.dropped:
            logger.warning("%s", note)
        return fitted.messages, tuple(fitted.dropped)

    def _reserve(self, max_tokens: int, budget: TokenBudget | None) -> int:
        if budget is not None:
            return budget.reserve(max_tokens)
        if self.token_budget is None:
            return max_tokens
        with self._lock:
            used = self.usage.total_tokens
        if used >= self.token_budget:
            raise BudgetExceeded(used, self.token_budget)
        return min(max_tokens, self.token_budget - used)

    async def _send_with_retries(self, request: CompletionRequest) -> RawCompletion:
        return await self._retrying(request, lambda: self._send_once(request))

    async def _retrying(self, request: CompletionRequest, send: Callable[[], Awaitable[_T]]) -> _T:
        attempts = self.settings.max_retries + 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=_backoff(self.settings.retry_base_delay_s),
            retry=retry_if_exception_type(ModelTransientError),
            before_sleep=_log_retry(request.model, attempts),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    result = await send()
        except ModelTransientError as exc:
            raise _exhausted(exc, request, attempts) from exc
        return result

    async def _send_once(self, request: CompletionRequest) -> RawCompletion:
        try:
            return await self._transport(request)
        except DebatecodeError:
            raise
        except Exception as exc:
            _raise_translated(exc, request.model)

    def _record(
        self,
        request: CompletionRequest,
        raw: RawCompletion,
        latency_s: float,
        dropped: tuple[str, ...] = (),
        *,
        batch_size: int = 1,
    ) -> Completion:
        estimated = raw.prompt_tokens is None or raw.completion_tokens is None
        prompt_tokens = raw.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = count_tokens(request.model, request.messages)
        completion_tokens = raw.completion_tokens
        if completion_tokens is None:
            completion_tokens = count_tokens(request.model, raw.text)
        cost = raw.cost_usd
        if cost is None:
            cost = (
                _token_cost(request.model, prompt_tokens, completion_tokens)
                if request.resolved.kind == "litellm"
                else 0.0
            )
        completion = Completion(
            text=raw.text,
            model=request.model,
            provider=request.resolved.provider,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            latency_s=latency_s,
            usage_estimated=estimated,
            finish_reason=raw.finish_reason or "stop",
            tags=request.tags,
            dropped=dropped,
            batch_size=batch_size,
        )
        with self._lock:
            self.usage.add(completion)
            self.calls.append(completion)
        return completion


_T = TypeVar("_T")

BatchSender = Callable[[CompletionRequest, Sequence[int]], Awaitable[list[RawCompletion]]]
"""A transport's ``complete_batch``: one request, one sample per seed, from one batched call."""


def batch_sender(transport: Transport, resolved: ResolvedModel, model: str) -> BatchSender | None:
    """The ``complete_batch`` of the transport that serves ``model`` (through a ``ModelRouter``), if it has one."""
    if isinstance(transport, ModelRouter):
        transport = transport.transport(resolved.kind, model=model)
    send: BatchSender | None = getattr(transport, "complete_batch", None)
    return send


async def _send_batch(send: BatchSender, request: CompletionRequest, seeds: Sequence[int]) -> list[RawCompletion]:
    try:
        return await send(request, seeds)
    except DebatecodeError:
        raise
    except Exception as exc:
        _raise_translated(exc, request.model)


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
    for link in _chain(exc):
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


# --- the litellm border ------------------------------------------------------------------------


def _import_litellm() -> Any:
    """litellm, imported on first need (about 4 s) without fetching its price map from the internet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List" banners printed on errors
    litellm.telemetry = False
    return litellm


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _network_reason(exc: BaseException) -> Literal["timeout", "connection"] | None:
    openai = sys.modules.get("openai")
    httpx = sys.modules.get("httpx")
    for link in _chain(exc):
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
    return any(_MISSING_KEY.search(str(link)) for link in _chain(exc))


def _client_side(exc: BaseException, openai: Any) -> bool:
    """Whether the first error in ``exc``'s chain is openai's base ``OpenAIError``: the client refused to send.

    The openai SDK raises its base class only for problems found before any request (no key, bad
    options); a server's answer or a network failure is always a subclass (``APIError``).
    """
    innermost = list(_chain(exc))[-1]
    return type(innermost) is openai.OpenAIError


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def translate_error(exc: BaseException, model: str) -> DebatecodeError:
    """Map a litellm, openai, httpx or OS exception to ``debatecode.errors``.

    A ``DebatecodeError`` found in the exception's chain (raised inside the local
    provider and wrapped by litellm) is returned as it is.
    """
    for link in _chain(exc):
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


def _raise_translated(exc: BaseException, model: str) -> NoReturn:
    error = translate_error(exc, model)
    if error is exc or any(link is error for link in _chain(exc)):
        raise error
    raise error from exc


def _response_cost(response: Any) -> float:
    """The cost of a litellm response in USD, or 0.0 when litellm has no price for the model."""
    litellm = _import_litellm()
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception as exc:
        logger.debug("no price for %s: %s", getattr(response, "model", "?"), exc)
        return 0.0


def _token_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """The cost of a call from its token counts, or 0.0 when litellm has no price for the model."""
    litellm = _import_litellm()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception as exc:
        logger.debug("no price for %s: %s", model, exc)
        return 0.0
    return float(prompt_cost + completion_cost)
