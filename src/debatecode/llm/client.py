"""``LLMClient``: the one gateway for every model call.

A call goes ``LLMClient.complete`` → budget check → ``Transport`` (with
retries) → usage and cost recorded. The default transport, ``ModelRouter``,
routes by model string:

- ``scripted/<name>`` and ``scripted:<file.yaml>`` answer in-process and never import litellm;
- ``local/<name>`` runs llama.cpp in-process through litellm's custom-provider hook;
- everything else is a litellm model string and goes over the network.

Network requests pass one guard, ``ALLOW_MODEL_REQUESTS`` (switched off under
pytest; tests opt in with the ``allow_model_requests`` fixture). Third-party
exceptions are translated into ``debatecode.errors`` here and never leak.

Retried (with exponential backoff): rate limits, server errors (5xx),
timeouts and connection errors. Never retried: authentication and permission
errors (``ModelAuthError``), bad requests, unknown models and context-window
overflows (``ModelRequestError``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt, wait_exponential
from typing_extensions import TypedDict

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
from debatecode.llm.local import LOCAL_MODELS
from debatecode.llm.scripted import (
    ScriptedModel,
    ScriptFileError,
    load_script_file,
    lookup_scripted,
    registered_scripted,
)
from debatecode.llm.settings import LLMSettings

__all__ = [
    "ALLOW_MODEL_REQUESTS",
    "KNOWN_PREFIXES",
    "Completion",
    "CompletionRequest",
    "LLMClient",
    "Message",
    "ModelRouter",
    "RawCompletion",
    "ResolvedModel",
    "Transport",
    "UsageTotals",
    "resolve_model",
    "validate_model",
]

logger = logging.getLogger(__name__)


def _env_allows_requests() -> bool:
    value = os.environ.get("DEBATECODE_ALLOW_MODEL_REQUESTS", "1").strip().lower()
    return value not in {"0", "false", "no", "off"}


ALLOW_MODEL_REQUESTS: bool = _env_allows_requests()
"""Whether network models may be called. ``DEBATECODE_ALLOW_MODEL_REQUESTS=0`` (set under pytest) turns it off."""

KNOWN_PREFIXES: list[str] = [
    "local/",
    "scripted/",
    "scripted:",
    "openai/",
    "anthropic/",
    "ollama/",
    "hosted_vllm/",
    "gemini/",
    "mistral/",
    "groq/",
    "openrouter/",
    "(any litellm provider)",
]
"""Model-string prefixes shown when a model string is not recognised."""

PromptStyle = Literal["chat", "completion"]


class Message(TypedDict):
    """One chat message, as litellm and the OpenAI API take it."""

    role: Literal["system", "user", "assistant"]
    content: str


class Completion(BaseModel):
    """The result of one model call, with its usage and cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    model: str
    provider: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    """Wall time of the whole call, retries and backoff included."""
    usage_estimated: bool
    """True when the token counts are estimates (characters / 4), e.g. for scripted models."""
    finish_reason: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class UsageTotals(BaseModel):
    """Running totals over every call a client made."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, completion: Completion) -> None:
        """Count one finished call."""
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.cost_usd += completion.cost_usd
        self.calls += 1


class ResolvedModel(BaseModel):
    """What a model string names: which path serves it, and its default prompt style."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["litellm", "local", "scripted", "scripted_file"]
    provider: str
    name: str
    """Model name without the provider prefix (for ``scripted_file``: the file path)."""
    prompt_style_default: PromptStyle


class CompletionRequest(BaseModel):
    """One request as a ``Transport`` receives it; every default already filled in."""

    model_config = ConfigDict(frozen=True)

    model: str
    resolved: ResolvedModel
    messages: list[Message]
    max_tokens: int
    temperature: float
    seed: int | None = None
    stop: list[str] | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    api_base: str | None = None
    timeout_s: float = 120.0


