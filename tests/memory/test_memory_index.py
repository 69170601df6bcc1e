"""VectorIndex: exact top-k by cosine, filtering, removal and growth."""

from __future__ import annotations

import numpy as np
import pytest
from tests.support.threads import errors_in_threads

from debatecode.memory import VectorIndex


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_top_k_equals_a_full_sort_of_the_cosines() -> None:
    rng = np.random.default_rng(7)
    vectors = unit(rng, 2000, 48)
    index = VectorIndex(48)
    index.add([f"v{i}" for i in range(2000)], vectors * 3.0)  # rows are normalised on the way in
    for _ in range(20):
        query = rng.standard_normal(48).astype(np.float32)
        expected = np.argsort(-(vectors @ (query / np.linalg.norm(query))))[:7]
        hits = index.search(query, 7)
        assert [hit[0] for hit in hits] == [f"v{i}" for i in expected]
        scores = [hit[1] for hit in hits]
        assert scores == sorted(scores, reverse=True)
        assert all(-1.0 - 1e-5 <= s <= 1.0 + 1e-5 for s in scores)


def test_min_score_and_allowed_restrict_the_hits() -> None:
    index = VectorIndex(3)
    index.add(["x", "xy", "y", "z"], np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32))
    query = np.array([1, 0, 0], dtype=np.float32)
    assert [i for i, _ in index.search(query, 10)] == ["x", "xy", "y", "z"]
    assert [i for i, _ in index.search(query, 10, min_score=0.5)] == ["x", "xy"]
    assert [i for i, _ in index.search(query, 10, allowed={"y", "xy", "unknown"})] == ["xy", "y"]
    assert index.search(query, 10, allowed=set()) == []
    assert index.search(query, 0) == []
    assert index.search(query, 1)[0][1] == pytest.approx(1.0)


def test_remove_drops_vectors_and_keeps_the_others_searchable() -> None:
    rng = np.random.default_rng(3)
    vectors = unit(rng, 10, 8)
    index = VectorIndex(8)
    index.add([str(i) for i in range(10)], vectors)
    assert index.remove(["0", "5", "missing"]) == 2
    assert len(index) == 8
    assert "0" not in index
    assert "5" not in index
    for i in (1, 9):
        assert index.search(vectors[i], 1)[0][0] == str(i)
    assert {hit[0] for hit in index.search(vectors[0], 10)} == {str(i) for i in range(10)} - {"0", "5"}
    index.clear()
    assert len(index) == 0
    assert index.search(vectors[1], 3) == []


def test_adding_an_existing_id_replaces_its_vector_and_growth_keeps_rows() -> None:
    index = VectorIndex(2)
    index.add(["a"], np.array([[1.0, 0.0]], dtype=np.float32))
    index.add(["a"], np.array([[0.0, 1.0]], dtype=np.float32))
    assert len(index) == 1
    np.testing.assert_allclose(index.vector("a"), [0.0, 1.0])
    many = [f"id{i}" for i in range(1000)]
    index.add(many, np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (1000, 1)))
    assert len(index) == 1001
    np.testing.assert_allclose(index.vector("a"), [0.0, 1.0])
    np.testing.assert_allclose(index.vector("id999"), [1.0, 0.0])


def test_shapes_and_duplicates_are_rejected() -> None:
    index = VectorIndex(4)
    with pytest.raises(ValueError, match="dimension 4"):
        index.add(["a"], np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="2 vectors"):
        index.add(["a", "b"], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="unique"):
        index.add(["a", "a"], np.ones((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="3 dimensions"):
        index.search(np.ones(3, dtype=np.float32), 1)
    with pytest.raises(ValueError, match="positive"):
        VectorIndex(0)


def test_concurrent_adds_and_searches_lose_nothing() -> None:
    index = VectorIndex(16)

    def worker(n: int) -> None:
        rng = np.random.default_rng(n)
        for i in range(200):
            index.add([f"{n}-{i}"], unit(rng, 1, 16))
            index.search(unit(rng, 1, 16)[0], 5)

    assert errors_in_threads(worker, range(4)) == []
    assert len(index) == 800
    assert set(index.ids) == {f"{n}-{i}" for n in range(4) for i in range(200)}
