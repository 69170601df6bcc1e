"""Adjudication's pure parts: reading an answer, the majority, and which inputs are disputed."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import cast

from debatecode.execution.generated import AdjudicatedTest, adjudicated_suite
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


def test_an_answer_that_the_call_must_raise_names_the_exception() -> None:
    assert read_answer("An empty list has no median.\nANSWER: raises ValueError", "chat") == "raises ValueError"
    assert read_answer("ANSWER: It must raise a `ValueError`.", "chat") == "raises ValueError"
    assert read_answer("ANSWER: throws builtins.TypeError", "chat") == "raises TypeError"
    assert read_answer("ANSWER: ZeroDivisionError", "chat") == "raises ZeroDivisionError"
    assert read_answer("ANSWER: raises an error", "chat") is None, "no exception named"
    assert read_answer("ANSWER: 'ValueError'", "chat") == "'ValueError'", "a string literal stays a value"
    traceback = "\nTraceback (most recent call last):\n  ...\nValueError: empty input\n>>> next"
    assert read_answer(traceback, "completion") == "raises ValueError"
    assert read_answer("Traceback (most recent call last):\n  ...", "completion") is None


def test_an_adjudicated_raise_passes_only_a_call_raising_that_exception() -> None:
    tests = [AdjudicatedTest("test_adjudicated_1", "median([])", "raises ValueError", 2, 3)]
    suite = adjudicated_suite(tests)

    def outcome(solution: str) -> str:
        module = types.ModuleType("solution")
        exec(solution, module.__dict__)
        namespace: dict[str, object] = {}
        saved = sys.modules.get("solution")
        sys.modules["solution"] = module
        try:
            exec(suite.source, namespace)
            cast(Callable[[], None], namespace["test_adjudicated_1"])()
        except AssertionError:
            return "failed"
        finally:
            if saved is None:
                sys.modules.pop("solution", None)
            else:
                sys.modules["solution"] = saved
        return "passed"

    assert outcome("def median(v):\n    if not v:\n        raise ValueError('empty')\n    return v[0]") == "passed"
    assert outcome("def median(v):\n    if not v:\n        raise ValueError\n    return v[0]") == "passed"
    assert outcome("def median(v):\n    return v[0] if v else None") == "failed"
    assert outcome("def median(v):\n    return v[0]") == "failed", "an IndexError is not the ValueError asked for"


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