class RawCompletion(BaseModel):
    """What a ``Transport`` returns. Token counts left ``None`` are estimated by the client."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    cost_usd: float | None = None


Transport = Callable[[CompletionRequest], Awaitable[RawCompletion]]
"""The I/O layer: sends one request. It raises ``debatecode.errors`` (``ModelTransientError`` for
failures worth retrying) or litellm/openai exceptions, which the client translates."""


# --- model strings ------------------------------------------------------------------------------


def resolve_model(model: str) -> ResolvedModel:
    """Parse a model string. Network model strings are checked with litellm (imported on demand).

    Whether a ``scripted/<name>`` is registered, or a script file parses, is checked by
    ``validate_model`` and at call time, not here.

    Raises:
        UnknownModelError: empty name, unknown ``local/`` model, or a string litellm has no provider for.
    """
    if model.startswith("scripted/"):
        name = model.removeprefix("scripted/")
        if not name:
            raise UnknownModelError(model, KNOWN_PREFIXES, "`scripted/` needs a name")
        return ResolvedModel(kind="scripted", provider="scripted", name=name, prompt_style_default="chat")
    if model.startswith("scripted:"):
        path = model.removeprefix("scripted:")
        if not path:
            raise UnknownModelError(model, KNOWN_PREFIXES, "`scripted:` needs a YAML file path")
        return ResolvedModel(kind="scripted_file", provider="scripted", name=path, prompt_style_default="chat")
    if model.startswith("local/"):
        name = model.removeprefix("local/")
        if name not in LOCAL_MODELS:
            known = ", ".join(f"local/{n}" for n in LOCAL_MODELS)
            raise UnknownModelError(model, KNOWN_PREFIXES, f"no embedded model of that name; known: {known}")
        return ResolvedModel(kind="local", provider="local", name=name, prompt_style_default="completion")
    litellm = _import_litellm()
    try:
        name, provider, _key, _base = litellm.get_llm_provider(model)
    except Exception as exc:
        raise UnknownModelError(model, KNOWN_PREFIXES, "litellm knows no provider for it") from exc
    return ResolvedModel(kind="litellm", provider=str(provider), name=str(name), prompt_style_default="chat")


def validate_model(model: str) -> ResolvedModel:
    """``resolve_model`` plus the checks that need the outside world: registration and script files.

    Raises:
        UnknownModelError: as ``resolve_model``; also an unregistered ``scripted/<name>``
            (listing the registered names) or a missing or malformed script file (naming file and line).
    """
    resolved = resolve_model(model)
    if resolved.kind == "scripted":
        _registered(model, resolved.name)
    elif resolved.kind == "scripted_file":
        _load_script(model, Path(resolved.name))
    return resolved


def _registered(model: str, name: str) -> ScriptedModel:
    scripted = lookup_scripted(name)
    if scripted is None:
        names = ", ".join(registered_scripted()) or "none"
        raise UnknownModelError(model, KNOWN_PREFIXES, f"no scripted model registered as {name!r}; registered: {names}")
    return scripted


def _load_script(model: str, path: Path) -> ScriptedModel:
    try:
        return load_script_file(path)
    except ScriptFileError as exc:
        raise UnknownModelError(model, KNOWN_PREFIXES, str(exc)) from exc


def estimate_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


# --- the default transport ----------------------------------------------------------------------


class ModelRouter:
    """The default ``Transport``: scripted models in-process, everything else through litellm.

    Script files are loaded once per router (so once per client) and keep their
    reply state there.
    """

    def __init__(self) -> None:
        self._scripts: dict[Path, ScriptedModel] = {}
        self._lock = threading.Lock()

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Send one request.

        Raises:
            UnknownModelError: unregistered scripted name or bad script file.
            ScriptExhausted: a scripted model has no reply left.
            ModelRequestsDisabled: a network model while ``ALLOW_MODEL_REQUESTS`` is off.
            ModelError: and its subclasses, translated from litellm.
        """
        resolved = request.resolved
        if resolved.kind in ("scripted", "scripted_file"):
            if resolved.kind == "scripted":
                scripted = _registered(request.model, resolved.name)
            else:
                scripted = self._script(request.model, Path(resolved.name))
            text, delay, error = scripted.choose(request.messages, request.tags, model=request.model)
            if delay:
                await asyncio.sleep(delay)
            if error is not None:
                raise error
            return RawCompletion(text=text)
        return await self._litellm(request)

    def _script(self, model: str, path: Path) -> ScriptedModel:
        key = path.resolve()
        with self._lock:
            if key not in self._scripts:
                self._scripts[key] = _load_script(model, path)
            return self._scripts[key]

    async def _litellm(self, request: CompletionRequest) -> RawCompletion:
        network = request.resolved.kind == "litellm"
        if network and not ALLOW_MODEL_REQUESTS:
            raise ModelRequestsDisabled(
                f"refusing to call network model {request.model!r}: model requests are disabled "
                "(DEBATECODE_ALLOW_MODEL_REQUESTS=0, as under pytest). Tests opt in with the "
                "`allow_model_requests` fixture; use `scripted/...` or `local/...` models otherwise.",
                model=request.model,
            )
        litellm = _import_litellm()
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
            from debatecode.llm.local import STOP_METADATA_KEY, register_provider

            register_provider(litellm)
            if request.stop:
                kwargs["metadata"] = {STOP_METADATA_KEY: list(request.stop)}
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as exc:
            _raise_translated(exc, request.model)
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return RawCompletion(
            text=choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            finish_reason=choice.finish_reason,
            cost_usd=_response_cost(response) if network else 0.0,
        )


