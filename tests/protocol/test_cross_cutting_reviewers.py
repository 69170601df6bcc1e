"""The catalog's cross-cutting specialists (test, observability, operations) review code debates, and speak last."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError
from tests.protocol.conftest import ADD_TASK, Harness
from tests.support.debaters import add_debater

from debatecode.agents.perspectives import Perspective as CatalogPerspective
from debatecode.agents.perspectives import load_catalog
from debatecode.agents.roles import CROSS_CUTTING_ORDER, get_role
from debatecode.protocol.design import records
from debatecode.protocol.ordering import CROSS_CUTTING
from debatecode.protocol.participants import plan_participants
from debatecode.protocol.phases.review import ReviewPhase
from debatecode.protocol.settings import ReviewSettings
from debatecode.task import load_task

REVIEWERS = ["judge", "test", "observability", "operations", "security"]
SPEAKING_ORDER = ["judge", "observability", "operations", "test", "security"]
"""Domain reviewers first, then observability → operations → test → security, whatever the configured order."""

QUIET = {
    "phases.dehallucination": False,
    "phases.critique": False,
    "phases.optimization": False,
    "phases.adversarial": False,
    "participants.moonshot": False,
    "participants.contrarian": False,
    "participants.teacher": False,
}


def test_the_catalog_reviewers_are_llm_roles_briefed_by_the_catalog() -> None:
    catalog = load_catalog()
    for name in ("test", "observability", "operations"):
        role = get_role(name)
        assert role.kind == "llm" and role.cross_cutting
        assert role.focus == catalog[name].prompt and role.concern == catalog[name].concern == name
    assert CROSS_CUTTING_ORDER == CROSS_CUTTING


def test_review_reviewers_accepts_them_and_still_refuses_tool_roles() -> None:
    assert ReviewSettings(reviewers=REVIEWERS).reviewers == REVIEWERS  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="tool role"):
        ReviewSettings(reviewers=["executor"])  # type: ignore[list-item]


def test_design_records_reexport_the_agents_perspective() -> None:
    assert records.Perspective is CatalogPerspective and "Perspective" in records.__all__


def test_roster_has_one_test_agent_and_no_executor_and_orders_cross_cutting_last(harness: Harness) -> None:
    config = harness.config("scripted/unused", agents=2, **{"review.reviewers": REVIEWERS, **QUIET})
    participants = plan_participants(config, load_task(ADD_TASK), lambda model: "chat")
    agents = {agent.id: agent for agent in participants.agents}
    assert "executor" not in agents, "the executor is a tool role, played by the sandbox"
    assert [a.id for a in participants.agents if a.role.concern == "test"] == ["test"]
    assert agents["test"].role.name == "test" and agents["test"].role.kind == "llm"
    assert participants.ordering.cross_cutting_agents == ["observability", "operations", "test", "security"]
    for round_no in range(1, 8):
        assert participants.ordering.order(round_no)[-4:] == ["observability", "operations", "test", "security"]


def test_without_an_ordering_reviewers_still_speak_in_the_fixed_cross_cutting_order(harness: Harness) -> None:
    config = harness.config("scripted/unused", agents=2, **{"review.reviewers": REVIEWERS, **QUIET})
    agents = plan_participants(config, load_task(ADD_TASK), lambda model: "chat").agents
    run: Any = SimpleNamespace(config=config, agents=agents, deps=SimpleNamespace(ordering=None))
    assert [a.id for a in ReviewPhase(config.review).reviewers(run, 1)] == SPEAKING_ORDER


async def test_a_code_debate_is_reviewed_by_the_cross_cutting_specialists_in_order(harness: Harness) -> None:
    base = add_debater()
    systems: dict[str, str] = {}

    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        if tags["kind"] == "review":
            systems.setdefault(tags["agent"], messages[0]["content"])
        return base(messages, tags)

    model = harness.scripted("cross-cutting", [], fn=reply)
    config = harness.config(model, agents=2, **{"review.reviewers": REVIEWERS, **QUIET})
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed", result.error

    reviews = [t for t in store.turns(result.session.id) if t.phase == "review" and t.status == "ok"]
    rounds = sorted({t.round for t in reviews})
    assert rounds, "the review phase ran"
    for round_no in rounds:
        assert [t.agent_id for t in reviews if t.round == round_no] == SPEAKING_ORDER
    assert {t.agent_id: t.agent_role for t in reviews} == {name: name for name in REVIEWERS}
    assert all(t.metadata["review"]["satisfaction"] == 95 for t in reviews)

    catalog = load_catalog()
    for name, title in (("test", "Test"), ("observability", "Observability"), ("operations", "Operations")):
        assert f"You are the {title} Reviewer" in systems[name]
        assert catalog[name].prompt in systems[name]
