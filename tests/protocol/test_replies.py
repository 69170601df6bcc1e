"""Lenient parsing of structured answers out of free-text replies."""

from __future__ import annotations

from debatecode.protocol.replies import (
    parse_answers,
    parse_confidence,
    parse_objection,
    parse_questions,
    parse_ranking,
    parse_review,
    parse_satisfaction,
    parse_verdicts,
    python_blocks,
)


def test_questions_with_tags_numbering_and_inferred_categories() -> None:
    text = "1. [edge_cases] What about an empty list?\n2) Must it be fast for a million items?\n# Should the input be modified?\nno question here\nNONE"
    assert parse_questions(text) == [
        {"category": "edge_cases", "question": "What about an empty list?"},
        {"category": "performance", "question": "Must it be fast for a million items?"},
        {"category": "constraints", "question": "Should the input be modified?"},
    ]
    assert parse_questions("NONE") == []
    assert len(parse_questions("\n".join(f"[requirements] Question number {i}?" for i in range(9)), limit=5)) == 5


def test_answers_and_confidence() -> None:
    assert parse_answers("1. Yes.\n2. No,\nnever.\nConfidence: 0.8", 3) == ["Yes.", "No, never.", ""]
    assert parse_answers("# A1: only one\n# A2: two", 2) == ["only one", "two"]
    assert parse_confidence("Confidence: 0.85") == 0.85
    assert parse_confidence("confidence = 90%") == 0.9
    assert parse_confidence("no idea") is None


def test_satisfaction_and_review() -> None:
    assert parse_satisfaction("Satisfaction: 85\n...") == 85
    assert parse_satisfaction(" 70\n# ok") == 70
    assert parse_satisfaction("Satisfaction (0-100): 250") == 100
    assert parse_satisfaction("great") is None
    review = parse_review(
        "Satisfaction: 60\nRationale: works, but slow because it sorts twice.\nBlocking concerns:\n1. Sorts twice.\n2. No docstring.\nSuggested changes: sort once."
    )
    assert review.satisfaction == 60 and review.concerns == ["Sorts twice.", "No docstring."]
    assert review.suggestions == "sort once." and "slow" in review.rationale
    assert parse_review("Satisfaction: 95\nRationale: fine because tested.\nBlocking concerns: none").concerns == []


def test_objection_ranking_verdicts_and_blocks() -> None:
    assert parse_objection("Long argument.\nObjection: floats slip through.") == "floats slip through."
    assert parse_objection("It fails on empty input. More text.") == "It fails on empty input."
    assert parse_ranking("Ranking: 2 > 1 > 3\nVote: Candidate 2", 3) == [1, 0, 2]
    assert parse_ranking("I vote for candidate 3", 3) == [2]
    assert parse_ranking("Ranking: 9 > 1", 2) == [0]
    assert parse_ranking("no idea", 2) == []
    assert parse_verdicts("VALID: test_red_1_1\nINVALID: `test_red_1_2` — wrong") == {
        "test_red_1_1": True,
        "test_red_1_2": False,
    }
    assert python_blocks("a\n```python\nx = 1\n```\nb\n```py\ny = 2\n```") == ["x = 1\n", "y = 2\n"]
