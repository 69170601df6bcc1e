"""Fixtures for the memory tests: a SQLite store in tmp_path, episode factories and both embedders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from debatecode.memory import Episode, HashingEmbedder, MemorySettings
from debatecode.memory.embeddings import SentenceTransformerEmbedder

OFF_BY_ONE = {
    "task_title": "sum_range",
    "reflection": "The loop over range(lo, hi) stopped one element early: an off-by-one in range.",
    "root_cause": "range excludes its end, so the last value was never added.",
    "improvement": "Use range(lo, hi + 1) when the upper bound is inclusive.",
}
JSON_PARSING = {
    "task_title": "load_config",
    "reflection": "JSON parsing failed: json.loads raised JSONDecodeError on a trailing comma.",
    "root_cause": "The input is not strict JSON; the decoder rejects it.",
    "improvement": "Strip trailing commas before parsing, or report a clear error.",
}


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    (tmp_path / "state").mkdir()  # a store_url's folder must exist (only `.debatecode` is created)
    return f"sqlite:///{tmp_path / 'state' / 'debatecode.db'}"


@pytest.fixture
def settings() -> MemorySettings:
    return MemorySettings(embedder="hashing")


@pytest.fixture
def hashing() -> HashingEmbedder:
    return HashingEmbedder(256)


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    """The real all-MiniLM-L6-v2 embedder; its model loads once per test process."""
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture
def make_episode() -> Callable[..., Episode]:
    def make(**overrides: Any) -> Episode:
        values: dict[str, Any] = {
            "session_id": "session-1",
            "agent_id": "agent-1",
            "task_title": "a task",
            "task_text": "Write a function.",
            "reflection": "something went wrong",
            "test_results": {"passed": 1, "total": 2, "failures": [{"name": "test_x", "message": "boom"}]},
        }
        return Episode(**(values | overrides))

    return make
