"""EpisodicMemory: FIFO eviction, filters, ranking with both embedders, persistence and embedder changes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from tests.memory.conftest import JSON_PARSING, OFF_BY_ONE
from tests.support.threads import errors_in_threads

from debatecode.errors import RecordNotFound, StoreError
from debatecode.memory import Episode, EpisodicMemory, HashingEmbedder, MemorySettings
from debatecode.memory.embeddings import Embedder, SentenceTransformerEmbedder

OFF_BY_ONE_QUERY = "off by one error in the range loop"


def db_file(store_url: str) -> Path:
    return Path(store_url.removeprefix("sqlite:///"))


def stored_vectors(store_url: str) -> list[tuple[str, str, int, int]]:
    with sqlite3.connect(db_file(store_url)) as conn:
        return conn.execute("select id, embedder, dim, length(embedding) from episodes order by seq").fetchall()


def test_fifo_eviction_drops_the_oldest_rows_and_their_vectors(
    store_url: str, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, MemorySettings(max_episodes=3), hashing) as memory:
        added = [memory.add(make_episode(task_title=f"task {i}", reflection=f"lesson number {i}")) for i in range(5)]
        assert memory.count() == 3
        assert [e.id for e in memory.list()] == [added[4].id, added[3].id, added[2].id]
        assert set(memory._index.ids) == {added[2].id, added[3].id, added[4].id}
        assert not memory.contains(added[0].id)
        assert memory.contains(added[4].id)
        found = {e.id for e, _ in memory.search("lesson number 0", k=10, min_similarity=-1.0)}
        assert found == {added[2].id, added[3].id, added[4].id}
    assert [row[0] for row in stored_vectors(store_url)] == [added[2].id, added[3].id, added[4].id]


def test_list_and_search_filter_by_agent_and_session(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, settings, hashing) as memory:
        for session in ("s1", "s2"):
            for agent in ("agent-1", "agent-2"):
                memory.add(make_episode(session_id=session, agent_id=agent, **OFF_BY_ONE))
        assert {(e.session_id, e.agent_id) for e in memory.list(agent_id="agent-2")} == {
            ("s1", "agent-2"),
            ("s2", "agent-2"),
        }
        assert {e.agent_id for e in memory.list(session_id="s1")} == {"agent-1", "agent-2"}
        assert len(memory.list(agent_id="agent-1", session_id="s2")) == 1
        assert len(memory.list(limit=3)) == 3
        hits = memory.search(OFF_BY_ONE_QUERY, k=10, agent_id="agent-1")
        assert {(e.session_id, e.agent_id) for e, _ in hits} == {("s1", "agent-1"), ("s2", "agent-1")}
        hits = memory.search(OFF_BY_ONE_QUERY, k=10, agent_id="agent-2", session_id="s2")
        assert [(e.session_id, e.agent_id) for e, _ in hits] == [("s2", "agent-2")]
        assert memory.search(OFF_BY_ONE_QUERY, agent_id="nobody") == []


@pytest.mark.parametrize("embedder_name", ["hashing", "sentence-transformers"])
def test_an_off_by_one_episode_ranks_above_a_json_one_for_an_off_by_one_query(
    embedder_name: str,
    store_url: str,
    settings: MemorySettings,
    hashing: HashingEmbedder,
    request: pytest.FixtureRequest,
    make_episode: Callable[..., Episode],
) -> None:
    embedder: Embedder = hashing if embedder_name == "hashing" else request.getfixturevalue("minilm")
    with EpisodicMemory(store_url, settings, embedder) as memory:
        json_episode = memory.add(make_episode(**JSON_PARSING))
        off_by_one = memory.add(make_episode(**OFF_BY_ONE))
        for i in range(5):
            memory.add(make_episode(task_title=f"unrelated {i}", reflection=f"the colour of widget {i} was wrong"))
        hits = memory.search(OFF_BY_ONE_QUERY, k=3, min_similarity=-1.0)
        ranked = [e.id for e, _ in hits]
        assert ranked[0] == off_by_one.id
        assert json_episode.id not in ranked[:1]
        scores = dict((e.id, s) for e, s in memory.search(OFF_BY_ONE_QUERY, k=10, min_similarity=-1.0))
        assert scores[off_by_one.id] > scores[json_episode.id]
        # With the default threshold (0.3) only the relevant episode is returned.
        assert [e.id for e, _ in memory.search(OFF_BY_ONE_QUERY)] == [off_by_one.id]
        assert [e.id for e, _ in memory.for_task("sum_range: an off-by-one bug in a range loop", k=1)] == [
            off_by_one.id
        ]


def test_reopening_reloads_the_stored_vectors(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, settings, hashing) as memory:
        off_by_one = memory.add(make_episode(**OFF_BY_ONE))
        memory.add(make_episode(**JSON_PARSING))
        before = memory._index.vector(off_by_one.id)

    class CountingEmbedder(HashingEmbedder):
        texts: list[str]

        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            self.texts = [*getattr(self, "texts", []), *texts]
            return super().embed(texts)

    counting = CountingEmbedder(256)
    with EpisodicMemory(store_url, settings, counting) as reopened:
        assert getattr(counting, "texts", []) == []  # vectors came from the database, none recomputed
        assert reopened.count() == 2
        np.testing.assert_array_equal(reopened._index.vector(off_by_one.id), before)
        (best, score), *_ = reopened.search(OFF_BY_ONE_QUERY)
        assert best == off_by_one
        assert score > 0.3


def test_a_change_of_embedder_recomputes_the_vectors(
    store_url: str,
    settings: MemorySettings,
    minilm: SentenceTransformerEmbedder,
    make_episode: Callable[..., Episode],
) -> None:
    with EpisodicMemory(store_url, settings, minilm) as memory:
        off_by_one = memory.add(make_episode(**OFF_BY_ONE))
        memory.add(make_episode(**JSON_PARSING))
    assert {(name, dim, size) for _, name, dim, size in stored_vectors(store_url)} == {
        ("sentence-transformers/all-MiniLM-L6-v2", 384, 384 * 4)
    }
    with EpisodicMemory(store_url, settings, HashingEmbedder(128)) as hashed:
        assert {(name, dim, size) for _, name, dim, size in stored_vectors(store_url)} == {("hashing/v1", 128, 512)}
        assert hashed.search(OFF_BY_ONE_QUERY)[0][0].id == off_by_one.id
    with EpisodicMemory(store_url, settings, HashingEmbedder(64)) as smaller:
        assert {dim for _, _, dim, _ in stored_vectors(store_url)} == {64}
        assert smaller.search(OFF_BY_ONE_QUERY)[0][0].id == off_by_one.id
    with EpisodicMemory(store_url, settings, minilm) as back:
        assert {dim for _, _, dim, _ in stored_vectors(store_url)} == {384}
        assert back.search(OFF_BY_ONE_QUERY)[0][0].id == off_by_one.id


def test_episodes_added_through_another_instance_are_found(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, settings, hashing) as reader, EpisodicMemory(store_url, settings, hashing) as writer:
        assert reader.search(OFF_BY_ONE_QUERY) == []
        episode = writer.add(make_episode(**OFF_BY_ONE))
        assert [e.id for e, _ in reader.search(OFF_BY_ONE_QUERY)] == [episode.id]
        writer.clear()
        assert reader.search(OFF_BY_ONE_QUERY) == []
        replacement = writer.add(make_episode(**OFF_BY_ONE))
        assert [e.id for e, _ in reader.search(OFF_BY_ONE_QUERY)] == [replacement.id]


def test_get_accepts_a_unique_prefix_and_names_what_is_wrong(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, settings, hashing) as memory:
        first = memory.add(make_episode(id="abc123", code="def f():\n    return 1\n"))
        memory.add(make_episode(id="abd456"))
        assert memory.get("abc123") == first
        assert memory.get("abc") == first
        with pytest.raises(RecordNotFound, match="matches several episodes: abc123, abd456"):  # bad input: exit 2
            memory.get("ab")
        with pytest.raises(RecordNotFound, match="no episode matches 'zz'"):
            memory.get("zz")
        with pytest.raises(StoreError, match="UNIQUE constraint failed"):
            memory.add(make_episode(id="abc123"))


def test_export_is_json_ready_without_vectors_and_clear_counts(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, settings, hashing) as memory:
        first = memory.add(make_episode(session_id="s1", **OFF_BY_ONE))
        memory.add(make_episode(session_id="s2", **JSON_PARSING))
        memory.add(make_episode(session_id="s2"))
        exported = memory.export()
        assert exported[0]["id"] == first.id
        assert json.loads(json.dumps(exported)) == exported
        assert set(exported[0]) == set(Episode.model_fields)
        assert Episode.model_validate(exported[0]) == first
        assert memory.clear(session_id="s2") == 2
        assert [e.id for e in memory.list()] == [first.id]
        assert len(memory._index) == 1
        assert memory.clear() == 1
        assert memory.count() == 0
        assert len(memory._index) == 0
        assert memory.search(OFF_BY_ONE_QUERY, min_similarity=-1.0) == []


def test_concurrent_adds_from_threads_keep_rows_and_index_in_step(
    store_url: str, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    with EpisodicMemory(store_url, MemorySettings(max_episodes=25), hashing) as memory:

        def worker(agent: str) -> None:
            for i in range(10):
                memory.add(make_episode(agent_id=agent, reflection=f"{agent} attempt {i}"))
                memory.search(f"{agent} attempt", k=3)

        assert errors_in_threads(worker, [f"agent-{n}" for n in range(4)]) == []
        assert memory.count() == 25
        memory.search("anything")  # brings the index in step with the table
        assert set(memory._index.ids) == {e.id for e in memory.list(limit=100)}


def test_a_closed_memory_refuses_work(
    store_url: str, settings: MemorySettings, hashing: HashingEmbedder, make_episode: Callable[..., Episode]
) -> None:
    memory = EpisodicMemory(store_url, settings, hashing)
    memory.close()
    memory.close()
    with pytest.raises(StoreError, match="closed"):
        memory.add(make_episode())


def test_an_unusable_store_url_is_a_store_error(settings: MemorySettings, hashing: HashingEmbedder) -> None:
    with pytest.raises(StoreError, match="invalid store URL"):
        EpisodicMemory("not a url", settings, hashing)
