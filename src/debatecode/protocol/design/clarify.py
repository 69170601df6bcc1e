"""A clarifying question before a vague design question is debated (seed 001: "Prompt too vague").

When ``vagueness`` finds the question too vague (it names nothing concrete, is
short and touches no known area, or points at "this" without context files),
the moderator drafts one clarifying question and the assumption it would make
without an answer. The human running the debate is asked (a terminal user with
checkpoints on); nobody to ask, no answer or an answer given too late leaves the
assumption standing. Either way the outcome is journaled as the human turn
``r0/analysis/human/clarification``, so a resumed debate never asks again, and
it reaches the perspective selection, every later prompt and the decision
record's context.
"""

from __future__ import annotations

import asyncio
import logging
import re

from debatecode.agents._question import vagueness
from debatecode.protocol.design.records import Clarification, DecisionRecord
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.journal import turn_key
from debatecode.store.records import TurnRecord

__all__ = ["CLARIFICATION_KEY", "Clarification", "clarify", "parse_clarification", "with_clarification"]

logger = logging.getLogger(__name__)

CLARIFICATION_KEY = turn_key(0, "analysis", "human", "clarification")
"""The journal key of the clarification's outcome (the human's answer, or the assumption made)."""

DEFAULT_QUESTION = (
    "What exactly should the debate decide: which options are on the table, and which constraints matter "
    "(team size, load, deadline, budget)?"
)
DEFAULT_ASSUMPTION = (
    "the question is taken as written; each debater names the options it sees and states the constraints it assumes"
)


def parse_clarification(reply: str) -> tuple[str, str]:
    """The ``Question:`` and ``Assumption:`` lines of the moderator's reply; the defaults for lines it lacks."""
    found: dict[str, str] = {}
    for line in reply.splitlines():
        match = re.match(r"\s*[-*#]*\s*(question|assumption)\s*:\s*(.+)", line, re.IGNORECASE)
        if match and match.group(1).lower() not in found:
            text = " ".join(match.group(2).split()).strip(" *")
            if text and not text.startswith("<"):
                found[match.group(1).lower()] = text[:300]
    return found.get("question", DEFAULT_QUESTION), found.get("assumption", DEFAULT_ASSUMPTION).rstrip(".")


async def clarify(run: DesignRun) -> Clarification | None:
    """Ask a clarifying question when the run's question is vague; None when it is clear enough.

    The moderator's draft and the outcome are journaled; a resumed debate replays both.
    """
    question = run.state.question
    reasons = vagueness(question.text, has_context=bool(question.context))
    if not reasons:
        return None
    draft = await run.say(
        run.moderator,
        "clarify",
        phase="analysis",
        round_no=0,
        stage="moderator",
        max_tokens=120,
        reasons="; ".join(reasons),
    )
    await run.record(draft)
    asked, assumed = parse_clarification(draft.content)

    async def ask_the_human() -> TurnRecord:
        answer = await _answer(run, asked)
        found = Clarification(
            question=asked,
            reasons=reasons,
            assumption=assumed,
            answer=answer,
            answered_by="human" if answer else "nobody",
        )
        return run.tool_turn(
            round_no=0,
            phase="analysis",
            agent_id="human",
            role="human",
            kind="clarification",
            content=found.line(),
            metadata={"clarification": found.model_dump(mode="json")},
        )

    turn = await run.journal.replay_or_do(CLARIFICATION_KEY, ask_the_human)
    await run.record(turn)
    found = Clarification.model_validate(turn.metadata["clarification"])
    run.state.clarification = found
    return found


async def _answer(run: DesignRun, question: str) -> str | None:
    """The human's answer to ``question``, or None: nobody to ask, no answer, or none within the checkpoint timeout."""
    human = run.human
    if human is None:
        return None
    timeout = run.config.checkpoints.timeout_s
    try:
        answers = await asyncio.wait_for(
            human.answer_questions([{"category": "clarifying question", "question": question}]), timeout
        )
    except TimeoutError:
        logger.warning("no answer to the clarifying question within %ss: the debate goes on its assumption", timeout)
        return None
    answer = " ".join((answers or [""])[0].split()) if answers else ""
    return answer if answer and not answer.startswith("(no answer") else None


def with_clarification(record: DecisionRecord, clarification: Clarification | None) -> DecisionRecord:
    """``record`` with the clarification (or the assumption made instead) in its context; unchanged without one."""
    if clarification is None or clarification.line() in record.context:
        return record
    context = "\n\n".join(part for part in (record.context.strip(), clarification.line()) if part)
    return record.model_copy(update={"context": context})
