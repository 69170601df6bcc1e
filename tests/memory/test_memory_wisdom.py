"""WisdomStore: near-duplicate lessons merge, relevant lessons are found and counted, and they persist."""

from __future__ import annotations

import json

import pytest

from debatecode.errors import StoreError
from debatecode.memory import HashingEmbedder, Lesson, MemorySettings, WisdomStore
from debatecode.memory.embeddings import SentenceTransformerEmbedder

LOOP_LESSON = "Check loop bounds against the examples: range(n) stops before n."
JSON_LESSON = "Validate JSON input before parsing it and report malformed data clearly."
NAMING_LESSON = "Match the function name and signature in the task exactly."


def test_a_near_duplicate_merges_into_the_stored_lesson(
    store_url: str, settings: MemorySettings, minilm: SentenceTransformerEmbedder
) -> None:
    with WisdomStore(store_url, settings, minilm) as wisdom:
        first = wisdom.add(LOOP_LESSON, sources=["e1"], task_hash="t1")
        again = wisdom.add(
            "Check loop bounds against the examples; range(n) stops before n.", sources=["e2", "e1"], task_hash="t2"
        )
        wisdom.add(JSON_LESSON, sources=["e3"], task_hash="t3")
        assert again.id == first.id
        assert again.text == LOOP_LESSON
        assert again.source_episode_ids == ["e1", "e2"]
        assert again.task_hashes == ["t1", "t2"]
        assert again.uses == 0
        assert wisdom.count() == 2
        assert wisdom.get(first.id[:8]) == again


def test_distinct_lessons_stay_apart(store_url: str, settings: MemorySettings, hashing: HashingEmbedder) -> None:
    with WisdomStore(store_url, settings, hashing) as wisdom:
        ids = {wisdom.add(text, sources=[], task_hash="t").id for text in (LOOP_LESSON, JSON_LESSON, NAMING_LESSON)}
        assert len(ids) == 3
        same = wisdom.add(LOOP_LESSON, sources=["e9"], task_hash="t")
        assert same.id in ids
        assert same.task_hashes == ["t"]
        assert wisdom.count() == 3
        with pytest.raises(StoreError, match="blank lesson"):
            wisdom.add("   ", sources=[], task_hash="t")


@pytest.mark.parametrize("embedder_name", ["hashing", "sentence-transformers"])
def test_relevant_ranks_lessons_by_similarity_and_counts_their_uses(
    embedder_name: str,
    store_url: str,
    settings: MemorySettings,
    hashing: HashingEmbedder,
    request: pytest.FixtureRequest,
) -> None:
    embedder = hashing if embedder_name == "hashing" else request.getfixturevalue("minilm")
    task = "Write sum_range(lo, hi) that adds the integers from lo to hi inclusive with a loop over range."
    with WisdomStore(store_url, settings, embedder) as wisdom:
        loop = wisdom.add(LOOP_LESSON, sources=["e1"], task_hash="t1")
        wisdom.add(JSON_LESSON, sources=["e2"], task_hash="t2")
        wisdom.add(NAMING_LESSON, sources=["e3"], task_hash="t3")
        ranked = wisdom.relevant(task, k=3, min_similarity=-1.0)
        assert ranked[0][0].id == loop.id
        assert [score for _, score in ranked] == sorted((score for _, score in ranked), reverse=True)
        assert all(lesson.uses == 1 for lesson, _ in ranked)
        assert wisdom.relevant(task, k=1, min_similarity=-1.0)[0][0].uses == 2
        assert wisdom.get(loop.id).uses == 2
        looked = wisdom.search(task, k=1, min_similarity=-1.0)
        assert looked[0][0].uses == 2  # looking is not using
        assert wisdom.get(loop.id).uses == 2
        assert wisdom.relevant("completely different: render a bar chart of the colours", min_similarity=0.99) == []


def test_lessons_persist_across_instances_and_export_and_clear(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder
) -> None:
    with WisdomStore(store_url, settings, hashing) as debate_a:
        lesson = debate_a.add(LOOP_LESSON, sources=["e1"], task_hash="t1")
        with WisdomStore(store_url, settings, hashing) as debate_b_open_meanwhile:
            assert debate_b_open_meanwhile.relevant("loop bounds and range", k=1)[0][0].id == lesson.id
    with WisdomStore(store_url, settings, hashing) as later:
        assert [item.id for item in later.list()] == [lesson.id]
        exported = later.export()
        assert json.loads(json.dumps(exported)) == exported
        assert set(exported[0]) == set(Lesson.model_fields)
        assert exported[0]["uses"] == 1
        assert later.clear() == 1
        assert later.list() == []
        assert later.relevant("loop bounds and range", min_similarity=-1.0) == []
