"""debatecode: several LLM agents debate their way to correct code; running it settles every claim.

The public surface is small and imported lazily, so ``import debatecode``
stays fast and never pulls in litellm or the Docker SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = [
    "BudgetExceeded",
    "ConfigError",
    "DebateConfig",
    "DebateResult",
    "DebatecodeError",
    "ModelError",
    "SandboxError",
    "Task",
    "TaskError",
    "load_config",
    "load_task",
    "solve",
    "solve_async",
]

_LAZY = {
    "BudgetExceeded": "debatecode.errors",
    "ConfigError": "debatecode.errors",
    "DebatecodeError": "debatecode.errors",
    "ModelError": "debatecode.errors",
    "SandboxError": "debatecode.errors",
    "TaskError": "debatecode.errors",
    "DebateConfig": "debatecode.config",
    "load_config": "debatecode.config",
    "Task": "debatecode.task",
    "load_task": "debatecode.task",
    "solve": "debatecode._api",
    "solve_async": "debatecode._api",
    "DebateResult": "debatecode.protocol.engine",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'debatecode' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
