"""Issue 33, part 3, through the design engine: who debates, and a clarifying question for a vague question."""

from __future__ import annotations

import json
from typing import Any

from debatecode.llm.types import Message
from debatecode.protocol.design.clarify import CLARIFICATION_KEY, DEFAULT_QUESTION, parse_clarification

from .conftest import SQLITE_QUESTION, DebateScript, DebateWorld, FakeHuman, RecordingModel, debate_fn

SPECIALISTS = ["observability", "operations", "test", "security"]
VAGUE = "How do we make it better?"
ASKED = "Which part of the checkout service is slow for customers?"
ASSUMED = "the checkout service's page load time is what should get better"


class Clarifying(RecordingModel):
    """The scripted debate, with the moderator answering the clarifying prompt in its format."""

    def __init__(self, script: DebateScript) -> None:
        super().__init__(script)
        inner = debate_fn(script)

        def fn(messages: list[Message], tags: dict[str, str]) -> str:
            if tags.get("kind") == "clarify":
                return f"Question: {ASKED}\nAssumption: {ASSUMED}."
            return inner(messages, tags)

        self._fn = fn


class Answering(FakeHuman):
    def __init__(self, answer: str | None) -> None:
        super().__init__()
        self.answer = answer
        self.asked: list[list[dict[str, str]]] = []

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        self.asked.append(questions)
        return None if self.answer is None else [self.answer]


def _positions(world: DebateWorld, session_id: str) -> list[str]:
    return [t.agent_id for t in world.turns(session_id) if t.phase == "positions"]


async def _vague_debate(world: DebateWorld, human: Any = None, **overrides: Any) -> Any:
    from debatecode.llm.scripted import register_scripted
    from debatecode.protocol.design.question import load_question

    model = Clarifying(DebateScript())
    register_scripted("design", model)
    world.models["design"] = model
    if human is not None:
        overrides.setdefault("checkpoints__enabled", True)
    engine = world.engine(world.config(**overrides), human=human)
    return await engine.debate(load_question(VAGUE))


async def test_without_checkpoints_a_vague_question_records_the_assumption_in_the_journal_and_the_adr(
    design_world: DebateWorld,
) -> None:
    result = await _vague_debate(design_world)

    assert result.status == "completed", result.error
    turns = {t.key: t for t in design_world.turns(result.session.id)}
    assert "r0/analysis/moderator/clarify" in turns, "the moderator drafted the question"
    outcome = turns[CLARIFICATION_KEY]
    assert outcome.agent_role == "human" and outcome.metadata["clarification"]["answered_by"] == "nobody"
    assert outcome.metadata["clarification"]["question"] == ASKED
    assert outcome.content.startswith(f'Assumption: the moderator asked "{ASKED}" and nobody answered')
    assert ASSUMED in outcome.content

    position = next(t for t in turns.values() if t.phase == "positions")
    assert ASSUMED in position.prompt, "every later prompt carries the assumption"
    assert result.record is not None and ASSUMED in result.record.context
    assert result.adr_path is not None
    context = result.adr_path.read_text().split("\n## Context\n")[1].split("\n## ")[0]
    assert "Assumption: the moderator asked" in context and ASSUMED in context
    metadata = json.loads((result.folder / "metadata.json").read_text())
    assert metadata["clarification"]["assumption"] == ASSUMED


async def test_a_human_answer_is_journaled_and_shapes_the_debate(design_world: DebateWorld) -> None:
    human = Answering("The checkout page takes 4 seconds to load at peak; we deploy on Kubernetes.")
    result = await _vague_debate(design_world, human=human)

    assert result.status == "completed", result.error
    assert human.asked == [[{"category": "clarifying question", "question": ASKED}]]
    turns = {t.key: t for t in design_world.turns(result.session.id)}
    clarification = turns[CLARIFICATION_KEY].metadata["clarification"]
    assert clarification["answered_by"] == "human" and "4 seconds" in clarification["answer"]
    assert (
        result.record is not None and "the human answered: The checkout page takes 4 seconds" in result.record.context
    )
    perspectives = turns["r0/analysis/moderator/perspectives"].metadata["analysis"]["perspectives"]
    assert "performance" in perspectives, "the answer's words reach the moderator's picks (load, seconds...)"


async def test_an_empty_answer_leaves_the_assumption_standing(design_world: DebateWorld) -> None:
    result = await _vague_debate(design_world, human=Answering(None))
    turns = {t.key: t for t in design_world.turns(result.session.id)}
    assert turns[CLARIFICATION_KEY].metadata["clarification"]["answered_by"] == "nobody"


async def test_a_resumed_debate_does_not_ask_again(design_world: DebateWorld) -> None:
    first = await _vague_debate(design_world, human=Answering("Checkout latency at peak."))
    again = Answering("something else")
    design_world.model(DebateScript())
    engine = design_world.engine(design_world.config(checkpoints__enabled=True), human=again)
    from debatecode.protocol.design.question import load_question

    resumed = await engine.resume(first.session.id, load_question(VAGUE))
    assert resumed.status == "completed" and again.asked == []


async def test_a_clear_question_asks_nothing(design_world: DebateWorld) -> None:
    result = await design_world.debate(SQLITE_QUESTION)
    keys = {t.key for t in design_world.turns(result.session.id)}
    assert CLARIFICATION_KEY not in keys and "r0/analysis/moderator/clarify" not in keys


def test_an_unparsable_draft_falls_back_to_a_default_question() -> None:
    assert parse_clarification("Decision: pick a store")[0] == DEFAULT_QUESTION
    assert parse_clarification("**Question:** Which store?\nAssumption: SQLite.") == ("Which store?", "SQLite")


async def test_the_council_debates_with_the_specialists_and_without_a_switched_off_moonshot(
    design_world: DebateWorld,
) -> None:
    result = await design_world.debate(SQLITE_QUESTION, design__council=True, design__moonshot=False)

    assert result.status == "completed", result.error
    assert _positions(design_world, result.session.id) == [
        "architect",
        "designer",
        "engineer",
        "researcher",
        *SPECIALISTS,
        "contrarian",
    ]
    assert result.record is not None
    assert [p.name for p in result.record.perspectives][:4] == ["Architect", "Designer", "Engineer", "Researcher"]
    metadata = json.loads((result.folder / "metadata.json").read_text())
    assert metadata["council"] is True


async def test_switching_off_the_contrarian_leaves_it_out_of_every_phase(design_world: DebateWorld) -> None:
    result = await design_world.debate(SQLITE_QUESTION, design__contrarian=False)
    turns = design_world.turns(result.session.id)
    assert not [t for t in turns if t.agent_id == "contrarian"]
    assert "moonshot" in _positions(design_world, result.session.id)
