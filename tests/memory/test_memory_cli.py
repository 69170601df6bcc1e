"""`debatecode memory ...` through the real console script, on a store filled through the API."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.cli.helpers import EXE, run_cli
from tests.memory.conftest import JSON_PARSING, OFF_BY_ONE

from debatecode.memory import Episode, EpisodicMemory, HashingEmbedder, MemorySettings, WisdomStore
from debatecode.memory.embeddings import SentenceTransformerEmbedder

CODE = "def sum_range(lo, hi):\n    return sum(range(lo, hi))\n"


@pytest.fixture
def filled(tmp_path: Path, make_episode: Callable[..., Episode]) -> tuple[Path, dict[str, str], dict[str, Episode]]:
    """A store with three episodes and two lessons (hashing vectors); the env that points the CLI at it."""
    url = f"sqlite:///{tmp_path / 'mem.db'}"
    settings = MemorySettings(embedder="hashing")
    embedder = HashingEmbedder(settings.hashing_dim)
    with EpisodicMemory(url, settings, embedder) as memory:
        episodes = {
            "json": memory.add(make_episode(agent_id="agent-2", session_id="s-json", **JSON_PARSING)),
            "off_by_one": memory.add(make_episode(agent_id="agent-1", session_id="s-range", code=CODE, **OFF_BY_ONE)),
            "other": memory.add(
                make_episode(agent_id="agent-1", session_id="s-json", reflection="widget colour [red] wrong")
            ),
        }
    with WisdomStore(url, settings, embedder) as wisdom:
        wisdom.add("Check loop bounds against the examples: range(n) stops before n.", sources=["e1"], task_hash="t")
        wisdom.add("Validate JSON input before parsing it.", sources=["e2"], task_hash="t")
    env = {"DEBATECODE_STORE_URL": url, "DEBATECODE_MEMORY__EMBEDDER": "hashing"}
    return tmp_path, env, episodes


def test_list_shows_episodes_newest_first_and_filters_by_agent(
    filled: tuple[Path, dict[str, str], dict[str, Episode]],
) -> None:
    cwd, env, episodes = filled
    proc = run_cli("memory", "list", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "3 of 3 episodes" in proc.stdout
    order = [proc.stdout.index(episodes[name].id[:12]) for name in ("other", "off_by_one", "json")]
    assert order == sorted(order)
    assert "widget colour [red] wrong" in proc.stdout  # stored text is never read as markup
    proc = run_cli("memory", "list", "--agent", "agent-2", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert episodes["json"].id[:12] in proc.stdout
    assert episodes["off_by_one"].id[:12] not in proc.stdout


def test_search_ranks_the_off_by_one_episode_first(filled: tuple[Path, dict[str, str], dict[str, Episode]]) -> None:
    cwd, env, episodes = filled
    proc = run_cli("memory", "search", "off by one", "--k", "3", "--min-similarity", "-1", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
    assert rows[0].split("│")[1].strip() == "1"
    assert episodes["off_by_one"].id[:12] in rows[0]
    assert "embedder hashing/v1" in proc.stdout
    assert len([row for row in rows if row.split("│")[1].strip().isdigit()]) == 3
    proc = run_cli("memory", "search", "the colour of a bar chart", "--min-similarity", "0.99", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "no episode has a similarity of at least 0.99" in proc.stdout


def test_search_with_the_default_embedder_returns_ranked_episodes(
    tmp_path: Path, minilm: SentenceTransformerEmbedder, make_episode: Callable[..., Episode]
) -> None:
    url = f"sqlite:///{tmp_path / 'default.db'}"
    with EpisodicMemory(url, MemorySettings(), minilm) as memory:
        memory.add(make_episode(**JSON_PARSING))
        off_by_one = memory.add(make_episode(**OFF_BY_ONE))
    proc = run_cli("memory", "search", "off by one", cwd=tmp_path, env={"DEBATECODE_STORE_URL": url})
    assert proc.returncode == 0, proc.stderr
    assert "embedder sentence-transformers/all-MiniLM-L6-v2" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
    assert [row.split("│")[1].strip() for row in rows] == ["1"]  # the JSON episode scores below 0
    assert off_by_one.id[:12] in rows[0]
    assert "below [memory] similarity_threshold = 0.30" in proc.stdout


def test_show_prints_the_whole_episode_by_prefix(filled: tuple[Path, dict[str, str], dict[str, Episode]]) -> None:
    cwd, env, episodes = filled
    episode = episodes["off_by_one"]
    proc = run_cli("memory", "show", episode.id[:10], cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"episode {episode.id}" in proc.stdout
    assert CODE in proc.stdout
    for text in (episode.reflection, episode.root_cause, episode.improvement):
        assert " ".join(text.split()) in " ".join(proc.stdout.split())
    assert "test_x" in proc.stdout
    proc = run_cli("memory", "show", "nosuchid", cwd=cwd, env=env)
    assert proc.returncode == 2  # an id that matches nothing is bad input, as for `sessions show` (issue 31)
    assert "no episode matches 'nosuchid'" in proc.stderr


def test_export_writes_json_with_and_without_lessons(filled: tuple[Path, dict[str, str], dict[str, Episode]]) -> None:
    cwd, env, episodes = filled
    proc = run_cli("memory", "export", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert list(data) == ["episodes"]
    assert [item["id"] for item in data["episodes"]] == [episodes[n].id for n in ("json", "off_by_one", "other")]
    assert "embedding" not in data["episodes"][0]
    proc = run_cli("memory", "export", "--lessons", "-o", "memory.json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "exported 3 episodes, 2 lessons to memory.json" in proc.stdout
    data = json.loads((cwd / "memory.json").read_text())
    assert len(data["episodes"]) == 3
    assert {lesson["text"] for lesson in data["lessons"]} == {
        "Check loop bounds against the examples: range(n) stops before n.",
        "Validate JSON input before parsing it.",
    }


def run_with_input(*args: str, cwd: Path, env: dict[str, str], answer: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    full_env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", **env})
    return subprocess.run(
        [str(EXE), *args], cwd=cwd, env=full_env, input=answer, capture_output=True, text=True, timeout=120
    )


def test_clear_asks_first_and_can_be_limited_to_a_session(
    filled: tuple[Path, dict[str, str], dict[str, Episode]],
) -> None:
    cwd, env, episodes = filled
    proc = run_with_input("memory", "clear", cwd=cwd, env=env, answer="n\n")
    assert proc.returncode == 1
    assert "Delete every episode" in proc.stdout
    assert "nothing deleted" in proc.stderr
    proc = run_cli("memory", "clear", "--session", "s-json", "--yes", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "deleted 2 episodes" in proc.stdout
    remaining = json.loads(run_cli("memory", "export", cwd=cwd, env=env).stdout)["episodes"]
    assert [item["id"] for item in remaining] == [episodes["off_by_one"].id]
    proc = run_with_input("memory", "clear", "--lessons", cwd=cwd, env=env, answer="y\n")
    assert proc.returncode == 0, proc.stderr
    assert "deleted 1 episodes and 2 lessons" in proc.stdout
    assert "no episodes yet" in run_cli("memory", "list", cwd=cwd, env=env).stdout
    assert "no lessons yet" in run_cli("memory", "lessons", cwd=cwd, env=env).stdout


def test_lessons_lists_and_ranks_by_query(filled: tuple[Path, dict[str, str], dict[str, Episode]]) -> None:
    cwd, env, _ = filled
    proc = run_cli("memory", "lessons", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Check loop bounds" in proc.stdout
    assert "Validate JSON input" in proc.stdout
    proc = run_cli("memory", "lessons", "loop bounds of a range", "--min-similarity", "-1", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
    assert rows[0].split("│")[1].strip() == "1"
    assert "Check loop bounds" in rows[0]
