"""Providers: transport factories registered under a name, and the model-string prefixes they answer to.

``ModelRouter`` (the default transport of ``LLMClient``) looks up the provider named
by ``request.resolved.kind`` and sends the request through a transport made by its
factory (one per router, made on first use). ``resolve_model`` maps a model string
to a provider by the registered prefixes; a string no prefix matches goes to
``litellm``.

Built-in providers:

========================  ================  ==========================================
name                      prefix            serves
========================  ================  ==========================================
``litellm``               (anything else)   network models, through litellm
``local``                 ``local/``        the embedded llama.cpp model
``scripted``              ``scripted/``     ``ScriptedModel``\\ s from ``register_scripted``
``scripted_file``         ``scripted:``     YAML scripts
``function``              ``function/``     only a ``FunctionModel`` transport answers it
========================  ================  ==========================================

A new provider::

    @register_provider("echo", prefix="echo/")
    class EchoTransport:
        async def __call__(self, request: CompletionRequest) -> RawCompletion:
            return RawCompletion(text=request.messages[-1]["content"])

    await LLMClient().complete("echo/anything", messages)

The built-ins register themselves when their modules are imported; the lookups
here import those modules first, so they are always known. Nothing here imports
litellm.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from debatecode.errors import UnknownModelError
from debatecode.llm.types import CodeReply, PromptStyle

if TYPE_CHECKING:
    from debatecode.llm.transport import Transport

__all__ = [
    "KNOWN_PREFIXES",
    "ProviderSpec",
    "TransportFactory",
    "known_prefixes",
    "match_provider",
    "provider",
    "register_provider",
    "registered_providers",
    "unregister_provider",
]

KNOWN_PREFIXES: list[str] = [
    "local/",
    "scripted/",
    "scripted:",
    "function/",
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
"""Model-string prefixes shown when a model string is not recognised (``known_prefixes()`` adds
the prefixes of providers registered later)."""

_ANY_LITELLM = "(any litellm provider)"

TransportFactory = Callable[[], "Transport"]
"""Makes a transport: a class whose instances are transports, or a function returning one."""

F = TypeVar("F", bound=TransportFactory)


@dataclass(frozen=True)
class ProviderSpec:
    """One registered provider."""

    name: str
    """The registry name; model strings it serves resolve to ``ResolvedModel(kind=name)``."""
    factory: TransportFactory
    prefix: str | None = None
    """Model strings starting with it are served by this provider (``None``: only by explicit ``kind``)."""
    prompt_style: PromptStyle = "chat"
    """The default prompt style of its models (``llm.prompt_style = "auto"``)."""
    label: str | None = None
    """The provider name reported on each ``Completion``; defaults to ``name``."""
    check: Callable[[str], str | None] | None = None
    """Checks the model name after the prefix: returns why it is not served, or None. Without it, an
    empty name is refused."""
    style_of: Callable[[str], PromptStyle] | None = None
    """The prompt style of one model (the name after the prefix), when the provider's models differ."""
    code_reply_of: Callable[[str], CodeReply] | None = None
    """How a chat prompt asks one model for code (``llm.code_reply = "auto"``); ``code-only`` without it."""

    def style(self, name: str) -> PromptStyle:
        """The default prompt style of the model ``name`` (the part after the prefix)."""
        return self.style_of(name) if self.style_of is not None else self.prompt_style

    def code_reply(self, name: str) -> CodeReply:
        """The default ``llm.code_reply`` of the model ``name`` (the part after the prefix)."""
        return self.code_reply_of(name) if self.code_reply_of is not None else "code-only"

    def refusal(self, name: str) -> str | None:
        """Why this provider does not serve the model ``name`` (the part after the prefix), or None when it does."""
        if self.check is not None:
            return self.check(name)
        return None if name else f"`{self.prefix}` needs a name"

    @property
    def reported(self) -> str:
        """The provider name reported on each ``Completion``."""
        return self.label or self.name


_BUILTIN_MODULES: dict[str, str] = {
    "litellm": "debatecode.llm.client",
    "local": "debatecode.llm.client",
    "scripted": "debatecode.llm.scripted",
    "scripted_file": "debatecode.llm.scripted",
    "function": "debatecode.llm.function",
}
"""Where each built-in provider registers itself (imported on the first lookup)."""

_registry: dict[str, ProviderSpec] = {}
_lock = threading.RLock()
_builtins_loaded = False


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    for module in dict.fromkeys(_BUILTIN_MODULES.values()):
        importlib.import_module(module)
    _builtins_loaded = True


def register_provider(
    name: str,
    *,
    prefix: str | None = None,
    prompt_style: PromptStyle = "chat",
    label: str | None = None,
    check: Callable[[str], str | None] | None = None,
    style_of: Callable[[str], PromptStyle] | None = None,
    code_reply_of: Callable[[str], CodeReply] | None = None,
) -> Callable[[F], F]:
    """Decorator: register a transport factory as provider ``name``, replacing any earlier one of that name.

    ``prefix`` makes model strings that start with it resolve to this provider (the longest
    matching prefix wins; strings no prefix matches go to litellm). The factory is called once
    per ``ModelRouter`` (so once per client), on the first request for the provider.

    Raises:
        ValueError: ``name`` is empty, or ``prefix`` is empty.
    """
    if not name:
        raise ValueError("a provider needs a non-empty name")
    if prefix is not None and not prefix:
        raise ValueError(f"provider {name!r}: the prefix must be non-empty (or None)")

    def decorate(factory: F) -> F:
        spec = ProviderSpec(
            name=name,
            factory=factory,
            prefix=prefix,
            prompt_style=prompt_style,
            label=label,
            check=check,
            style_of=style_of,
            code_reply_of=code_reply_of,
        )
        with _lock:
            _registry[name] = spec
        return factory

    return decorate


def unregister_provider(name: str) -> None:
    """Forget provider ``name``; a no-op when it is not registered. Routers keep transports they already made."""
    _load_builtins()  # so a built-in forgotten now is not registered again by a later lookup
    with _lock:
        _registry.pop(name, None)


def registered_providers() -> list[str]:
    """The names of every registered provider, built-ins included, sorted."""
    _load_builtins()
    with _lock:
        return sorted(_registry)


def provider(name: str, *, model: str | None = None) -> ProviderSpec:
    """The provider registered as ``name``.

    Raises:
        UnknownModelError: no provider of that name (``model`` is the model string named in the error).
    """
    _load_builtins()
    with _lock:
        spec = _registry.get(name)
        names = ", ".join(sorted(_registry))
    if spec is None:
        raise UnknownModelError(
            model or name, known_prefixes(), f"no provider registered as {name!r}; registered: {names}"
        )
    return spec


def match_provider(model: str) -> ProviderSpec | None:
    """The provider whose prefix starts ``model`` (the longest such prefix), or None."""
    _load_builtins()
    with _lock:
        matching = [s for s in _registry.values() if s.prefix is not None and model.startswith(s.prefix)]
    return max(matching, key=lambda s: len(s.prefix or ""), default=None)


def known_prefixes() -> list[str]:
    """``KNOWN_PREFIXES`` plus the prefixes of other registered providers, before ``(any litellm provider)``."""
    _load_builtins()
    with _lock:
        extra = [s.prefix for s in _registry.values() if s.prefix is not None and s.prefix not in KNOWN_PREFIXES]
    if not extra:
        return list(KNOWN_PREFIXES)
    base = [p for p in KNOWN_PREFIXES if p != _ANY_LITELLM]
    return [*base, *sorted(extra), _ANY_LITELLM]
