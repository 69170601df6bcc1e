"""Token accounting: the one place token counts and context windows are worked out.

Per model string:

- ``local/<name>``: llama.cpp's own tokenizer on exactly what the model is fed (the
  chat-templated prompt for a ``chat`` model, the joined prompt for a ``completion``
  one), so counts equal the usage llama.cpp reports. The window is the model's ``n_ctx``.
- ``scripted/...``, ``scripted:...``, ``function/...`` and any other registered prefix:
  ``estimate_tokens`` (characters / 4) and no window, so such prompts are never fitted.
- anything else (a litellm model): ``litellm.token_counter``, and ``max_input_tokens``
  from litellm's model map as the window (None when litellm does not know the model).
  An unknown or unparsable model falls back to the estimate.

``fit_messages`` shrinks a prompt that would overflow the window by cutting the middle
out of its longest non-system messages, leaving a visible marker where text was dropped.
Counting a ``local/`` prompt loads that model and blocks on its lock: async callers run
these functions in a worker thread.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from debatecode.errors import ModelError, ModelRequestError
from debatecode.llm.local import LOCAL_MODELS, count_local_text_tokens, count_local_tokens
from debatecode.llm.types import Message, estimate_tokens

__all__ = ["FittedPrompt", "context_window", "count_tokens", "fit_messages"]

logger = logging.getLogger(__name__)

_Kind = Literal["local", "litellm", "estimate"]

_MIN_KEPT_CHARS = 200
"""A message is not cut below this many characters (its head and tail together)."""
_MARKER_TOKENS = 40
"""Tokens allowed for a marker (and the text around a cut re-tokenizing differently) when sizing a cut."""
_SNAP_CHARS = 120
"""A cut moves up to this many characters (at most a quarter of what is kept) to fall on a line break."""
_MAX_CUTS = 64


@dataclass(frozen=True)
class FittedPrompt:
    """Messages that fit the model's context window, with what was dropped to make them fit."""

    messages: list[Message]
    prompt_tokens: int
    """The prompt tokens of ``messages`` (``count_tokens``)."""
    dropped: list[str] = field(default_factory=list)
    """One human-readable note per shortened message; empty when nothing was dropped."""


def count_tokens(model: str, messages_or_text: str | Sequence[Mapping[str, Any]]) -> int:
    """The prompt tokens ``model`` is sent for these chat messages, or for this text as a raw prompt.

    Blocking (a ``local/`` model is loaded on first use). Never raises: a model nothing can
    tokenize for (unknown to litellm, or a ``local/`` model whose weights or llama-cpp-python are
    missing, whose call will fail anyway) is counted with ``estimate_tokens``.
    """
    counted = _tokenizer_count(model, messages_or_text, count_local_tokens)
    return counted if counted is not None else estimate_tokens(_joined(messages_or_text))


def context_window(model: str) -> int | None:
    """The most tokens (prompt plus reply) ``model`` takes, or None when unknown or unbounded (scripted models)."""
    kind = _kind(model)
    if kind == "local":
        spec = LOCAL_MODELS.get(model.removeprefix("local/"))
        return spec.n_ctx if spec is not None else None
    if kind == "litellm":
        return _litellm_window(model)
    return None


def fit_messages(model: str, messages: Sequence[Message], max_completion_tokens: int) -> FittedPrompt:
    """``messages`` shrunk, when needed, so their prompt plus ``max_completion_tokens`` fits ``model``'s window.

    Without a known window the messages come back as they are. Otherwise, while the prompt is too
    long, the middle of the longest non-system message (by characters; the earliest on a tie) is
    replaced by a marker such as ``[… 1234 tokens of message 2 (user) dropped to fit the
    8192-token window …]``, keeping its head and tail. Deterministic: the same input is cut the
    same way.

    Raises:
        ModelRequestError: the reply alone does not fit the window, or the prompt still does not fit
            once every non-system message is cut down to its head and tail.
    """
    fitted: list[Message] = [{"role": m["role"], "content": m["content"]} for m in messages]
    window = context_window(model)
    tokens = count_tokens(model, fitted)
    if window is None:
        return FittedPrompt(fitted, tokens)
    room = window - max_completion_tokens
    if tokens <= room:
        return FittedPrompt(fitted, tokens)
    if room <= 0:
        raise ModelRequestError(
            f"{model} cannot reply with up to {max_completion_tokens} tokens: its context window is {window} "
            "tokens in all. Lower llm.max_tokens (or llm.completion_max_tokens for completion-style prompts).",
            model=model,
        )
    kept = {i: len(m["content"]) for i, m in enumerate(fitted)}
    dropped: dict[int, int] = {}
    chars_per_token: dict[int, float] = {}
    for _ in range(_MAX_CUTS):
        index = _longest_cuttable(fitted, kept)
        if index is None:
            break
        original = messages[index]["content"]
        if index not in chars_per_token:
            chars_per_token[index] = len(original) / max(1, _text_tokens(model, original))
        cut = math.ceil((tokens - room + _MARKER_TOKENS) * chars_per_token[index])
        kept[index] = max(_MIN_KEPT_CHARS, kept[index] - max(1, cut))
        head, tail = _split(original, kept[index])
        dropped[index] = _text_tokens(model, original[head:tail])
        what = f"message {index + 1} ({fitted[index]['role']})"
        marker = f"[… {dropped[index]} tokens of {what} dropped to fit the {window}-token window …]"
        content = f"{original[:head].rstrip()}\n{marker}\n{original[tail:].lstrip()}"
        fitted[index] = {"role": fitted[index]["role"], "content": content}
        tokens = count_tokens(model, fitted)
        if tokens <= room:
            notes = [
                f"dropped {n} of {_text_tokens(model, messages[i]['content'])} tokens from the middle of message "
                f"{i + 1} ({messages[i]['role']}) to fit {model}'s {window}-token window "
                f"({max_completion_tokens} reserved for the reply)"
                for i, n in sorted(dropped.items())
            ]
            return FittedPrompt(fitted, tokens, notes)
    raise ModelRequestError(
        f"the prompt for {model} does not fit its {window}-token context window: even with the middle of every "
        f"non-system message cut out it takes {tokens} tokens, plus {max_completion_tokens} reserved for the reply. "
        "Shorten the task or the system prompt, lower llm.max_tokens, or use a model with a larger window.",
        model=model,
    )


