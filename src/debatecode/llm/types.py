"""The plain types every layer shares with the model gateway: ``Message``, ``PromptStyle``, token counting.

This is their one definition (``debatecode.llm.client`` and ``debatecode.agents.prompts``
re-export them). It imports nothing but the stdlib and ``typing_extensions``, so any
module may import it without pulling in pydantic, litellm or the client.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

__all__ = ["CodeReply", "Message", "PromptStyle", "estimate_tokens"]

PromptStyle = Literal["chat", "completion"]
"""``chat``: system and user messages, the code comes back fenced. ``completion``: one raw prompt
that ends where a base model continues (a function header)."""

CodeReply = Literal["code-only", "explain-first", "function-only"]
"""How a chat prompt asks for code (``llm.code_reply``): the whole ``solution.py`` in one block and nothing
else; a short explanation first, then the block; or, for the draft, the function alone under a one-line
system prompt (issue 32's standalone greedy recipe; its other prompts are code-only's)."""


class Message(TypedDict):
    """One chat message, as litellm and the OpenAI API take it."""

    role: Literal["system", "user", "assistant"]
    content: str


def estimate_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up (about right for English and code)."""
    return (len(text) + 3) // 4
