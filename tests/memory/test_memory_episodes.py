"""Episode and Lesson records: defaults, truncation and the text that is embedded."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from debatecode.memory import Episode, Lesson
from debatecode.memory.episodes import MAX_FAILURES, MAX_MESSAGE_CHARS, MAX_TASK_TEXT_CHARS


def test_episode_cuts_task_text_but_hashes_all_of_it(make_episode: Callable[..., Episode]) -> None:
    text = "Write sum_range(lo, hi). " * 200
    episode = make_episode(task_text=text)
    assert len(episode.task_text) == MAX_TASK_TEXT_CHARS
    assert episode.task_text.endswith("…")
    assert episode.task_hash == hashlib.sha256(text.encode()).hexdigest()
    assert make_episode(task_text=text, task_hash="given").task_hash == "given"


def test_episode_summarises_test_results(make_episode: Callable[..., Episode]) -> None:
    failures = [{"name": f"test_{i}", "message": "x" * 2000, "extra": 1} for i in range(50)]
    episode = make_episode(test_results={"passed": "3", "total": 53, "failures": failures, "suite": "visible"})
    results = episode.test_results
    assert results["passed"] == 3
    assert results["total"] == 53
    assert results["suite"] == "visible"
    assert len(results["failures"]) == MAX_FAILURES
    assert results["failures"][0] == {"name": "test_0", "message": "x" * (MAX_MESSAGE_CHARS - 1) + "…"}
    assert make_episode(test_results={}).test_results == {"passed": 0, "total": 0, "failures": []}


def test_episode_defaults_and_round_trip(make_episode: Callable[..., Episode]) -> None:
    episode = make_episode(root_cause="cause", improvement="fix")
    assert episode.schema_version == 1
    assert len(episode.id) == 32
    assert episode.created_at.tzinfo is not None
    assert episode.attempt == 1
    assert Episode.model_validate(episode.model_dump(mode="json")) == episode
    assert episode.embedding_text == "a task\nsomething went wrong\ncause\nfix"


def test_lesson_defaults() -> None:
    lesson = Lesson(text="Check loop bounds.")
    assert lesson.schema_version == 1
    assert lesson.uses == 0
    assert lesson.source_episode_ids == []
    assert lesson.task_hashes == []
    assert Lesson.model_validate(lesson.model_dump(mode="json")) == lesson
