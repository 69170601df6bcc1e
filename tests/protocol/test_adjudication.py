"""Adjudication's pure parts: reading an answer, the majority, and which inputs are disputed."""

from __future__ import annotations

from debatecode.execution.ranking import Evidence, rank_candidates
from debatecode.protocol.phases.adjudication import disputed_inputs, majority_answer, read_answer


def test_a_chat_answer_is_the_last_answer_line_as_a_canonical_literal() -> None:
    reply = "Reasoning: the sum of 5 and 0 is 5.\nANSWER: 5\n"
    assert read_answer(reply, "chat") == "5"
    assert read_answer("first guess\nANSWER: [1,2]\nno wait\n**Answer:** ['a', \"b\"]", "chat") == "['a', 'b']"
    assert read_answer("ANSWER: `(1, 2.50)`", "chat") == "(1, 2.5)"


def test_an_unreadable_or_missing_answer_is_none() -> None:
    assert read_answer("It depends on the input.", "chat") is None
    assert read_answer("ANSWER: the sum of both", "chat") is None
    assert read_answer("ANSWER: ", "chat") is None


def test_a_completion_answer_is_the_first_line_the_doctest_prints() -> None:
    assert read_answer("\n    True\n>>> more", "completion") == "True"
    assert read_answer("\n\n", "completion") is None


def test_the_majority_is_strict_and_needs_two_readable_answers() -> None:
    assert majority_answer(["5", "5", "6"]) == ("5", 2, 3)
    assert majority_answer(["5", "6"]) is None, "a tie is no majority"
    assert majority_answer(["5", None, None]) is None, "one readable answer is a claim, not a majority"
    assert majority_answer(["5", "5", None]) == ("5", 2, 2)


def test_disputed_inputs_are_where_the_two_largest_top_clusters_differ_most_contested_first() -> None:
    inputs = ["f(0)", "f(1)", "f(2)", "f(3)"]
    rows = rank_candidates(
        [
            Evidence(0, (2,), ("0", "1", "4", "9")),
            Evidence(1, (2,), ("0", "1", "4", "9")),
            Evidence(2, (2,), ("0", "2", "4", None)),
            Evidence(3, (2,), ("0", "2", "4", None)),
            Evidence(4, (2,), ("0", "3", "4", "9")),  # a smaller cluster: it only adds to the spread
            Evidence(5, (1,), ("x", "x", "x", "x")),  # a lower tier never makes an input disputed
        ]
    )
    assert disputed_inputs(rows, inputs, limit=5) == ["f(1)", "f(3)"]
    assert disputed_inputs(rows, inputs, limit=1) == ["f(1)"], "f(1) has three answers in the tier, f(3) two"
    assert disputed_inputs(rows, inputs, limit=5)[1] == "f(3)", "a failure differs from every value"


def test_no_input_is_disputed_when_the_top_tier_behaves_alike() -> None:
    rows = rank_candidates(
        [Evidence(0, (1,), ("1", "2")), Evidence(1, (1,), ("1", "2")), Evidence(2, (0,), ("9", "9"))]
    )
    assert disputed_inputs(rows, ["f(0)", "f(1)"], limit=3) == []
