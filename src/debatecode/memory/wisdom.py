"""``WisdomStore``: generalisable lessons, kept across sessions and retrieved for new tasks.

A lesson is a short text ("check the loop bounds against the examples before
returning"), embedded as it is. Adding a lesson that says what a stored lesson
says already (cosine similarity ≥ ``DUPLICATE_SIMILARITY``) merges it into the
stored one: its sources and task are appended, the text is kept. ``relevant``
finds the lessons closest to a task's text and counts each use.

Lessons live in the ``lessons`` table of the session store's database, next to
the episodes they were drawn from; they are never evicted.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select, update

from debatecode.errors import StoreError
from debatecode.memory._table import EmbeddedTable, vector_bytes
from debatecode.memory.embeddings import Embedder
from debatecode.memory.episodes import Lesson
from debatecode.memory.settings import MemorySettings
from debatecode.store.models import LessonRow, row_values

__all__ = ["DUPLICATE_SIMILARITY", "WisdomStore"]

logger = logging.getLogger(__name__)

DUPLICATE_SIMILARITY = 0.9
"""A new lesson at least this similar to a stored one is merged into it."""


def lesson_from_row(row: LessonRow) -> Lesson:
    """The ``Lesson`` a row stores (its vector columns left out).

    Raises:
        pydantic.ValidationError: the stored values do not fit (the store turns
            this into ``StoreError``).
    """
    return Lesson.model_validate({name: getattr(row, name) for name in Lesson.model_fields})


def _merged(existing: list[str], new: list[str]) -> list[str]:
    return existing + [item for item in dict.fromkeys(new) if item not in existing]


class WisdomStore(EmbeddedTable[LessonRow]):
    """Lessons with their vectors, deduplicated on the way in and ranked by similarity on the way out.

    Thread-safe. ``settings.wisdom`` is not checked here: whoever injects lessons checks it.
    """

    row_type = LessonRow
    order_column = "created_at"
    kind = "lesson"

    def __init__(self, store_url: str, settings: MemorySettings, embedder: Embedder | None = None) -> None:
        """Open the lessons in the store at ``store_url``, with ``embedder`` (default: ``settings.embedder``).

        Raises:
            StoreError: the store cannot be opened or read, or stored vectors
                cannot be recomputed.
            ConfigError: the embedder named in ``settings`` is unknown or not installed.
        """
        super().__init__(store_url, settings, embedder)

    def add(self, text: str, *, sources: list[str], task_hash: str) -> Lesson:
        """Store a lesson, or merge it into a stored lesson that says the same (similarity ≥ 0.9).

        A merge appends the new ``sources`` and ``task_hash`` to the stored
        lesson, keeps its text and its ``uses``, and returns it.

        Raises:
            StoreError: ``text`` is blank, the embedder failed, or the write failed.
        """
        text = text.strip()
        if not text:
            raise StoreError("cannot add a blank lesson")
        vector = self._embed_one(text)
        with self._lock:
            self._sync()
            for lesson_id, score in self._index.search(vector, 1, min_score=DUPLICATE_SIMILARITY):
                merged = self._merge(lesson_id, sources, task_hash)
                if merged is not None:
                    logger.debug("lesson merged into %s (similarity %.2f)", lesson_id, score)
                    return merged
            lesson = Lesson(
                text=text, source_episode_ids=_merged([], sources), task_hashes=[task_hash] if task_hash else []
            )
            with self._transaction(f"add lesson {lesson.id}", write=True) as db:
                db.add(
                    LessonRow(
                        **row_values(lesson),
                        embedding=vector_bytes(vector),
                        embedder=self.embedder.name,
                        dim=self.embedder.dim,
                    )
                )
            self._index.add([lesson.id], vector.reshape(1, -1))
            self._signature = None
        return lesson

    def search(
        self, query: str, *, k: int | None = None, min_similarity: float | None = None
    ) -> list[tuple[Lesson, float]]:
        """The lessons most similar to ``query``, best first, without counting a use.

        ``k`` defaults to ``settings.wisdom_k``, ``min_similarity`` to ``settings.similarity_threshold``.

        Raises:
            StoreError: the embedder failed or the read failed.
        """
        vector = self._embed_one(query)
        with self._lock:
            self._sync()
            hits = self._index.search(
                vector,
                self.settings.wisdom_k if k is None else k,
                min_score=self.settings.similarity_threshold if min_similarity is None else min_similarity,
            )
        if not hits:
            return []
        with self._transaction("read the lessons found", write=False) as db:
            rows = {row.id: row for row in db.scalars(select(LessonRow).where(LessonRow.id.in_([i for i, _ in hits])))}
            return [(lesson_from_row(rows[i]), score) for i, score in hits if i in rows]

    def relevant(
        self, task_text: str, k: int | None = None, min_similarity: float | None = None
    ) -> list[tuple[Lesson, float]]:
        """The lessons most relevant to a task, best first; each returned lesson's ``uses`` goes up by one.

        Raises:
            StoreError: the embedder failed, or the read or write failed.
        """
        hits = self.search(task_text, k=k, min_similarity=min_similarity)
        if not hits:
            return []
        ids = [lesson.id for lesson, _ in hits]
        with self._transaction("count the uses of lessons", write=True) as db:
            db.execute(update(LessonRow).where(LessonRow.id.in_(ids)).values(uses=LessonRow.uses + 1))
        return [(lesson.model_copy(update={"uses": lesson.uses + 1}), score) for lesson, score in hits]

    def get(self, id_or_prefix: str) -> Lesson:
        """The lesson with this id, or the only one whose id starts with it.

        Raises:
            RecordNotFound: no lesson matches, or the prefix matches several.
            StoreError: the read failed.
        """
        with self._transaction(f"read lesson {id_or_prefix!r}", write=False) as db:
            return lesson_from_row(self._get_row(db, id_or_prefix))

    def clear(self) -> int:
        """Delete every lesson; returns how many were deleted.

        Raises:
            StoreError: the write failed.
        """
        return self._clear()

    def export(self) -> list[dict[str, Any]]:
        """Every lesson as a JSON-ready dict, oldest first (vectors left out).

        Raises:
            StoreError: the read failed.
        """
        return self._export(lesson_from_row)

    def _merge(self, lesson_id: str, sources: list[str], task_hash: str) -> Lesson | None:
        with self._transaction(f"merge into lesson {lesson_id}", write=True) as db:
            row = db.get(LessonRow, lesson_id, with_for_update=True)
            if row is None:
                return None
            row.source_episode_ids = _merged(list(row.source_episode_ids), sources)
            row.task_hashes = _merged(list(row.task_hashes), [task_hash] if task_hash else [])
            return lesson_from_row(row)

    def _row_text(self, row: LessonRow) -> str:
        return row.text

    # Last in the class: a method named ``list`` would shadow the builtin in the annotations below it.
    def list(self, *, limit: int | None = None) -> list[Lesson]:
        """Lessons, newest first (all of them unless ``limit``).

        Raises:
            StoreError: the read failed.
        """
        query = select(LessonRow).order_by(LessonRow.created_at.desc(), LessonRow.id.desc())
        if limit is not None:
            query = query.limit(max(limit, 0))
        with self._transaction("list lessons", write=False) as db:
            return [lesson_from_row(row) for row in db.scalars(query)]
