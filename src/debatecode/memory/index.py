"""``VectorIndex``: exact cosine search over unit vectors kept in one numpy matrix.

Vectors are stored L2-normalised, so cosine similarity is a dot product: one
matrix-vector product scores every vector, and ``np.argpartition`` picks the top
``k`` without sorting the rest. Exact search is fast enough for the sizes memory
holds (under 4 ms for 100k × 384 on two cores; see ``benchmarks/bench_memory.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

from debatecode.memory.embeddings import normalise_rows

__all__ = ["VectorIndex"]

_MIN_CAPACITY = 64


class VectorIndex:
    """Ids and their unit vectors; thread-safe.

    Rows live in a matrix that grows by doubling, so adding one vector at a time
    costs amortised O(dim). Removing a vector moves the last row into its place.
    """

    def __init__(self, dim: int) -> None:
        """An empty index of ``dim``-dimensional vectors.

        Raises:
            ValueError: ``dim`` is not positive.
        """
        if dim < 1:
            raise ValueError(f"vector dimension must be positive, not {dim}")
        self.dim = dim
        self._matrix = np.zeros((_MIN_CAPACITY, dim), dtype=np.float32)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._rows

    def __repr__(self) -> str:
        return f"VectorIndex(dim={self.dim}, size={len(self)})"

    @property
    def ids(self) -> list[str]:
        """The stored ids, in row order."""
        with self._lock:
            return list(self._ids)

    def vector(self, item_id: str) -> np.ndarray:
        """A copy of the stored (normalised) vector of ``item_id``.

        Raises:
            KeyError: ``item_id`` is not in the index.
        """
        with self._lock:
            return self._matrix[self._rows[item_id]].copy()

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Add (or replace) vectors; each row is L2-normalised on the way in.

        Raises:
            ValueError: the number of ids and rows differ, an id repeats, or the
                vectors are not ``dim`` wide.
        """
        rows = normalise_rows(vectors) if len(ids) else np.zeros((0, self.dim), dtype=np.float32)
        if rows.shape != (len(ids), self.dim):
            raise ValueError(f"expected {len(ids)} vectors of dimension {self.dim}, got an array of shape {rows.shape}")
        if len(set(ids)) != len(ids):
            raise ValueError("ids given to VectorIndex.add must be unique")
        with self._lock:
            fresh: list[int] = []
            for position, item_id in enumerate(ids):
                existing = self._rows.get(item_id)
                if existing is None:
                    fresh.append(position)
                else:
                    self._matrix[existing] = rows[position]
            start = len(self._ids)
            self._grow(start + len(fresh))
            self._matrix[start : start + len(fresh)] = rows[fresh]
            for offset, position in enumerate(fresh):
                self._rows[ids[position]] = start + offset
                self._ids.append(ids[position])

    def remove(self, ids: Iterable[str]) -> int:
        """Remove vectors by id; unknown ids are ignored. Returns how many were removed."""
        removed = 0
        with self._lock:
            for item_id in ids:
                row = self._rows.pop(item_id, None)
                if row is None:
                    continue
                last = len(self._ids) - 1
                if row != last:
                    moved = self._ids[last]
                    self._matrix[row] = self._matrix[last]
                    self._ids[row] = moved
                    self._rows[moved] = row
                self._ids.pop()
                removed += 1
        return removed

    def clear(self) -> None:
        """Remove every vector."""
        with self._lock:
            self._ids.clear()
            self._rows.clear()
            self._matrix = np.zeros((_MIN_CAPACITY, self.dim), dtype=np.float32)

    def search(
        self,
        vector: np.ndarray,
        k: int,
        *,
        min_score: float | None = None,
        allowed: set[str] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` ids most similar to ``vector``, best first, as ``(id, cosine)``.

        ``min_score`` drops hits below it; ``allowed`` restricts the search to
        those ids (ids not in the index are ignored). Ties keep row order.

        Raises:
            ValueError: ``vector`` is not ``dim`` wide.
        """
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape != (self.dim,):
            raise ValueError(f"query vector has {query.shape[0]} dimensions, the index {self.dim}")
        query = normalise_rows(query)[0]
        if k < 1:
            return []
        with self._lock:
            if allowed is None:
                positions = np.arange(len(self._ids))
                scores = self._matrix[: len(self._ids)] @ query
            else:
                positions = np.fromiter((self._rows[i] for i in allowed if i in self._rows), dtype=np.int64)
                positions.sort()
                scores = self._matrix[positions] @ query
            if scores.size == 0:
                return []
            if k < scores.size:
                top = np.argpartition(-scores, k - 1)[:k]
                order = top[np.lexsort((top, -scores[top]))]
            else:
                order = np.lexsort((np.arange(scores.size), -scores))
            hits = [(self._ids[int(positions[i])], float(scores[i])) for i in order]
        if min_score is not None:
            hits = [hit for hit in hits if hit[1] >= min_score]
        return hits

    def _grow(self, needed: int) -> None:
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.zeros((capacity, self.dim), dtype=np.float32)
        grown[: len(self._ids)] = self._matrix[: len(self._ids)]
        self._matrix = grown
