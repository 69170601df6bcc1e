"""The LLM gateway: one client for litellm models, the embedded ``local/`` model, ``scripted`` fakes and functions.

Names are imported on first access, so ``import debatecode.llm`` stays cheap
and never imports litellm (which takes seconds); litellm is imported only when
a network or ``local/`` model is resolved or called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode.llm.budget import TokenBudget
    from debatecode.llm.client import LLMClient, resolve_model, validate_model
    from debatecode.llm.function import FunctionModel
    from debatecode.llm.parsing import COMPLETION_STOP, extract_choice, extract_code
    from debatecode.llm.providers import (
        KNOWN_PREFIXES,
        ProviderSpec,
        provider,
        register_provider,
        registered_providers,
        unregister_provider,
    )
    from debatecode.llm.scripted import (
        ScriptedModel,
        ScriptedReply,
        register_scripted,
        registered_scripted,
        unregister_scripted,
    )
    from debatecode.llm.transport import (
        Completion,
        CompletionRequest,
        RawCompletion,
        ResolvedModel,
        Transport,
        UsageTotals,
    )
    from debatecode.llm.types import Message, PromptStyle, estimate_tokens

__all__ = [
    "COMPLETION_STOP",
    "KNOWN_PREFIXES",
    "Completion",
    "CompletionRequest",
    "FunctionModel",
    "LLMClient",
    "Message",
    "PromptStyle",
    "ProviderSpec",
    "RawCompletion",
    "ResolvedModel",
    "ScriptedModel",
    "ScriptedReply",
    "TokenBudget",
    "Transport",
    "UsageTotals",
    "estimate_tokens",
    "extract_choice",
    "extract_code",
    "provider",
    "register_provider",
    "register_scripted",
    "registered_providers",
    "registered_scripted",
    "resolve_model",
    "unregister_provider",
    "unregister_scripted",
    "validate_model",
]

_LAZY = {
    "TokenBudget": "debatecode.llm.budget",
    "LLMClient": "debatecode.llm.client",
    "resolve_model": "debatecode.llm.client",
    "validate_model": "debatecode.llm.client",
    "FunctionModel": "debatecode.llm.function",
    "COMPLETION_STOP": "debatecode.llm.parsing",
    "extract_choice": "debatecode.llm.parsing",
    "extract_code": "debatecode.llm.parsing",
    "KNOWN_PREFIXES": "debatecode.llm.providers",
    "ProviderSpec": "debatecode.llm.providers",
    "provider": "debatecode.llm.providers",
    "register_provider": "debatecode.llm.providers",
    "registered_providers": "debatecode.llm.providers",
    "unregister_provider": "debatecode.llm.providers",
    "ScriptedModel": "debatecode.llm.scripted",
    "ScriptedReply": "debatecode.llm.scripted",
    "register_scripted": "debatecode.llm.scripted",
    "registered_scripted": "debatecode.llm.scripted",
    "unregister_scripted": "debatecode.llm.scripted",
    "Completion": "debatecode.llm.transport",
    "CompletionRequest": "debatecode.llm.transport",
    "RawCompletion": "debatecode.llm.transport",
    "ResolvedModel": "debatecode.llm.transport",
    "Transport": "debatecode.llm.transport",
    "UsageTotals": "debatecode.llm.transport",
    "Message": "debatecode.llm.types",
    "PromptStyle": "debatecode.llm.types",
    "estimate_tokens": "debatecode.llm.types",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
