"""Counting which option each debater recommends: the grounded points of agreement."""

from __future__ import annotations

import pytest

from debatecode.protocol.design.tally import question_options, recommended_option, tally_lines


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Should a small team store session events in SQLite or PostgreSQL?", ["SQLite", "PostgreSQL"]),
        ("Should we use Redis or PostgreSQL for caching?", ["Redis", "PostgreSQL"]),
        ("GraphQL vs REST for the public API?", ["GraphQL", "REST"]),
        ("Should we pick Kafka, RabbitMQ or Redis streams for events?", ["Kafka", "RabbitMQ", "Redis"]),
        ("How should we structure the plugin system?", []),
    ],
)
def test_the_options_a_question_names_are_found(question: str, options: list[str]) -> None:
    assert question_options(question) == options


@pytest.mark.parametrize(
    ("stance", "pick"),
    [
        ("Use SQLite for session events.", "SQLite"),
        ("I recommend PostgreSQL, because it is robust. SQLite locks.", "PostgreSQL"),
        ("Choose PostgreSQL over SQLite.", "PostgreSQL"),
        ("Do not use SQLite; PostgreSQL is safer.", "PostgreSQL"),
        ("Use PostgreSQL instead of SQLite.", "PostgreSQL"),
        ("I prefer plain files.", None),
    ],
)
def test_a_stance_recommends_the_first_option_it_does_not_reject(stance: str, pick: str | None) -> None:
    assert recommended_option(stance, ["SQLite", "PostgreSQL"]) == pick


def test_the_tally_counts_most_supported_first_and_names_the_undecided() -> None:
    lines = tally_lines(
        ["SQLite", "PostgreSQL"],
        {
            "Simplicity": "Use SQLite.",
            "Cost": "SQLite is cheap.",
            "Reliability": "PostgreSQL over SQLite.",
            "Moonshot": "Files.",
        },
    )
    assert lines == [
        "2 of 4 perspectives recommend SQLite: Simplicity, Cost.",
        "1 of 4 perspectives recommend PostgreSQL: Reliability.",
        "No clear pick between SQLite and PostgreSQL: Moonshot.",
    ]
    assert tally_lines([], {"A": "Use SQLite."}) == []
