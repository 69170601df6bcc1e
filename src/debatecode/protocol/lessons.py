"""Accumulated wisdom: general lessons distilled from a session's reflections, recalled in later sessions.

At the end of a session that reflected on failures, one agent distils the
reflections into general lessons (no names or values from the task); they
are stored in the ``WisdomStore`` (deduplicated by meaning). At the start of
a session, the lessons most similar to the new task are recalled and shown to
every prompt. Both steps are journaled as turns, so a resumed session recalls
exactly the lessons it started with.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

from debatecode.protocol.journal import turn_key
from debatecode.store.records import TurnRecord

if TYPE_CHECKING:
    from debatecode.protocol.run import DebateRun

__all__ = ["general_lessons", "learn_lessons", "recall_lessons"]

logger = logging.getLogger(__name__)

_MAX_LESSONS = 3


def general_lessons(reply: str, entry_point: str, limit: int = _MAX_LESSONS) -> list[str]:
    """Bullet lines of ``reply`` as lessons, with the task's function name generalised away."""
    if reply.strip().upper().startswith("NONE"):
        return []
    lessons: list[str] = []
    for raw in reply.splitlines():
        line = raw.strip().lstrip("#").strip()
        if not line.startswith(("-", "*", "•")) and not re.match(r"^\d+[.)]", line):
            continue
        text = re.sub(r"^(?:[-*•]|\d+[.)])\s*", "", line).strip()
        text = re.sub(rf"\b{re.escape(entry_point)}\b", "the function", text)
        if len(text.split()) >= 4 and text not in lessons:
            lessons.append(text[:300])
        if len(lessons) >= limit:
            break
    return lessons


async def recall_lessons(run: DebateRun, wisdom: Any) -> list[str]:
    """Lessons from earlier sessions relevant to this task, journaled as a ``wisdom`` turn.

    Raises:
        StoreError: the wisdom store could not be read.
    """

    async def recall() -> TurnRecord:
        found = await asyncio.to_thread(wisdom.relevant, f"{run.task.title}\n{run.task.description}")
        lessons = [lesson.text for lesson, _score in found]
        return run.tool_turn(
            round_no=0,
            phase="wisdom",
            agent_id="memory",
            role="memory",
            kind="recall",
            content="\n".join(f"- {text}" for text in lessons) or "(no relevant lessons yet)",
            tool_calls=[
                {"tool": "wisdom.relevant", "lesson": lesson.id, "score": round(score, 3)} for lesson, score in found
            ],
            metadata={"lessons": lessons},
        )

    turn = await run.journal.replay_or_do(turn_key(0, "wisdom", "memory", "recall"), recall)
    await run.record(turn)
    return list(turn.metadata.get("lessons", []))


async def learn_lessons(run: DebateRun, wisdom: Any) -> list[str]:
    """Distil this session's reflections into general lessons and store them (once per session).

    Raises:
        ModelError, BudgetExceeded: from the distilling turn.
        StoreError: the lessons could not be stored.
    """
    reflections = [r for items in run.state.reflections.values() for r in items]
    if not reflections:
        return []
    agent = run.first_with_role("teacher") or run.authors()[0]
    known = turn_key(0, "wisdom", agent.id, "lessons") in run.journal
    prompt = agent.prompt("lessons", run.task, reflections=reflections, limit=_MAX_LESSONS, **run.context())
    turn = await run.ask(agent, prompt, phase="wisdom", round_no=0, kind="lessons")
    lessons = general_lessons(prompt.full_reply(turn.content), run.task.entry_point)
    await run.record(turn.model_copy(update={"metadata": {**turn.metadata, "lessons": lessons}}))
    if not known:
        sources = [t.id for t in run.turns() if t.metadata.get("kind", "").startswith("reflect")]
        for lesson in lessons:
            await asyncio.to_thread(wisdom.add, lesson, sources=sources, task_hash=run.task.text_hash)
    return lessons
