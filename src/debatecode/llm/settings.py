"""Settings of the model calls (the ``[llm]`` section of ``debatecode.toml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LLMSettings"]


class LLMSettings(BaseModel):
    """How models are called."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """Sampling temperature for proposals and revisions. Agent 1 always decodes greedily (0.0) for a stable baseline."""
    max_tokens: int = Field(default=1024, ge=16)
    """Upper bound on completion tokens per chat-style call."""
    seed: int = 0
    """Added to every agent's sampling seed: change it to draw different samples reproducibly."""
    draft_batch: int = Field(default=8, ge=1, le=64)
    """Drafts of one prompt that a model able to batch (``local/``) decodes together, the prompt evaluated once: a vote's samples 2 and on, in blocks of this many. 1: one after another."""
    round_token_budget: int | None = Field(default=None, ge=1)
    """Per-agent allowance of completion tokens per debate round (each once-only phase counts as a round of its own); calls are capped to what is left, and an agent with nothing left sits the round out. None: unlimited."""
    completion_max_tokens: int = Field(default=320, ge=16)
    """Upper bound on completion tokens per completion-style call (base models continue a function body and tend to ramble past it)."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    """Timeout of one model request, in seconds."""
    max_retries: int = Field(default=3, ge=0)
    """Retries for rate limits, 5xx errors, timeouts and connection errors. Auth and bad-request errors are never retried."""
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    """First backoff delay; it doubles on each retry."""
    api_base: str | None = None
    """Override the provider's base URL (for example a local vLLM or Ollama server)."""
    prompt_style: Literal["auto", "chat", "completion"] = "auto"
    """``completion`` prompts end with the function header (for base models); ``chat`` asks for a fenced code block. ``auto`` takes each model's own style (the embedded Qwen is chat, the embedded Gemma completion; API models chat)."""
    code_reply: Literal["auto", "code-only", "explain-first", "function-only"] = "auto"
    """How a chat model is asked to write code: ``code-only`` (the whole ``solution.py`` in one python block and nothing else), ``explain-first`` (a short explanation, then the block) or ``function-only`` (the draft asks for the function alone under a one-line system prompt, as issue 32's standalone greedy recipe does; other prompts are code-only's). ``auto`` takes each model's own: the variant that passed the most visible checks in the embedded model's prompt A/B (benchmarks/results/prompt-ab-164/), code-only for every other model."""
