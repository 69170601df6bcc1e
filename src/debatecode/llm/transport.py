"""The transport contract and the records of a call.

A ``Transport`` is any async callable ``(CompletionRequest) -> RawCompletion``.
``LLMClient`` fills in the ``CompletionRequest``, sends it through its transport
(with retries) and turns the ``RawCompletion`` into a ``Completion`` it counts in
``UsageTotals``. Providers (``debatecode.llm.providers``) are named factories of
transports; ``FunctionModel`` is a transport built from a plain function.

Re-exported by ``debatecode.llm.client`` and ``debatecode.llm``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field

from debatecode.llm.types import CodeReply, Message, PromptStyle

__all__ = [
    "Completion",
    "CompletionRequest",
    "RawCompletion",
    "ResolvedModel",
    "Transport",
    "UsageTotals",
]


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
    """True when the transport reported no token counts and they were counted here (``llm.tokens.count_tokens``:
    characters / 4 for scripted models)."""
    finish_reason: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    dropped: tuple[str, ...] = ()
    """What was cut from the prompt to fit the model's context window (one note per shortened message)."""
    batch_size: int = 1
    """How many completions of one prompt were sampled together in the batched call this one came from
    (``LLMClient.complete_n``). The batch's prompt tokens are charged to its first completion; the others report 0."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class UsageTotals(BaseModel):
    """Running totals over a set of calls (every call of a client, or of one ``TokenBudget``)."""

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
    """What a model string names: which provider serves it, and its default prompt style."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """The registered provider that serves it: ``litellm``, ``local``, ``scripted``, ``scripted_file``,
    ``function``, or a name given to ``register_provider``."""
    provider: str
    """The provider reported on the ``Completion`` (for ``litellm``: litellm's provider, e.g. ``openai``)."""
    name: str
    """Model name without the provider prefix (for ``scripted_file``: the file path)."""
    prompt_style_default: PromptStyle
    code_reply_default: CodeReply = "code-only"
    """How a chat prompt asks it for code when ``llm.code_reply`` is ``auto`` (the provider's ``code_reply_of``)."""


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
failures worth retrying) or litellm/openai exceptions, which the client translates.

A transport may also define ``async aclose()``; ``LLMClient.aclose`` calls it, and
``async complete_batch(request, seeds) -> list[RawCompletion]``: one sample of ``request`` per seed from
one batched call, each reporting the prompt's tokens and its own completion tokens; ``LLMClient.complete_n``
uses it when the transport serving the model has it."""
