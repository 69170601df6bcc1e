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

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

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

_LAZY = {
    "Episode": "debatecode.memory.episodes",
    "EpisodicMemory": "debatecode.memory.store",
    "HashingEmbedder": "debatecode.memory.embeddings",
    "Lesson": "debatecode.memory.episodes",
    "MemorySettings": "debatecode.memory.settings",
    "ReflexionSettings": "debatecode.memory.settings",
    "VectorIndex": "debatecode.memory.index",
    "WisdomStore": "debatecode.memory.wisdom",
    "create_embedder": "debatecode.memory.embeddings",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
