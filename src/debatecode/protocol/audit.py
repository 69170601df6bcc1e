"""Provenance: a session's full audit trail as JSON, and replaying a session from it.

The trail holds everything needed to understand and reproduce a session: the
task text, the effective config, every turn (prompt, model, reply, code, tool
calls, test results, votes, human decisions), every code version and every
gate decision. ``replay_model`` turns a trail back into a scripted model that
answers each turn's key with the recorded reply, and ``ReplayHuman`` repeats
the recorded human decisions, so re-running the engine reproduces the session.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from debatecode.input_files import InputFileError, read_input_file
from debatecode.llm.scripted import ScriptedModel
from debatecode.protocol.human import CheckpointDecision
from debatecode.store.records import SCHEMA_VERSION, TurnRecord
from debatecode.store.repository import SessionStore

__all__ = ["AUDIT_VERSION", "ReplayHuman", "build_audit", "replay_model"]

AUDIT_VERSION = 1

_MAX_TASK_TEXT_BYTES = 64 * 1024 * 1024
"""Largest task file a trail includes (a task loaded with a raised ``task_max_bytes`` still fits)."""


def build_audit(store: SessionStore, session_id: str) -> dict[str, Any]:
    """The audit trail of one session, JSON-ready.

    Raises:
        SessionNotFound: no such session.
        StoreError: the store could not be read.
    """
    session = store.get_session(session_id)
    turns = store.turns(session.id)
    task_text = None
    with contextlib.suppress(InputFileError, UnicodeDecodeError):  # gone, replaced or not a task: the trail says None
        task_text = read_input_file(Path(session.task_path), max_bytes=_MAX_TASK_TEXT_BYTES, what="task file").decode(
            "utf-8"
        )
    return {
        "audit_version": AUDIT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "session": session.model_dump(mode="json", exclude={"config"}),
        "config": session.config,
        "task": {"path": session.task_path, "sha256": session.task_hash, "text": task_text},
        "models": sorted({t.model for t in turns if t.model}),
        "turns": [t.model_dump(mode="json") for t in turns],
        "votes": [
            {
                "voter": t.agent_id,
                "ranking": t.metadata.get("ranking", []),
                "weight": t.metadata.get("weight"),
                "turn": t.seq,
            }
            for t in turns
            if t.metadata.get("kind") == "vote"
        ],
        "human_decisions": [
            {"phase": t.phase, "kind": t.metadata.get("kind"), "round": t.round, "content": t.content, "turn": t.seq}
            for t in turns
            if t.agent_role == "human"
        ],
        "versions": [v.model_dump(mode="json") for v in store.versions(session.id)],
        "gates": [g.model_dump(mode="json") for g in store.gates(session.id)],
        "outcome": session.outcome,
    }


def _turns(audit: dict[str, Any]) -> list[TurnRecord]:
    return sorted((TurnRecord.model_validate(t) for t in audit["turns"]), key=lambda t: t.seq)


def replay_model(audit: dict[str, Any]) -> ScriptedModel:
    """A scripted model answering every recorded model turn with its recorded reply, by turn identity.

    A turn asked twice (a rejected rubber stamp, then the retry) gets its
    replies in the order they were recorded.
    """
    queues: dict[tuple[str, str, str, str], deque[str]] = defaultdict(deque)
    for turn in _turns(audit):
        if turn.agent_role in ("human",) or turn.provider == "tool":
            continue
        kind = str(turn.metadata.get("kind", ""))
        queues[(str(turn.round), turn.phase, turn.agent_id, kind)].append(turn.content)

    def answer(messages: object, tags: dict[str, str]) -> str:
        key = (tags.get("round", ""), tags.get("phase", ""), tags.get("agent", ""), tags.get("kind", ""))
        queue = queues.get(key)
        if not queue:
            raise KeyError(f"the audit trail has no recorded reply for {key}")
        return queue.popleft()

    return ScriptedModel(fn=answer)


class ReplayHuman:
    """Repeats the human decisions recorded in an audit trail."""

    def __init__(self, audit: dict[str, Any]) -> None:
        turns = [t for t in _turns(audit) if t.agent_role == "human"]
        self._answers = {
            t.metadata.get("kind"): t.metadata.get("answers") for t in turns if t.phase == "dehallucination"
        }
        self._checkpoints = {t.round: t.metadata.get("decision", {}) for t in turns if t.phase == "checkpoint"}
        self._gates = {t.metadata.get("kind"): t.metadata.get("approved") for t in turns if t.phase == "gate"}
        self._asked = 0

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        self._asked += 1
        answers = self._answers.get(f"answer-{self._asked}")
        return list(answers) if answers else None

    async def checkpoint(self, round_no: int, summary: str) -> CheckpointDecision:
        return CheckpointDecision.model_validate(self._checkpoints.get(round_no, {}))

    async def approve(self, phase: str, summary: str) -> bool | None:
        decision = self._gates.get(phase)
        return None if decision is None else bool(decision)
