"""Reflexion: verbal reinforcement from failures, kept in episodic memory.

``ReflectionGenerator`` asks an agent why its code failed (root cause, what
went wrong, what to change, a general lesson, a confidence). ``ReflexionLoop``
runs generate → test in the sandbox → reflect → store the episode →
regenerate with *all* earlier reflections in context, until every test
passes, the candidate's confidence (the share of tests it passes: evidence,
not self-report) reaches ``reflexion.confidence_threshold``, or
``reflexion.max_attempts`` reflections have been made. It runs inside the
debate (``phases/reflexion.py``'s ``ReflexionPhase``, before each round, for
failing candidates) and alone, as the single-agent ``reflexion`` strategy.

The loop holds its settings (``DebateDeps.reflexion``) and the episodic
memory, and is given the run it works on; it keeps nothing between calls.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import Prompt
from debatecode.protocol.replies import parse_confidence
from debatecode.protocol.state import Candidate

if TYPE_CHECKING:
    from debatecode.memory.settings import ReflexionSettings
    from debatecode.protocol.run import DebateRun

__all__ = ["Reflection", "ReflectionGenerator", "ReflexionLoop", "parse_reflection"]

logger = logging.getLogger(__name__)

_FIELDS = {
    "root_cause": r"root cause(?: of the failure)?",
    "what_went_wrong": r"what went wrong",
    "what_to_change": r"what to change(?: next)?",
    "lesson": r"lesson",
}


class Reflection(BaseModel):
    """What an agent learnt from one failed attempt."""

    model_config = ConfigDict(extra="forbid")

    root_cause: str = ""
    what_went_wrong: str = ""
    what_to_change: str = ""
    lesson: str = ""
    confidence: float = 0.5
    """The agent's own confidence that the change fixes the failure (0-1)."""

    def text(self) -> str:
        return " ".join(part for part in (self.root_cause, self.what_went_wrong, self.what_to_change) if part)


def parse_reflection(reply: str) -> Reflection:
    """Read a reflection in the prompt's format; lenient about missing parts and base-model rambling."""
    found: dict[str, str] = {}
    heads = "|".join(_FIELDS.values()) + "|confidence"
    for name, head in _FIELDS.items():
        pattern = rf"(?:^|\n)\W*{head}\s*[:\-]\s*(.*?)(?=\n\W*(?:{heads})\s*[:\-]|\Z)"
        match = re.search(pattern, reply, re.IGNORECASE | re.DOTALL)
        if match:
            found[name] = " ".join(match.group(1).replace("#", " ").split())[:500]
    if not found.get("root_cause"):
        first = " ".join(line.strip("# ").strip() for line in reply.strip().splitlines()[:2])
        found["root_cause"] = first[:500]
    confidence = parse_confidence(reply)
    return Reflection(**found, confidence=0.5 if confidence is None else confidence)


class ReflectionGenerator:
    """Builds reflection prompts (chat or completion, in a named template variant) and reads the replies."""

    def __init__(self, template: str = "default") -> None:
        self.template = template

    def prompt(self, run: DebateRun, agent: Agent, candidate: Candidate, attempt: int) -> Prompt:
        """The reflection prompt on ``candidate`` after ``attempt``, with the agent's earlier reflections.

        Raises:
            ValueError: the configured template variant does not exist.
        """
        return agent.prompt(
            "reflect",
            run.task,
            variant=self.template,
            code=candidate.code or "",
            report=candidate.report if candidate.code is not None else None,
            attempt=attempt,
            reflections=run.state.reflections.get(agent.id, []),
            **run.context(agent.id),
        )

    def read(self, prompt: Prompt, reply: str) -> Reflection:
        return parse_reflection(prompt.full_reply(reply))


class ReflexionLoop:
    """Reflect, remember and retry, for one agent's candidate at a time."""

    def __init__(self, settings: ReflexionSettings, memory: Any = None) -> None:
        self.settings = settings
        self.memory = memory
        self.generator = ReflectionGenerator(settings.template)

    def done(self, candidate: Candidate) -> bool:
        """Every test passes, or the share of passing tests reached the confidence threshold."""
        if candidate.code is None:
            return False
        if candidate.report.total == 0:
            return True  # nothing to reflect on: the task has no visible tests
        return candidate.report.all_passed or candidate.report.pass_rate >= self.settings.confidence_threshold

    async def improve(self, run: DebateRun, agent: Agent, *, phase: str, round_no: int) -> Candidate:
        """Run the loop on ``agent``'s current candidate in ``run``; return its (possibly improved) current candidate.

        Raises:
            ModelError, BudgetExceeded, SandboxError: as the turns and test runs they come from.
        """
        for attempt in range(1, self.settings.max_attempts + 1):
            current = run.state.candidates[agent.id]
            if self.done(current):
                break
            await self._reflect(run, agent, current, phase, round_no, attempt)
            recent = run.state.reflections[agent.id][-self.settings.max_reflections_in_prompt :]
            prompt = agent.prompt(
                "retry",
                run.task,
                len(run.authors()),
                code=current.code or "",
                report=current.report if current.code is not None else None,
                reflections=recent,
                **run.context(agent.id),
            )
            turn = await run.ask(agent, prompt, phase=phase, round_no=round_no, kind=f"retry-{attempt}", want_code=True)
            turn = turn.model_copy(update={"reflections": [r.model_dump() for r in recent]})
            run.state.adopt(await run.evaluate(agent, turn))
        return run.state.candidates[agent.id]

    async def _reflect(
        self, run: DebateRun, agent: Agent, current: Candidate, phase: str, round_no: int, attempt: int
    ) -> Reflection:
        prompt = self.generator.prompt(run, agent, current, attempt)
        turn = await run.ask(agent, prompt, phase=phase, round_no=round_no, kind=f"reflect-{attempt}")
        reflection = self.generator.read(prompt, turn.content)
        update = {
            "confidence": reflection.confidence,
            "reflections": [reflection.model_dump()],
            "metadata": {**turn.metadata, "attempt": attempt, "target_version": current.version_id},
        }
        turn = await run.record(turn.model_copy(update=update))
        run.state.reflections.setdefault(agent.id, []).append(reflection)
        if self.memory is not None:
            await self._remember(run, agent, current, reflection, turn.id, attempt)
        return reflection

    async def _remember(
        self, run: DebateRun, agent: Agent, current: Candidate, reflection: Reflection, turn_id: str, attempt: int
    ) -> None:
        from debatecode.memory.episodes import Episode

        failures = [{"name": c.name, "message": c.message[:400]} for c in current.report.failures()[:8]]
        analysis = "; ".join(f"{f['name']}: {(f['message'].strip().splitlines() or [''])[-1]}" for f in failures)
        episode = Episode(
            id=turn_id,
            session_id=run.session_id,
            turn_id=turn_id,
            agent_id=agent.id,
            task_title=run.task.title,
            task_hash=run.task.text_hash,
            task_text=run.task.description[:2000],
            attempt=attempt,
            code=current.code or "",
            test_results={"passed": current.report.passed, "total": current.report.total, "failures": failures},
            failure_analysis=analysis[:2000],
            reflection=reflection.what_went_wrong or reflection.text(),
            root_cause=reflection.root_cause,
            improvement=reflection.what_to_change + (f" Lesson: {reflection.lesson}" if reflection.lesson else ""),
            confidence=reflection.confidence,
        )
        # The episode id is the turn id: a resumed session re-records the same turn, never a second episode.
        known = await asyncio.to_thread(self.memory.contains, episode.id)
        if not known:
            await asyncio.to_thread(self.memory.add, episode)
