"""``FunctionModel``: a transport made from a plain function, passed to one client, registered nowhere.

    client = LLMClient(settings, transport=FunctionModel(lambda messages: "def add(a, b): ..."))
    await client.complete("function/coder", messages)

The client still resolves the model string (for the prompt style and the
``provider`` of the ``Completion``), then every call goes to the function.
``function/<name>`` is the model string meant for it: it resolves to chat style
without any registry or network lookup, and the default transport refuses it
with a message saying to pass a ``FunctionModel``. Any other model string that
resolves (``scripted/x``, ``local/gemma-3-270m``, ``openai/...``) is answered by
the function too.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import cast

from debatecode.errors import ModelRequestError, UnknownModelError
from debatecode.llm.providers import known_prefixes, register_provider
from debatecode.llm.transport import CompletionRequest, RawCompletion
from debatecode.llm.types import Message

__all__ = ["FunctionModel", "FunctionReply", "FunctionTransport", "ModelFunction"]

FunctionReply = str | Awaitable[str]
"""What the function returns: the reply text, or an awaitable of it (an ``async def`` function)."""

ModelFunction = Callable[[list[Message]], FunctionReply] | Callable[[list[Message], dict[str, str]], FunctionReply]
"""``fn(messages)`` or ``fn(messages, tags)``, sync or async, returning the reply text."""


def _takes_tags(fn: Callable[..., object]) -> bool:
    """Whether ``fn`` accepts a second positional argument (the tags)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins and C callables have no signature
        return True
    positional = 0
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return True
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


class FunctionModel:
    """A ``Transport`` that answers every call with ``fn(messages)`` or ``fn(messages, tags)``.

    ``fn`` may be sync or async and returns the reply text. It gets a copy of the call's
    messages and tags (``agent``, ``phase``, ``round``, ``kind``, ``role``); whether it takes
    the tags is read from its signature (a second positional parameter, or ``*args``).
    Token counts are estimated (characters / 4) and flagged ``usage_estimated``.

    A ``debatecode.errors`` exception raised by ``fn`` passes through the client as it is
    (``ModelTransientError`` is retried); any other exception becomes a ``ModelError``.
    """

    def __init__(self, fn: ModelFunction) -> None:
        self.fn = fn
        self._takes_tags = _takes_tags(fn)

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Answer one request.

        Raises:
            ModelRequestError: ``fn`` returned something other than a string.
            Exception: whatever ``fn`` raises (the client translates it).
        """
        messages = [cast(Message, dict(m)) for m in request.messages]
        if self._takes_tags:
            reply = cast(Callable[[list[Message], dict[str, str]], FunctionReply], self.fn)(
                messages, dict(request.tags)
            )
        else:
            reply = cast(Callable[[list[Message]], FunctionReply], self.fn)(messages)
        if inspect.isawaitable(reply):
            reply = await reply
        if not isinstance(reply, str):
            raise ModelRequestError(
                f"the FunctionModel for {request.model!r} returned {type(reply).__name__}, not the reply text (str)",
                model=request.model,
            )
        return RawCompletion(text=reply)

    def __repr__(self) -> str:
        return f"FunctionModel({getattr(self.fn, '__qualname__', self.fn)!r})"


@register_provider("function", prefix="function/")
class FunctionTransport:
    """Provider ``function``: resolves ``function/<name>``, but only a ``FunctionModel`` answers it."""

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Refuse: the client was made without a ``FunctionModel``.

        Raises:
            UnknownModelError: always.
        """
        raise UnknownModelError(
            request.model,
            known_prefixes(),
            "`function/` models are answered only by a FunctionModel passed to the client: "
            "LLMClient(settings, transport=FunctionModel(fn))",
        )
