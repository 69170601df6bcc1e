"""Fixtures for the LLM gateway tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from debatecode.config import LLMSettings
from debatecode.llm import providers
from debatecode.llm.scripted import registered_scripted, unregister_scripted


@pytest.fixture(autouse=True)
def _clean_scripted_registry() -> Iterator[None]:
    """Each test starts and ends with no scripted models registered."""
    before = set(registered_scripted())
    yield
    for name in set(registered_scripted()) - before:
        unregister_scripted(name)


@pytest.fixture(autouse=True)
def _restore_provider_registry() -> Iterator[None]:
    """Each test ends with the providers it started with (built-ins replaced by a test come back)."""
    providers.registered_providers()  # registers the built-ins first
    with providers._lock:
        before = dict(providers._registry)
    yield
    with providers._lock:
        providers._registry.clear()
        providers._registry.update(before)


@pytest.fixture
def fast_settings() -> LLMSettings:
    """Settings with tiny backoff so retry tests take milliseconds."""
    return LLMSettings(max_retries=2, retry_base_delay_s=0.001, max_tokens=64, temperature=0.2)