def _split(text: str, keep: int) -> tuple[int, int]:
    """Where the dropped middle of ``text`` starts and ends when ``keep`` characters stay, moved to line breaks nearby."""
    head, tail = (keep + 1) // 2, len(text) - keep // 2
    snap = min(_SNAP_CHARS, keep // 4)
    line_end = text.rfind("\n", head - snap, head)
    line_start = text.find("\n", tail, tail + snap)
    return (line_end + 1 if line_end >= 0 else head), (line_start if line_start >= 0 else tail)


def _longest_cuttable(messages: Sequence[Message], kept: Mapping[int, int]) -> int | None:
    candidates = [i for i, m in enumerate(messages) if m["role"] != "system" and kept[i] > _MIN_KEPT_CHARS]
    return max(candidates, key=lambda i: (kept[i], -i), default=None)


# --- per provider ---------------------------------------------------------------------------------


def _kind(model: str) -> _Kind:
    from debatecode.llm.providers import match_provider

    spec = match_provider(model)
    if spec is None:
        return "litellm"
    return "local" if spec.name == "local" else "estimate"


def _text_tokens(model: str, text: str) -> int:
    """The tokens of ``text`` alone, as a piece of a prompt (no template, no BOS)."""
    counted = _tokenizer_count(model, text, count_local_text_tokens)
    return counted if counted is not None else estimate_tokens(text)


def _tokenizer_count(
    model: str, prompt: str | Sequence[Mapping[str, Any]], local_count: Callable[[str, Any], int]
) -> int | None:
    """``prompt``'s tokens by ``model``'s own tokenizer; None when it has none or it fails (the caller estimates).

    ``local_count`` counts for a ``local/`` model; litellm counts for the models it knows.
    """
    kind = _kind(model)
    if kind == "local":
        return _local_count(local_count, model, prompt)
    if kind == "litellm":
        return _litellm_count(model, prompt)
    return None


def _joined(messages_or_text: str | Sequence[Mapping[str, Any]]) -> str:
    if isinstance(messages_or_text, str):
        return messages_or_text
    return "".join(str(m.get("content") or "") for m in messages_or_text)


def _local_count(count: Callable[[str, Any], int], model: str, prompt: Any) -> int | None:
    try:
        return count(model.removeprefix("local/"), prompt)
    except ModelError as exc:
        logger.debug("cannot tokenize for %s (%s); estimating", model, exc)
        return None


def _litellm_count(model: str, messages_or_text: str | Sequence[Mapping[str, Any]]) -> int | None:
    from debatecode.llm._litellm import import_litellm

    litellm = import_litellm()
    try:
        if isinstance(messages_or_text, str):
            return int(litellm.token_counter(model=model, text=messages_or_text))
        return int(litellm.token_counter(model=model, messages=[dict(m) for m in messages_or_text]))
    except Exception as exc:
        logger.debug("litellm cannot count tokens for %s (%s); estimating", model, exc)
        return None


@functools.lru_cache(maxsize=256)
def _litellm_window(model: str) -> int | None:
    from debatecode.llm._litellm import import_litellm

    litellm = import_litellm()
    try:
        window = litellm.get_model_info(model).get("max_input_tokens")
    except Exception as exc:
        logger.debug("litellm knows no context window for %s: %s", model, exc)
        return None
    return int(window) if window else None
