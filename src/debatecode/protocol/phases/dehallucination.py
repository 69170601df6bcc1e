"""Dehallucination: clarifying questions before any code is written (ChatDev's pattern).

An author asks categorised questions (requirements, constraints, edge cases,
performance, integration); the Moderator answers them from the task text, or
the human does when running interactively. Rounds stop when the answers'
confidence reaches the target, when no question is left, or after
``dehallucination.max_rounds``. Simple tasks skip the phase.
"""

from __future__ import annotations

from debatecode.protocol.journal import turn_key
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.replies import parse_answers, parse_confidence, parse_questions
from debatecode.protocol.run import DebateRun
from debatecode.protocol.settings import DehallucinationSettings
from debatecode.task import Task

__all__ = ["DehallucinationPhase", "is_simple"]

_MAX_QUESTIONS = 5


def is_simple(task: Task) -> bool:
    """Trivial or simple by the task's own ``difficulty``; otherwise short, with examples."""
    if task.difficulty:
        return task.difficulty.lower() in ("trivial", "simple", "easy")
    return len(task.description) < 300 and bool(task.examples)


class DehallucinationPhase(Phase):
    name = "dehallucination"

    def __init__(self, settings: DehallucinationSettings | None = None) -> None:
        self.settings = settings or DehallucinationSettings()

    async def execute(self, run: DebateRun, round_no: int) -> str:
        settings = self.settings
        if settings.skip_simple and is_simple(run.task):
            return "skipped: simple task"
        asker = run.authors()[0]
        confidence = 0.0
        asked = 0
        for step in range(1, settings.max_rounds + 1):
            prompt = asker.prompt(
                "clarify_ask",
                run.task,
                previous=run.state.clarifications,
                max_questions=_MAX_QUESTIONS,
                **run.context(),
            )
            turn = await run.ask(asker, prompt, phase=self.name, round_no=0, kind=f"ask-{step}")
            questions = parse_questions(prompt.full_reply(turn.content), _MAX_QUESTIONS)
            questions = [q for q in questions if q["question"] not in {c["question"] for c in run.state.clarifications}]
            await run.record(turn.model_copy(update={"metadata": {**turn.metadata, "questions": questions}}))
            if not questions:
                break
            asked += len(questions)
            answers, confidence = await self._answer(run, questions, step)
            for question, answer in zip(questions, answers, strict=True):
                run.state.clarifications.append({**question, "answer": answer or "(the task is silent; use judgement)"})
            if confidence >= settings.confidence_target:
                break
        return f"{asked} questions answered, confidence {confidence:.2f}"

    async def _answer(self, run: DebateRun, questions: list[dict[str, str]], step: int) -> tuple[list[str], float]:
        stored = run.journal.replay(turn_key(0, self.name, "human", f"answer-{step}"))
        if stored is not None:
            await run.record(stored)
            return list(stored.metadata.get("answers", [])), 1.0
        moderator = run.first_with_role("moderator")
        answered_by_model = (
            moderator is not None and turn_key(0, self.name, moderator.id, f"answer-{step}") in run.journal
        )
        if run.human is not None and not answered_by_model:
            answers = await run.human.answer_questions(questions)
            if answers is not None:
                turn = run.tool_turn(
                    round_no=0,
                    phase=self.name,
                    agent_id="human",
                    role="human",
                    kind=f"answer-{step}",
                    content="\n".join(f"{i}. {a}" for i, a in enumerate(answers, start=1)),
                    metadata={"answers": answers},
                )
                await run.record(turn)
                return answers, 1.0
        if moderator is None:
            return [""] * len(questions), 0.0
        prompt = moderator.prompt("clarify_answer", run.task, questions=questions, **run.context())
        turn = await run.ask(moderator, prompt, phase=self.name, round_no=0, kind=f"answer-{step}")
        reply = prompt.full_reply(turn.content)
        answers = parse_answers(reply, len(questions))
        confidence = parse_confidence(reply)
        if confidence is None:
            answered = sum(1 for a in answers if a.strip())
            confidence = 0.5 * answered / len(questions)
        await run.record(
            turn.model_copy(update={"confidence": confidence, "metadata": {**turn.metadata, "answers": answers}})
        )
        return answers, confidence