# --- the client ---------------------------------------------------------------------------------


class LLMClient:
    """Calls models, enforces the token budget, retries transient failures, records usage.

    One client per debate session; share it between agents so the budget and
    totals cover the whole session. Safe to use from concurrent tasks.
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
    ) -> Completion:
        """Call ``model`` once (retrying transient failures) and record the usage.

        ``max_tokens`` and ``temperature`` default to the settings; ``max_tokens`` is
        capped at the tokens left in the budget (calls running concurrently each see
        the budget as it was when they started, so together they may overshoot it by
        their completions). ``tags`` describe the call
        (``agent``, ``phase``, ``round``, ``kind``, ``role``); scripted models match
        replies on them and they are kept on the ``Completion``.

        Raises:
            UnknownModelError: the model string names no model.
            BudgetExceeded: the budget was already spent before this call.
            ModelRequestsDisabled: a network model while requests are disabled (pytest).
            ModelUnreachable: connection errors or timeouts persisted through every retry.
            ModelAuthError: the provider rejected the credentials (never retried).
            ModelRequestError: the provider rejected the request (never retried).
            ScriptExhausted: a scripted model has no reply for these tags.
            ModelError: rate limits or server errors persisted through every retry, or any other failure.
        """
        resolved = self.resolve(model)
        request = CompletionRequest(
            model=model,
            resolved=resolved,
            messages=messages,
            max_tokens=self._reserve(max_tokens if max_tokens is not None else self.settings.max_tokens),
            temperature=temperature if temperature is not None else self.settings.temperature,
            seed=seed,
            stop=stop,
            tags=dict(tags or {}),
            api_base=self.settings.api_base,
            timeout_s=self.settings.request_timeout_s,
        )
        started = time.perf_counter()
        raw = await self._send_with_retries(request)
        return self._record(request, raw, time.perf_counter() - started)

    def _reserve(self, max_tokens: int) -> int:
        if self.token_budget is None:
            return max_tokens
        with self._lock:
            used = self.usage.total_tokens
        if used >= self.token_budget:
            raise BudgetExceeded(used, self.token_budget)
        return min(max_tokens, self.token_budget - used)

    async def _send_with_retries(self, request: CompletionRequest) -> RawCompletion:
        attempts = self.settings.max_retries + 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(
                multiplier=self.settings.retry_base_delay_s, max=max(60.0, self.settings.retry_base_delay_s)
            ),
            retry=retry_if_exception_type(ModelTransientError),
            before_sleep=_log_retry(request.model, attempts),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    raw = await self._send_once(request)
        except ModelTransientError as exc:
            raise _exhausted(exc, request, attempts) from exc
        return raw

    async def _send_once(self, request: CompletionRequest) -> RawCompletion:
        try:
            return await self._transport(request)
        except DebatecodeError:
            raise
        except Exception as exc:
            _raise_translated(exc, request.model)

    def _record(self, request: CompletionRequest, raw: RawCompletion, latency_s: float) -> Completion:
        estimated = raw.prompt_tokens is None or raw.completion_tokens is None
        prompt_tokens = raw.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = estimate_tokens("".join(m["content"] for m in request.messages))
        completion_tokens = raw.completion_tokens
        if completion_tokens is None:
            completion_tokens = estimate_tokens(raw.text)
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
        )
        with self._lock:
            self.usage.add(completion)
            self.calls.append(completion)
        return completion


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
    openai = sys.modules.get("openai")
    if openai is not None:
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
