"""Model strings and the default transport: which provider serves a model, and the router that sends to it.

``resolve_model`` maps a model string to the provider registered for its prefix
(``debatecode.llm.providers``), else to litellm. ``ModelRouter``, ``LLMClient``'s
default transport, sends each request to a transport made by that provider's
factory, once per router.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from debatecode.errors import UnknownModelError
from debatecode.llm._litellm import import_litellm
from debatecode.llm.providers import known_prefixes, match_provider, provider
from debatecode.llm.scripted import load_script_or_raise, registered_or_raise
from debatecode.llm.transport import CompletionRequest, RawCompletion, ResolvedModel, Transport

__all__ = ["BatchSender", "ModelRouter", "batch_sender", "close_all", "resolve_model", "validate_model"]


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
    litellm = import_litellm()
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
        await close_all(transports)


async def close_all(transports: list[Any]) -> None:
    """Close each of ``transports`` that has an ``aclose``; the first error, if any, is raised after all were tried."""
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


BatchSender = Callable[[CompletionRequest, Sequence[int]], Awaitable[list[RawCompletion]]]
"""A transport's ``complete_batch``: one request, one sample per seed, from one batched call."""


def batch_sender(transport: Transport, resolved: ResolvedModel, model: str) -> BatchSender | None:
    """The ``complete_batch`` of the transport that serves ``model`` (through a ``ModelRouter``), if it has one."""
    if isinstance(transport, ModelRouter):
        transport = transport.transport(resolved.kind, model=model)
    send: BatchSender | None = getattr(transport, "complete_batch", None)
    return send
