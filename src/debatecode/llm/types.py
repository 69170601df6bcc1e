"""The plain types every layer shares with the model gateway: ``Message``, ``PromptStyle``, token counting.

This is their one definition (``debatecode.llm.client`` and ``debatecode.agents.prompts``
re-export them). It imports nothing but the stdlib and ``typing_extensions``, so any
module may import it without pulling in pydantic, litellm or the client.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

__all__ = ["Message", "PromptStyle", "estimate_tokens"]

PromptStyle = Literal["chat", "completion"]
"""``chat``: system and user messages, the code comes back fenced. ``completion``: one raw prompt
that ends where a base model continues (a function header)."""


class Message(TypedDict):
    """One chat message, as litellm and the OpenAI API take it."""

    role: Literal["system", "user", "assistant"]
    content: str


def estimate_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up (about right for English and code)."""
    return (len(text) + 3) // 4
