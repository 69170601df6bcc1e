"""The CLI's machine side: ``--json`` on every list and show command, whole ids in pipes, literal help text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from tests.cli.helpers import REPO, SolvedAdd, run_cli
from typer.testing import CliRunner

from debatecode.cli.app import app

REPLIES = str(REPO / "examples" / "replies" / "add.yaml")
NARROW = {"COLUMNS": "40"}
"""A terminal narrower than any table: nothing may be cut off all the same."""


@pytest.fixture
def solved(solved_add: SolvedAdd) -> tuple[Path, str]:
    """A folder whose store holds one scripted session (the shared run, read only), and that session's id."""
    return solved_add.folder, solved_add.session_id


def _json(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    proc = run_cli(*args, "--json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_sessions_list_json_on_an_empty_store_is_an_empty_array(tmp_path: Path) -> None:
    assert _json("sessions", "list", cwd=tmp_path) == []


def test_sessions_list_and_show_as_json(solved: tuple[Path, str]) -> None:
    cwd, session_id = solved
    sessions = _json("sessions", "list", cwd=cwd)
    assert [s["id"] for s in sessions] == [session_id]
    assert sessions[0]["task_title"] == "Add two numbers"
    assert {"status", "model", "config", "outcome", "created_at", "prompt_tokens"} <= set(sessions[0])
    shown = _json("sessions", "show", session_id[:6], cwd=cwd)
    assert set(shown) == {"session", "turns", "versions"}
    assert shown["session"]["id"] == session_id
    # 37 model turns (Red's distinguish among them), three adjudication/ranking probe runs, two early-stop probe runs
    assert len(shown["turns"]) == 42
    assert all(turn["session_id"] == session_id and "content" in turn for turn in shown["turns"])
    assert all(len(version["commit_sha"]) == 40 for version in shown["versions"])
    assert _json("sessions", "gates", session_id, cwd=cwd) == []


def test_piped_tables_never_cut_ids(solved: tuple[Path, str]) -> None:
    cwd, session_id = solved
    listing = run_cli("sessions", "list", cwd=cwd, env=NARROW)
    assert listing.returncode == 0, listing.stderr
    assert session_id in listing.stdout
    assert "…" not in listing.stdout
    assert f"scripted:{REPLIES}" in listing.stdout
    show = run_cli("sessions", "show", session_id, cwd=cwd, env=NARROW)
    assert show.returncode == 0, show.stderr
    shas = [v["commit_sha"] for v in _json("sessions", "show", session_id, cwd=cwd)["versions"]]
    assert shas and all(sha in show.stdout for sha in shas)
    assert "42 turns" in show.stdout


@pytest.fixture
def memory_store(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], list[str]]]:
    """A store with two episodes and one lesson; the env pointing the CLI at it; the episode ids, oldest first."""
    from debatecode.memory import Episode, EpisodicMemory, HashingEmbedder, MemorySettings, WisdomStore

    url = f"sqlite:///{tmp_path / 'mem.db'}"
    settings = MemorySettings(embedder="hashing")
    embedder = HashingEmbedder(settings.hashing_dim)
    ids = []
    with EpisodicMemory(url, settings, embedder) as memory:
        for reflection in ("off by one in the [range] loop bound", "json parsing failed on an empty body"):
            episode = Episode(session_id="s-1", agent_id="agent-1", task_title="Sum [a, b]", reflection=reflection)
            ids.append(memory.add(episode).id)
    with WisdomStore(url, settings, embedder) as wisdom:
        wisdom.add("Check loop bounds against the examples.", sources=ids[:1], task_hash="t")
    yield tmp_path, {"DEBATECODE_STORE_URL": url, "DEBATECODE_MEMORY__EMBEDDER": "hashing"}, ids


