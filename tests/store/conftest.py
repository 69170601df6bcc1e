"""Fixtures for the session store tests: a real SQLite file in tmp_path and record factories."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from debatecode.protocol.state import CodeVersionRecord, SessionRecord, TurnRecord
from debatecode.store import SessionStore, open_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "debatecode.db"


@pytest.fixture
def store_url(db_path: Path) -> str:
    return f"sqlite:///{db_path}"


@pytest.fixture
def store(store_url: str) -> Iterator[SessionStore]:
    opened = open_store(store_url)
    try:
        yield opened
    finally:
        opened.close()


def new_id() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def make_session() -> Callable[..., SessionRecord]:
    def make(**overrides: Any) -> SessionRecord:
        values: dict[str, Any] = {
            "id": new_id(),
            "task_title": "fizzbuzz",
            "task_path": "tasks/fizzbuzz.md",
            "task_hash": "ab" * 32,
            "topic": "Write fizzbuzz(n).",
        }
        return SessionRecord(**(values | overrides))

    return make


@pytest.fixture
def make_turn() -> Callable[..., TurnRecord]:
    def make(session_id: str, seq: int, **overrides: Any) -> TurnRecord:
        values: dict[str, Any] = {
            "id": new_id(),
            "session_id": session_id,
            "seq": seq,
            "key": f"r1/proposal/agent-{seq}/propose",
            "round": 1,
            "phase": "proposal",
            "agent_id": f"agent-{seq}",
            "agent_role": "proposer",
        }
        return TurnRecord(**(values | overrides))

    return make


@pytest.fixture
def make_version() -> Callable[..., CodeVersionRecord]:
    def make(session_id: str, number: int, **overrides: Any) -> CodeVersionRecord:
        values: dict[str, Any] = {
            "id": new_id(),
            "session_id": session_id,
            "turn_id": None,
            "agent_id": "agent-1",
            "code": f"def f():\n    return {number}\n",
            "version_number": number,
        }
        return CodeVersionRecord(**(values | overrides))

    return make
