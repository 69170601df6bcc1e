"""``EpisodicMemory``: Reflexion episodes in the session store's database, found by meaning.

Each episode is stored in the ``episodes`` table together with the vector of its
*embedding text*: task title, reflection, root cause and improvement, one per
line (``Episode.embedding_text``). The code, the test output and the task text
are kept but not embedded: they would drown what the agent learnt in details.

A numpy ``VectorIndex`` of every stored vector is kept in memory. It is filled
at open and brought up to date before each search, so episodes written by
another process (or another ``EpisodicMemory`` on the same database) are found
too. A vector made by another embedder (name or size) is recomputed and written
back, never compared with vectors of this one.

Beyond ``max_episodes`` the oldest episodes (by insertion) are evicted, rows and
vectors both. Every database error becomes ``StoreError``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select

from debatecode.memory._table import EmbeddedTable, vector_bytes
from debatecode.memory.embeddings import Embedder
from debatecode.memory.episodes import Episode, embedding_text
from debatecode.memory.settings import MemorySettings
from debatecode.store.models import EpisodeRow, row_values

__all__ = ["EpisodicMemory"]

logger = logging.getLogger(__name__)


def episode_from_row(row: EpisodeRow) -> Episode:
    """The ``Episode`` a row stores (its vector columns left out).

    Raises:
        pydantic.ValidationError: the stored values do not fit (the store turns
            this into ``StoreError``).
    """
    return Episode.model_validate({name: getattr(row, name) for name in Episode.model_fields})


class EpisodicMemory(EmbeddedTable[EpisodeRow]):
    """Reflexion episodes, stored with their vectors and retrieved by similarity.

    Thread-safe. ``settings.enabled`` is not checked here: whoever decides to
    remember (the Reflexion loop) checks it.
    """

    row_type = EpisodeRow
    order_column = "seq"
    kind = "episode"

    def __init__(self, store_url: str, settings: MemorySettings, embedder: Embedder | None = None) -> None:
        """Open the memory in the store at ``store_url``, with ``embedder`` (default: ``settings.embedder``).

        Raises:
            StoreError: the store cannot be opened or read, or stored vectors
                cannot be recomputed.
            ConfigError: the embedder named in ``settings`` is unknown or not installed.
        """
        self._owners: dict[str, tuple[str, str]] = {}
        super().__init__(store_url, settings, embedder)

    def add(self, episode: Episode) -> Episode:
        """Store ``episode`` with the vector of its embedding text; evict the oldest beyond ``max_episodes``.

        Raises:
            StoreError: an episode with this id is stored already, the embedder
                failed, or the write failed.
        """
        vector = self._embed_one(episode.embedding_text)
        values = row_values(episode)
        with self._lock:
            with self._transaction(f"add episode {episode.id}", write=True) as db:
                seq = int(db.scalar(select(func.coalesce(func.max(EpisodeRow.seq), 0))) or 0) + 1
                row = EpisodeRow(
                    **values,
                    seq=seq,
                    embedding=vector_bytes(vector),
                    embedder=self.embedder.name,
                    dim=self.embedder.dim,
                )
                db.add(row)
                db.flush()
                stored = int(db.scalar(select(func.count()).select_from(EpisodeRow)) or 0)
                evicted: list[str] = []
                if stored > self.settings.max_episodes:
                    oldest = select(EpisodeRow.id).order_by(EpisodeRow.seq, EpisodeRow.created_at, EpisodeRow.id)
                    evicted = list(db.scalars(oldest.limit(stored - self.settings.max_episodes)))
                    self._delete_rows(db, evicted)
            self._index.add([episode.id], vector.reshape(1, -1))
            self._owners[episode.id] = (episode.agent_id, episode.session_id)
            if evicted:
                self._index.remove(evicted)
                self._dropped(evicted)
                logger.debug(
                    "memory holds %d episodes at most: evicted the %d oldest", self.settings.max_episodes, len(evicted)
                )
            self._signature = None
        return episode

    def get(self, id_or_prefix: str) -> Episode:
        """The episode with this id, or the only one whose id starts with it.

        Raises:
            RecordNotFound: no episode matches, or the prefix matches several.
            StoreError: the read failed.
        """
        with self._transaction(f"read episode {id_or_prefix!r}", write=False) as db:
            return episode_from_row(self._get_row(db, id_or_prefix))

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        min_similarity: float | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[tuple[Episode, float]]:
        """The episodes most similar to ``query``, best first, with their cosine similarity.

        ``k`` defaults to ``settings.k`` and ``min_similarity`` to
        ``settings.similarity_threshold``; ``agent_id`` and ``session_id`` filter.

        Raises:
            StoreError: the embedder failed or the read failed.
        """
        vector = self._embed_one(query)
        with self._lock:
            self._sync()
            allowed = None
            if agent_id is not None or session_id is not None:
                allowed = {
                    item_id
                    for item_id, (agent, session) in self._owners.items()
                    if (agent_id is None or agent == agent_id) and (session_id is None or session == session_id)
                }
            hits = self._index.search(
                vector,
                self.settings.k if k is None else k,
                min_score=self.settings.similarity_threshold if min_similarity is None else min_similarity,
                allowed=allowed,
            )
        if not hits:
            return []
        with self._transaction("read the episodes found", write=False) as db:
            rows = {
                row.id: row for row in db.scalars(select(EpisodeRow).where(EpisodeRow.id.in_([i for i, _ in hits])))
            }
            return [(episode_from_row(rows[i]), score) for i, score in hits if i in rows]

    def for_task(
        self,
        task_text: str,
        *,
        k: int | None = None,
        min_similarity: float | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[tuple[Episode, float]]:
        """Episodes relevant to a task, found by its text (``search`` with the task as the query).

        Raises:
            StoreError: as ``search``.
        """
        return self.search(task_text, k=k, min_similarity=min_similarity, agent_id=agent_id, session_id=session_id)

    def clear(self, *, session_id: str | None = None) -> int:
        """Delete every episode, or only those of ``session_id``; returns how many were deleted.

        Raises:
            StoreError: the write failed.
        """
        return self._clear() if session_id is None else self._clear(EpisodeRow.session_id == session_id)

    def export(self) -> list[dict[str, Any]]:
        """Every episode as a JSON-ready dict, oldest first (vectors left out).

        Raises:
            StoreError: the read failed.
        """
        return self._export(episode_from_row)

    # -- hooks ----------------------------------------------------------------------------

    def _row_text(self, row: EpisodeRow) -> str:
        return embedding_text(row.task_title, row.reflection, row.root_cause, row.improvement)

    def _loaded(self, rows: Sequence[EpisodeRow]) -> None:
        self._owners.update({row.id: (row.agent_id, row.session_id) for row in rows})

    def _dropped(self, ids: Sequence[str]) -> None:
        for item_id in ids:
            self._owners.pop(item_id, None)

    # Last in the class: a method named ``list`` would shadow the builtin in the annotations below it.
    def list(self, *, agent_id: str | None = None, session_id: str | None = None, limit: int = 50) -> list[Episode]:
        """Up to ``limit`` episodes, newest first, optionally of one agent and/or session.

        Raises:
            StoreError: the read failed.
        """
        query = select(EpisodeRow).order_by(EpisodeRow.seq.desc(), EpisodeRow.id.desc()).limit(max(limit, 0))
        if agent_id is not None:
            query = query.where(EpisodeRow.agent_id == agent_id)
        if session_id is not None:
            query = query.where(EpisodeRow.session_id == session_id)
        with self._transaction("list episodes", write=False) as db:
            return [episode_from_row(row) for row in db.scalars(query)]
