"""The LLM gateway: one client for litellm models, the embedded ``local/`` model and ``scripted`` fakes.

Names are imported on first access, so ``import debatecode.llm`` stays cheap
and never imports litellm (which takes seconds); litellm is imported only when
a network or ``local/`` model is resolved or called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debatecode.llm.client import (
        KNOWN_PREFIXES,
        Completion,
        CompletionRequest,
        LLMClient,
        Message,
        RawCompletion,
        ResolvedModel,
        Transport,
        UsageTotals,
        resolve_model,
        validate_model,
    )
    from debatecode.llm.parsing import COMPLETION_STOP, extract_choice, extract_code
    from debatecode.llm.scripted import (
        ScriptedModel,
        ScriptedReply,
        register_scripted,
        registered_scripted,
        unregister_scripted,
    )

__all__ = [
    "COMPLETION_STOP",
    "KNOWN_PREFIXES",
    "Completion",
    "CompletionRequest",
    "LLMClient",
    "Message",
    "RawCompletion",
    "ResolvedModel",
    "ScriptedModel",
    "ScriptedReply",
    "Transport",
    "UsageTotals",
    "extract_choice",
    "extract_code",
    "register_scripted",
    "registered_scripted",
    "resolve_model",
    "unregister_scripted",
    "validate_model",
]

_MODULE_OF = {
    **dict.fromkeys(
        [
            "KNOWN_PREFIXES",
            "Completion",
            "CompletionRequest",
            "LLMClient",
            "Message",
            "RawCompletion",
            "ResolvedModel",
            "Transport",
            "UsageTotals",
            "resolve_model",
            "validate_model",
        ],
        "debatecode.llm.client",
    ),
    **dict.fromkeys(["COMPLETION_STOP", "extract_choice", "extract_code"], "debatecode.llm.parsing"),
    **dict.fromkeys(
        ["ScriptedModel", "ScriptedReply", "register_scripted", "registered_scripted", "unregister_scripted"],
        "debatecode.llm.scripted",
    ),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'debatecode.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
