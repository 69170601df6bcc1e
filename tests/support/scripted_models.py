"""``registered_model``: a scripted model under a fresh ``scripted/<name>``, for one with-block. TEST-ONLY.

Fixtures and helpers register a ``ScriptedModel`` for one test and take it away after. The name is
fresh each time (a prefix and eight hex digits), so tests that run together never answer for each other.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted

__all__ = ["registered_model"]


@contextmanager
def registered_model(prefix: str, model: ScriptedModel) -> Iterator[str]:
    """``model`` registered as ``scripted/<prefix>-<8 hex digits>`` until the block ends; yields that model string."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    register_scripted(name, model)
    try:
        yield f"scripted/{name}"
    finally:
        unregister_scripted(name)
