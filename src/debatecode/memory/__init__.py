"""Memory: Reflexion episodes and accumulated lessons, stored with their vectors and found by meaning.

- ``Episode``, ``Lesson``: the records (``episodes.py``).
- ``EpisodicMemory``: episodes in the session store's database, FIFO-bounded,
  searched by similarity and filtered by agent or session (``store.py``).
- ``WisdomStore``: deduplicated lessons kept across sessions (``wisdom.py``).
- ``create_embedder``, ``HashingEmbedder``: texts to vectors, chosen by name
  (``embeddings.py``); ``VectorIndex``: exact numpy cosine search (``index.py``).
- ``MemorySettings``, ``ReflexionSettings``: the ``[memory]`` and ``[reflexion]``
  sections of the config (``settings.py``).

Every name is imported on first use: importing this package loads neither numpy,
SQLAlchemy, torch nor sentence-transformers. See ``docs/memory.md``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debatecode.memory.embeddings import HashingEmbedder, create_embedder
    from debatecode.memory.episodes import Episode, Lesson
    from debatecode.memory.index import VectorIndex
    from debatecode.memory.settings import MemorySettings, ReflexionSettings
    from debatecode.memory.store import EpisodicMemory
    from debatecode.memory.wisdom import WisdomStore

__all__ = [
    "Episode",
    "EpisodicMemory",
    "HashingEmbedder",
    "Lesson",
    "MemorySettings",
    "ReflexionSettings",
    "VectorIndex",
    "WisdomStore",
    "create_embedder",
]

_HOME = {
    "Episode": "episodes",
    "EpisodicMemory": "store",
    "HashingEmbedder": "embeddings",
    "Lesson": "episodes",
    "MemorySettings": "settings",
    "ReflexionSettings": "settings",
    "VectorIndex": "index",
    "WisdomStore": "wisdom",
    "create_embedder": "embeddings",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