def test_memory_commands_as_json(memory_store: tuple[Path, dict[str, str], list[str]]) -> None:
    cwd, env, ids = memory_store
    episodes = _json("memory", "list", cwd=cwd, env=env)
    assert [e["id"] for e in episodes] == ids[::-1]
    assert episodes[0]["reflection"] == "json parsing failed on an empty body"
    hits = _json("memory", "search", "off by one", "--min-similarity", "-1", cwd=cwd, env=env)
    assert [h["rank"] for h in hits] == [1, 2]
    assert hits[0]["id"] == ids[0]
    assert all(isinstance(h["score"], float) and isinstance(h["below_threshold"], bool) for h in hits)
    shown = _json("memory", "show", ids[0][:8], cwd=cwd, env=env)
    assert shown["id"] == ids[0] and shown["task_title"] == "Sum [a, b]"
    lessons = _json("memory", "lessons", cwd=cwd, env=env)
    assert [lesson["text"] for lesson in lessons] == ["Check loop bounds against the examples."]
    assert "score" not in lessons[0]
    ranked = _json("memory", "lessons", "loop bounds", "--min-similarity", "-1", cwd=cwd, env=env)
    assert ranked[0]["rank"] == 1 and "score" in ranked[0]


def test_memory_json_on_an_empty_store(tmp_path: Path) -> None:
    env = {"DEBATECODE_STORE_URL": f"sqlite:///{tmp_path / 'empty.db'}", "DEBATECODE_MEMORY__EMBEDDER": "hashing"}
    assert _json("memory", "list", cwd=tmp_path, env=env) == []
    assert _json("memory", "lessons", cwd=tmp_path, env=env) == []
    assert _json("memory", "search", "anything", cwd=tmp_path, env=env) == []


def test_piped_memory_tables_show_whole_ids_and_literal_text(
    memory_store: tuple[Path, dict[str, str], list[str]],
) -> None:
    cwd, env, ids = memory_store
    for args in (("memory", "list"), ("memory", "search", "off by one", "--min-similarity", "-1")):
        proc = run_cli(*args, cwd=cwd, env={**env, **NARROW})
        assert proc.returncode == 0, proc.stderr
        assert all(episode_id in proc.stdout for episode_id in ids), proc.stdout
        assert "Sum [a, b]" in proc.stdout
    proc = run_cli("memory", "list", cwd=cwd, env={**env, **NARROW})
    assert "the [range] loop bound" in proc.stdout


def test_sandbox_doctor_json_is_one_verdict(tmp_path: Path) -> None:
    verdict = _json("sandbox", "doctor", cwd=tmp_path)
    assert set(verdict) == {"configured", "auto", "auto_refusal", "backends"}
    assert [b["name"] for b in verdict["backends"]] == ["docker", "local", "unsafe-host"]
    assert all(set(b) == {"name", "usable", "chosen", "reason"} for b in verdict["backends"])
    chosen = [b["name"] for b in verdict["backends"] if b["chosen"]]
    assert chosen == ([verdict["auto"]] if verdict["auto"] else [])
    assert (verdict["auto_refusal"] is None) == (verdict["auto"] is not None)


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


_BRACKETED = re.compile(r"\[[^\]\s]+\]")
"""A bracketed word such as ``[memory]`` or ``[hooks.git]`` (an escaping backslash before it is left out)."""


def test_help_shows_bracketed_words_literally() -> None:
    root = typer.main.get_command(app)
    runner = CliRunner()
    checked = 0
    for path, command in _commands(root):
        texts = [command.help or "", command.epilog or ""] + [getattr(p, "help", None) or "" for p in command.params]
        words = {word for text in texts for word in _BRACKETED.findall(text)}
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        for word in words:
            assert word in result.output, f"`debatecode {' '.join(path)} --help` lost {word}"
            checked += 1
        assert "\\[" not in result.output, path
    assert checked >= 6  # the [memory] and [hooks.*] help strings at least


def test_every_list_and_show_command_takes_json() -> None:
    root = typer.main.get_command(app)
    found = {
        " ".join(path): any("--json" in getattr(p, "opts", []) for p in command.params)
        for path, command in _commands(root)
        if path and path[-1] in ("list", "show", "search", "lessons", "gates", "doctor")
    }
    assert set(found) >= {
        "sessions list",
        "sessions show",
        "sessions gates",
        "memory list",
        "memory search",
        "memory show",
        "memory lessons",
        "sandbox doctor",
    }
    assert all(found.values()), found
