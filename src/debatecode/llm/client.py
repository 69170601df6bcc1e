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
pytest; tests opt in with the ``allow_model_requests`` fixture), checked by
``LiteLLMTransport``, the one transport that sends them.

The parts a call goes through live in modules of their own, and their public
names are re-exported here:

- ``debatecode.llm.router``: model strings (``resolve_model``, ``validate_model``) and ``ModelRouter``;
- ``debatecode.llm.retry``: the retry policy (what is retried, the backoff, ``Retry-After``);
- ``debatecode.llm._litellm``: the litellm border (import on demand, error translation, prices).
  Third-party exceptions are translated into ``debatecode.errors`` there and never leak.

Only the attempt that succeeds is counted in the usage totals.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

from debatecode.errors import BudgetExceeded, DebatecodeError, ModelError, ModelRequestsDisabled, ModelTransientError
from debatecode.llm._litellm import import_litellm, raise_translated, response_cost, token_cost
from debatecode.llm.budget import TokenBudget
from debatecode.llm.local import LOCAL_MODELS
from debatecode.llm.providers import KNOWN_PREFIXES, register_provider
from debatecode.llm.retry import MAX_BACKOFF_S, MAX_RETRY_AFTER_S, retry_after_s, retrying
from debatecode.llm.router import BatchSender, ModelRouter, batch_sender, close_all, resolve_model, validate_model
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

_T = TypeVar("_T")


def _env_allows_requests() -> bool:
    value = os.environ.get("DEBATECODE_ALLOW_MODEL_REQUESTS", "1").strip().lower()
    return value not in {"0", "false", "no", "off"}


ALLOW_MODEL_REQUESTS: bool = _env_allows_requests()
"""Whether network models may be called. ``DEBATECODE_ALLOW_MODEL_REQUESTS=0`` (set under pytest) turns it off."""

# --- the network transports ---------------------------------------------------------------------


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
        litellm = import_litellm()
        try:
            response = await litellm.acompletion(**self._kwargs(litellm, request))
        except Exception as exc:
            raise_translated(exc, request.model)
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
            cost_usd=response_cost(response) if network else 0.0,
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
            from debatecode.llm.local_provider import STOP_METADATA_KEY
            from debatecode.llm.local_provider import register_provider as register_local_provider

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
        from debatecode.llm.local_provider import SEEDS_METADATA_KEY

        litellm = import_litellm()
        kwargs = self._kwargs(litellm, request)
        kwargs["n"] = len(seeds)
        kwargs["metadata"] = {**kwargs.get("metadata", {}), SEEDS_METADATA_KEY: list(seeds)}
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as exc:
            raise_translated(exc, request.model)
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
        await close_all([self._transport])

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
        return await retrying(
            request, send, max_retries=self.settings.max_retries, base_delay_s=self.settings.retry_base_delay_s
        )

    async def _send_once(self, request: CompletionRequest) -> RawCompletion:
        try:
            return await self._transport(request)
        except DebatecodeError:
            raise
        except Exception as exc:
            raise_translated(exc, request.model)

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
                token_cost(request.model, prompt_tokens, completion_tokens)
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


async def _send_batch(send: BatchSender, request: CompletionRequest, seeds: Sequence[int]) -> list[RawCompletion]:
    try:
        return await send(request, seeds)
    except DebatecodeError:
        raise
    except Exception as exc:
        raise_translated(exc, request.model)
