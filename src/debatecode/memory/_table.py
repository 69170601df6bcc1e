"""``EmbeddedTable``: a store table of records with vectors, mirrored in a ``VectorIndex``.

The part ``EpisodicMemory`` and ``WisdomStore`` share: opening the session store
(which migrates it), transactions, vectors as bytes, deleting and exporting records,
and keeping the in-memory index in step with the table, recomputing vectors another
embedder made.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Generic, Self, TypeVar

import numpy as np
from pydantic import BaseModel
from sqlalchemy import ColumnElement, delete, func, select, update
from sqlalchemy.orm import InstrumentedAttribute, Session

from debatecode.errors import RecordNotFound, StoreError
from debatecode.memory.embeddings import Embedder, create_embedder
from debatecode.memory.index import VectorIndex
from debatecode.memory.settings import MemorySettings
from debatecode.store.models import EpisodeRow, LessonRow
from debatecode.store.repository import open_store

__all__ = ["EmbeddedTable", "chunks", "vector_bytes"]

logger = logging.getLogger(__name__)

RowT = TypeVar("RowT", EpisodeRow, LessonRow)
_CHUNK = 500
"""Ids per ``IN (...)`` clause: well under every database's parameter limit."""
_EMBED_BATCH = 256
_SHOWN = 10


def vector_bytes(vector: np.ndarray) -> bytes:
    """A vector as stored: little-endian float32 bytes."""
    return np.asarray(vector, dtype="<f4").tobytes()


def chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[Sequence[str]]:
    """``items`` in slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


class EmbeddedTable(Generic[RowT]):
    """A table of records with stored vectors, mirrored in a ``VectorIndex``.

    The shared part of ``EpisodicMemory`` and ``WisdomStore``: opening the store,
    transactions, and keeping the index in step with the table.
    """

    row_type: ClassVar[type[Any]]
    order_column: ClassVar[str]
    kind: ClassVar[str]

    def __init__(self, store_url: str, settings: MemorySettings, embedder: Embedder | None = None) -> None:
        """Open the store at ``store_url`` (migrating it) and load the stored vectors.

        Raises:
            StoreError: the store cannot be opened or read, or stored vectors
                cannot be recomputed.
            ConfigError: ``embedder`` is None and ``settings.embedder`` names an
                embedder that is unknown or not installed.
        """
        self.settings = settings
        self.embedder: Embedder = embedder if embedder is not None else create_embedder(settings.embedder, settings)
        self._store = open_store(store_url)
        self._lock = threading.RLock()
        self._index = VectorIndex(self.embedder.dim)
        self._signature: tuple[int, Any, str | None] | None = None
        try:
            with self._lock:
                self._sync()
        except BaseException:
            self._store.close()
            raise

    @property
    def url(self) -> str:
        """The store's URL, password masked."""
        return self._store.url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, embedder={self.embedder.name!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the database connections. Closing twice is harmless."""
        self._store.close()

    def count(self) -> int:
        """How many records are stored.

        Raises:
            StoreError: the read failed.
        """
        with self._transaction(f"count {self.kind}s", write=False) as db:
            return int(db.scalar(select(func.count()).select_from(self.row_type)) or 0)

    def contains(self, record_id: str) -> bool:
        """Whether a record with exactly this id is stored.

        Raises:
            StoreError: the read failed.
        """
        with self._transaction(f"look up {self.kind} {record_id}", write=False) as db:
            return db.get(self.row_type, record_id) is not None

    # -- for the subclasses ---------------------------------------------------------------

    def _clear(self, *conditions: ColumnElement[bool]) -> int:
        """Delete the records that meet every condition (all of them without one), from the table and the index.

        Raises:
            StoreError: the write failed.
        """
        table = self.row_type
        with self._lock:
            with self._transaction(f"clear {self.kind}s", write=True) as db:
                ids = list(db.scalars(select(table.id).where(*conditions)))
                self._delete_rows(db, ids)
            self._index.remove(ids)
            self._dropped(ids)
            self._signature = None
        return len(ids)

    def _delete_rows(self, db: Session, ids: Sequence[str]) -> None:
        """Delete the rows with these ids in ``db``'s transaction, a chunk of ids per statement."""
        table = self.row_type
        for chunk in chunks(ids):
            db.execute(delete(table).where(table.id.in_(chunk)))

    def _export(self, from_row: Callable[[RowT], BaseModel]) -> list[dict[str, Any]]:
        """Every record (``from_row`` of its row) as a JSON-ready dict, oldest first (vectors left out).

        Raises:
            StoreError: the read failed.
        """
        table = self.row_type
        order: InstrumentedAttribute[Any] = getattr(table, self.order_column)
        with self._transaction(f"export {self.kind}s", write=False) as db:
            rows = db.scalars(select(table).order_by(order, table.id))
            return [from_row(row).model_dump(mode="json") for row in rows]

    # -- internals --------------------------------------------------------------------

    def _transaction(self, action: str, *, write: bool) -> AbstractContextManager[Session]:
        # The session store's transaction: its engine (migrated at open), its
        # SQLite write locking, and its translation of every error to StoreError.
        return self._store._transaction(action, write=write)

    def _row_text(self, row: RowT) -> str:
        raise StoreError(f"{type(self).__name__} does not say what text a {self.kind} is embedded from")

    def _loaded(self, rows: Sequence[RowT]) -> None:
        """Hook: these rows' vectors were just added to the index."""

    def _dropped(self, ids: Sequence[str]) -> None:
        """Hook: these ids left the index."""

    def _embed_one(self, text: str) -> np.ndarray:
        return np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]

    def _stored_vector(self, row: RowT) -> np.ndarray | None:
        """The row's vector if this embedder made it, else None (it must be recomputed)."""
        if row.embedder != self.embedder.name or row.dim != self.embedder.dim:
            return None
        if len(row.embedding) != 4 * self.embedder.dim:
            return None
        return np.frombuffer(row.embedding, dtype="<f4").astype(np.float32)

    def _read_signature(self) -> tuple[int, Any, str | None]:
        table = self.row_type
        order: InstrumentedAttribute[Any] = getattr(table, self.order_column)
        with self._transaction(f"read the {self.kind}s", write=False) as db:
            count = int(db.scalar(select(func.count()).select_from(table)) or 0)
            newest = db.execute(select(order, table.id).order_by(order.desc(), table.id.desc()).limit(1)).first()
        return (count, newest[0] if newest else None, newest[1] if newest else None)

    def _sync(self) -> None:
        """Bring the index in step with the table (call with ``_lock`` held).

        Cheap when nothing changed: one count and one indexed lookup.
        """
        signature = self._read_signature()
        if signature == self._signature:
            return
        table = self.row_type
        with self._transaction(f"read the {self.kind} ids", write=False) as db:
            stored = set(db.scalars(select(table.id)))
        gone = [item_id for item_id in self._index.ids if item_id not in stored]
        if gone:
            self._index.remove(gone)
            self._dropped(gone)
        missing = sorted(stored.difference(self._index.ids))
        for chunk in chunks(missing):
            with self._transaction(f"read the {self.kind} vectors", write=False) as db:
                rows: list[RowT] = list(db.scalars(select(table).where(table.id.in_(chunk))))
            self._add_rows(rows)
        self._signature = signature

    def _add_rows(self, rows: list[RowT]) -> None:
        vectors: dict[str, np.ndarray] = {}
        stale: list[RowT] = []
        for row in rows:
            vector = self._stored_vector(row)
            if vector is None:
                stale.append(row)
            else:
                vectors[row.id] = vector
        if stale:
            vectors.update(self._recompute(stale))
        if rows:
            ids = [row.id for row in rows]
            self._index.add(ids, np.stack([vectors[i] for i in ids]))
            self._loaded(rows)

    def _recompute(self, rows: list[RowT]) -> dict[str, np.ndarray]:
        """Embed ``rows`` again with this embedder and store the new vectors."""
        previous = sorted({f"{row.embedder} ({row.dim})" for row in rows})
        logger.info(
            "re-embedding %d %ss with %s (%d dimensions); they were embedded with %s",
            len(rows),
            self.kind,
            self.embedder.name,
            self.embedder.dim,
            ", ".join(previous),
        )
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(rows), _EMBED_BATCH):
            batch = rows[start : start + _EMBED_BATCH]
            embedded = np.asarray(self.embedder.embed([self._row_text(row) for row in batch]), dtype=np.float32)
            vectors.update({row.id: embedded[i] for i, row in enumerate(batch)})
        table = self.row_type
        with self._transaction(f"store the re-embedded {self.kind} vectors", write=True) as db:
            for item_id, vector in vectors.items():
                db.execute(
                    update(table)
                    .where(table.id == item_id)
                    .values(embedding=vector_bytes(vector), embedder=self.embedder.name, dim=self.embedder.dim)
                )
        return vectors

    def _get_row(self, db: Session, id_or_prefix: str) -> RowT:
        table = self.row_type
        hint = f"List them with `debatecode memory {'list' if self.kind == 'episode' else 'lessons'}`."
        if not id_or_prefix:
            raise RecordNotFound(f"give a {self.kind} id or a prefix of one. {hint}")
        row: RowT | None = db.get(table, id_or_prefix)
        if row is not None:
            return row
        prefix_of_id = func.substr(table.id, 1, len(id_or_prefix)) == id_or_prefix
        matches: list[RowT] = list(db.scalars(select(table).where(prefix_of_id).order_by(table.id).limit(_SHOWN + 1)))
        if not matches:
            raise RecordNotFound(f"no {self.kind} matches {id_or_prefix!r}. {hint}")
        if len(matches) > 1:
            shown = ", ".join(match.id for match in matches[:_SHOWN])
            raise RecordNotFound(f"the prefix {id_or_prefix!r} matches several {self.kind}s: {shown}; give more of it")
        return matches[0]
