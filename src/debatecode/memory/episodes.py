"""The records memory keeps: ``Episode`` (one failed attempt and its reflection) and ``Lesson``.

Both carry ``schema_version``; a stored row of an older version keeps loading
(new fields get defaults), and a change of shape bumps the version.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "EPISODE_SCHEMA_VERSION",
    "LESSON_SCHEMA_VERSION",
    "MAX_FAILURES",
    "MAX_MESSAGE_CHARS",
    "MAX_TASK_TEXT_CHARS",
    "Episode",
    "Lesson",
    "embedding_text",
]

EPISODE_SCHEMA_VERSION = 1
LESSON_SCHEMA_VERSION = 1
MAX_TASK_TEXT_CHARS = 2000
"""``task_text`` is cut to this many characters (``task_hash`` is taken before the cut)."""
MAX_FAILURES = 20
"""At most this many failing tests are kept in ``test_results["failures"]``."""
MAX_MESSAGE_CHARS = 500
"""Each failure message is cut to this many characters."""
_ELLIPSIS = "…"


def _new_id() -> str:
    return uuid.uuid4().hex


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)] + _ELLIPSIS


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


class Episode(BaseModel):
    """One failed attempt at a task, with the agent's reflection on it.

    ``test_results`` is ``{"passed": int, "total": int, "failures": [{"name", "message"}]}``;
    other keys are kept as given. Failures and their messages are truncated
    (``MAX_FAILURES``, ``MAX_MESSAGE_CHARS``), and ``task_text`` to
    ``MAX_TASK_TEXT_CHARS``; an empty ``task_hash`` becomes the sha256 of the
    full ``task_text``.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = EPISODE_SCHEMA_VERSION
    id: str = Field(default_factory=_new_id, min_length=1, max_length=64)
    session_id: str = Field(max_length=64)
    """The debate session (or standalone Reflexion run) the attempt belongs to."""
    turn_id: str | None = Field(default=None, max_length=64)
    """The turn that recorded the reflection, when there is one."""
    agent_id: str = Field(max_length=255)
    task_title: str
    task_hash: str = Field(default="", max_length=128)
    task_text: str = ""
    attempt: int = Field(default=1, ge=1)
    """1 for the first reflection on a candidate, 2 for the next, ..."""
    code: str = ""
    """The failing code the reflection is about."""
    test_results: dict[str, Any] = Field(default_factory=dict)
    failure_analysis: str = ""
    """What the failing tests say, in short."""
    reflection: str = ""
    """What went wrong, in the agent's words."""
    root_cause: str = ""
    improvement: str = ""
    """What to change next time."""
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    created_at: datetime = Field(default_factory=_utcnow)

    @model_validator(mode="before")
    @classmethod
    def _hash_full_task_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("task_hash") and isinstance(data.get("task_text"), str):
            data = {**data, "task_hash": hashlib.sha256(data["task_text"].encode("utf-8")).hexdigest()}
        return data

    @field_validator("task_text")
    @classmethod
    def _cut_task_text(cls, value: str) -> str:
        return _cut(value, MAX_TASK_TEXT_CHARS)

    @field_validator("test_results")
    @classmethod
    def _summarise_test_results(cls, value: dict[str, Any]) -> dict[str, Any]:
        failures = []
        for failure in list(value.get("failures") or [])[:MAX_FAILURES]:
            item = failure if isinstance(failure, dict) else {"name": "", "message": str(failure)}
            failures.append(
                {
                    "name": _cut(str(item.get("name", "")), MAX_MESSAGE_CHARS),
                    "message": _cut(str(item.get("message", "")), MAX_MESSAGE_CHARS),
                }
            )
        return {
            **value,
            "passed": _as_int(value.get("passed", 0)),
            "total": _as_int(value.get("total", 0)),
            "failures": failures,
        }

    @property
    def embedding_text(self) -> str:
        """The text whose vector finds this episode: title, reflection, root cause and improvement."""
        return embedding_text(self.task_title, self.reflection, self.root_cause, self.improvement)


class Lesson(BaseModel):
    """A generalisable lesson drawn from one or more episodes, kept across sessions."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = LESSON_SCHEMA_VERSION
    id: str = Field(default_factory=_new_id, min_length=1, max_length=64)
    text: str = Field(min_length=1)
    """The lesson, phrased to apply beyond the task it came from."""
    source_episode_ids: list[str] = Field(default_factory=list)
    """The episodes (or other sources) it was drawn from; merged duplicates add theirs."""
    task_hashes: list[str] = Field(default_factory=list)
    """The tasks it was learnt on."""
    uses: int = Field(default=0, ge=0)
    """How often it was retrieved for a task (``WisdomStore.relevant``)."""
    created_at: datetime = Field(default_factory=_utcnow)


def embedding_text(*parts: str) -> str:
    """The non-empty parts, one per line: the text an episode is embedded from."""
    return "\n".join(part.strip() for part in parts if part and part.strip())
