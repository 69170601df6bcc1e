"""The session folder of a design debate: metadata, round files, convergence and the debate list."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from debatecode.protocol.design.files import (
    MAX_METADATA_BYTES,
    SCHEMA_VERSION,
    DebateFiles,
    debates_dir,
    list_debates,
    write_text_atomic,
)
from debatecode.protocol.design.records import GateFlag, PollResult, Position, RoundRecord

NAMES = {"security": "Security", "contrarian": "Contrarian"}


def speech(perspective: str, kind: str, text: str, satisfaction: int | None = None, **extra: object) -> Position:
    return Position.model_validate(
        {
            "perspective": perspective,
            "agent": f"{perspective}-1",
            "round": 0 if kind == "position" else 1,
            "kind": kind,
            "text": text,
            "satisfaction": satisfaction,
            **extra,
        }
    )


def test_session_folder_lives_under_dot_debatecode(tmp_path: Path) -> None:
    files = DebateFiles(tmp_path, "DEB-abc123")
    assert files.path == tmp_path / ".debatecode" / "debates" / "DEB-abc123"
    assert debates_dir(tmp_path) == files.path.parent


@pytest.mark.parametrize("bad", ["", "../escape", "a/b", ".hidden", "x" * 200])
def test_debate_id_must_be_a_plain_folder_name(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="plain folder name"):
        DebateFiles(tmp_path, bad)


def test_metadata_round_trips_and_later_writes_merge(tmp_path: Path) -> None:
    files = DebateFiles(tmp_path, "d1")
    assert files.read_metadata() == {}
    files.write_metadata({"topic": "Redis or Postgres?", "started_at": "2025-12-05T10:00:00Z", "rounds_planned": 3})
    files.write_metadata({"completed_at": "2025-12-05T10:05:00Z", "rounds_planned": 2})
    meta = files.read_metadata()
    assert meta == {
        "topic": "Redis or Postgres?",
        "started_at": "2025-12-05T10:00:00Z",
        "rounds_planned": 2,
        "completed_at": "2025-12-05T10:05:00Z",
        "schema_version": SCHEMA_VERSION,
        "debate_id": "d1",
    }
    assert json.loads(files.metadata_path.read_text()) == meta
    assert sorted(p.name for p in files.path.iterdir()) == ["metadata.json"]  # no temp files left behind


def test_round_zero_holds_the_independent_positions(tmp_path: Path) -> None:
    files = DebateFiles(tmp_path, "d1")
    path = files.write_positions(
        [
            speech("security", "position", "Encrypt everything.", stance="encrypt"),
            speech("contrarian", "position", "```\n## fake heading\n```"),
        ],
        NAMES,
    )
    text = path.read_text()
    assert path.name == "round-0.md"
    assert text.startswith("# Round 0: independent positions")
    assert "### Security (security-1)" in text and "**Stance:** encrypt" in text
    assert "````text\n```\n## fake heading\n```\n````" in text  # model text fenced, its own fences cannot close ours


def test_round_file_has_every_part(tmp_path: Path) -> None:
    files = DebateFiles(tmp_path, "d1")
    record = RoundRecord(
        round=2,
        arguments=[speech("security", "argument", "Still worried.", 60, challenges=["contrarian"], risks=["leaks"])],
        rebuttals=[speech("contrarian", "rebuttal", "Fine by me.", 92, calls_poll=True)],
        summary="Positions are converging.",
        flags=[GateFlag(kind="repetition", round=2, detail="65% repeated", agents=["security-1"], value=0.65)],
        poll=PollResult(
            round=2, called_by="contrarian", votes={"security": False, "contrarian": True}, share=0.5, passed=False
        ),
        guidance="Focus on the team's PostgreSQL experience.",
    )
    text = files.write_round(record, NAMES).read_text()
    order = ["# Round 2", "## Arguments", "## Rebuttals", "## Moderator summary", "## Gate flags"]
    order += ["## Convergence poll", "## Human guidance"]
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)
    assert "### Security (security-1) — satisfaction 60/100" in text
    assert "### Contrarian (contrarian-1) — satisfaction 92/100" in text
    assert "- Challenges: Contrarian" in text and "- Risk raised: leaks" in text
    assert "- Asks to move to synthesis (convergence poll)." in text
    assert "- **repetition** (agents: security-1) [0.65]: 65% repeated" in text
    assert "Called by Contrarian: 50% yes, failed." in text and "- Security: no" in text
    assert "Focus on the team's PostgreSQL experience." in text
    assert files.round_path(2).exists()


def test_empty_round_says_so(tmp_path: Path) -> None:
    text = DebateFiles(tmp_path, "d1").write_round(RoundRecord(round=1), NAMES).read_text()
    for line in ("_No arguments._", "_No rebuttals._", "_No summary._", "_No poll this round._"):
        assert line in text


def test_convergence_appends_each_round_and_keeps_the_latest_verdict(tmp_path: Path) -> None:
    files = DebateFiles(tmp_path, "d1")
    files.write_convergence({"round": 1, "converged": False, "reason": "new points", "decision": "continue"})
    files.write_convergence({"round": 2, "converged": True, "reason": "4/4 agree", "decision": "synthesize"})
    data = json.loads(files.convergence_path.read_text())
    assert [entry["round"] for entry in data["rounds"]] == [1, 2]
    assert (data["converged"], data["reason"], data["decision"]) == (True, "4/4 agree", "synthesize")
    assert data["schema_version"] == SCHEMA_VERSION


def test_corrupt_convergence_file_starts_a_fresh_history(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    files = DebateFiles(tmp_path, "d1")
    files.path.mkdir(parents=True)
    files.convergence_path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        files.write_convergence({"round": 3, "converged": False})
    assert json.loads(files.convergence_path.read_text())["rounds"] == [{"round": 3, "converged": False}]
    assert "not valid JSON" in caplog.text


def test_write_text_atomic_can_refuse_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    assert write_text_atomic(target, "first") is True
    assert write_text_atomic(target, "second", overwrite=False) is False
    assert target.read_text() == "first"
    assert write_text_atomic(target, "third") is True
    assert target.read_text() == "third"
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]


def test_list_debates_newest_first_by_started_at_then_mtime(tmp_path: Path) -> None:
    DebateFiles(tmp_path, "old").write_metadata({"topic": "old", "started_at": "2025-01-01T00:00:00Z"})
    DebateFiles(tmp_path, "new").write_metadata({"topic": "new", "started_at": "2025-06-01T00:00:00+00:00"})
    undated = DebateFiles(tmp_path, "undated")
    undated.write_metadata({"topic": "undated", "started_at": "not a date"})
    os.utime(undated.metadata_path, (1_600_000_000, 1_600_000_000))  # 2020: older than both
    found = list_debates(tmp_path)
    assert [d["debate_id"] for d in found] == ["new", "old", "undated"]
    assert found[0]["path"] == str(debates_dir(tmp_path) / "new")
    assert [d["debate_id"] for d in list_debates(tmp_path, limit=2)] == ["new", "old"]
    assert list_debates(tmp_path / "nowhere") == []


def test_list_debates_skips_corrupt_and_hostile_folders(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    DebateFiles(tmp_path, "good").write_metadata({"topic": "fine", "started_at": "2025-01-01T00:00:00"})
    root = debates_dir(tmp_path)
    (root / "broken").mkdir()
    (root / "broken" / "metadata.json").write_text("{oops")
    (root / "list").mkdir()
    (root / "list" / "metadata.json").write_text("[1, 2]")
    (root / "dir-meta" / "metadata.json").mkdir(parents=True)
    (root / "huge").mkdir()
    (root / "huge" / "metadata.json").write_text('{"pad": "' + "x" * MAX_METADATA_BYTES + '"}')
    (root / "binary").mkdir()
    (root / "binary" / "metadata.json").write_bytes(b"\xff\xfe\x00garbage")
    (root / "empty").mkdir()
    (root / "stray-file.txt").write_text("not a folder")
    with caplog.at_level(logging.WARNING):
        found = list_debates(tmp_path)
    assert [d["debate_id"] for d in found] == ["good"]
    for name in ("broken", "list", "dir-meta", "huge", "binary", "empty"):
        assert f"skipping debate folder {name}" in caplog.text
