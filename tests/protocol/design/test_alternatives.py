"""Escalation options come from the opposing positions: stances grouped by what they recommend."""

from __future__ import annotations

import pytest

from debatecode.protocol.design.alternatives import group_stances, recommendation_words
from debatecode.protocol.design.escalation import GUIDANCE_OPTION, escalation_options

REDIS_SPLIT = {
    "performance": "Add Redis in front of PostgreSQL for the hot product reads.",
    "moonshot": "Use Redis as a read-through cache for PostgreSQL, then shard it.",
    "simplicity": "Keep everything in PostgreSQL; no Redis.",
    "contrarian": "Keep everything in PostgreSQL and do not add Redis until it is measured.",
}


def _holders(stances: dict[str, str], question: str = "") -> list[tuple[str, ...]]:
    return [alt.holders for alt in group_stances(stances, question=question)]


@pytest.mark.parametrize(
    "question",
    ["Should we add Redis or keep everything in PostgreSQL?", "How should we speed up the product pages?"],
    ids=["question-names-options", "open-question"],
)
def test_two_sides_sharing_words_are_still_two_positions(question: str) -> None:
    """Both sides name PostgreSQL and Redis; what they *recommend* differs."""
    assert _holders(REDIS_SPLIT, question) == [("performance", "moonshot"), ("simplicity", "contrarian")]


def test_what_a_stance_rejects_is_not_what_it_recommends() -> None:
    assert "redi" not in recommendation_words("Keep everything in PostgreSQL; no Redis.")
    assert "kafka" not in recommendation_words("Stay on the outbox table instead of Kafka.")
    assert {"redi", "cach"} <= recommendation_words("Use Redis as a cache.") | {"cach"}


def test_a_subject_every_stance_mentions_does_not_glue_positions_together() -> None:
    stances = {"a": "Keep PostgreSQL as it is.", "b": "Put a Redis cache in front of PostgreSQL."}
    assert _holders(stances) == [("a",), ("b",)]


def test_paraphrases_of_one_position_are_one_alternative() -> None:
    stances = {
        "a": "Split the billing module into its own service now.",
        "b": "Split billing into a separate service now, before the launch.",
        "c": "Keep the modular monolith and tidy its module boundaries.",
    }
    assert _holders(stances) == [("a", "b"), ("c",)]


def test_most_held_first_then_the_most_satisfied_and_its_wording() -> None:
    stances = {"x": "Adopt GraphQL for the public API.", "y": "Stay with REST and version it.", "z": "Stay with REST."}
    alternatives = group_stances(stances, scores={"x": 90, "y": 40, "z": 70})
    assert [a.holders for a in alternatives] == [("y", "z"), ("x",)]
    assert alternatives[0].stance == "Stay with REST.", "the most satisfied holder's words"


def test_empty_stances_hold_no_position() -> None:
    assert _holders({"a": "Use SQLite.", "b": "", "c": "   "}) == [("a",)]


def test_options_are_one_per_position_then_continue_with_guidance() -> None:
    names = {
        "performance": "Performance",
        "moonshot": "Moonshot",
        "simplicity": "Simplicity",
        "contrarian": "Contrarian",
    }
    alternatives = group_stances(REDIS_SPLIT, question="Should we add Redis or keep everything in PostgreSQL?")
    options = escalation_options(alternatives, names)
    assert [(o.label, o.kind) for o in options] == [("A", "position"), ("B", "position"), ("C", "guidance")]
    assert options[0].holders == ["Performance", "Moonshot"]
    assert options[1].holders == ["Simplicity", "Contrarian"]
    assert options[1].text == "Simplicity, Contrarian: Keep everything in PostgreSQL; no Redis."
    assert options[1].stance == "Keep everything in PostgreSQL; no Redis."
    assert options[2].text == GUIDANCE_OPTION


def test_three_positions_get_three_options() -> None:
    stances = {"a": "Use SQLite.", "b": "Use PostgreSQL from day one.", "c": "Use DuckDB files per tenant."}
    options = escalation_options(group_stances(stances), {})
    assert [o.label for o in options] == ["A", "B", "C", "D"]
    assert {o.stance for o in options[:3]} == set(stances.values())
