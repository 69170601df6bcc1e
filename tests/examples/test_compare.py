"""Comparing a result with an example's expected text: by value, floats within a tolerance, text only as a fallback."""

from __future__ import annotations

import ast
import math

import pytest

from debatecode.examples import check_example, comparison_source, example_passes, expected_value, values_match


def passes(got: object, want: str, printed: str = "") -> bool:
    return example_passes(got, printed, want)


def test_floats_match_within_the_tolerance_also_inside_containers() -> None:
    assert passes(0.1 + 0.2, "0.3")
    assert passes(6, "6.00") and passes(6.0, "6")
    assert passes(1e-12, "0.0"), "an absolute tolerance near zero"
    assert not passes(0.3001, "0.3")
    assert passes([0.1 + 0.2, (1.0000000001, {"k": 2.0 / 3})], "[0.3, (1.0, {'k': 0.6666666667})]")
    assert not passes([0.1 + 0.2, (1.5, {"k": 0.0})], "[0.3, (1.0, {'k': 0.0})]")
    assert passes(math.nan, "float('nan')") is False, "not a literal: compared as text, and nan is not that text"
    assert values_match(math.nan, math.nan) and values_match(math.inf, math.inf)
    assert values_match(10**400, 10**400) and not values_match(10**400, 1.0)
    assert values_match(complex(1, 1e-12), 1 + 0j)


def test_lists_and_tuples_differ_as_in_python_but_a_lone_parenthesised_value_is_a_one_tuple() -> None:
    assert not passes([1, 2], "(1, 2)")
    assert not passes((1, 2), "[1, 2]")
    assert passes((1, 2), "(1, 2)")
    assert passes(("Mars",), '("Mars")'), "people write a one-element tuple without its comma"
    assert passes("Mars", '("Mars")')
    assert not passes(["Mars"], '("Mars")')


def test_dicts_need_the_same_keys_and_sets_compare_as_sets() -> None:
    assert passes({"b": 2, "a": 1}, "{'a': 1, 'b': 2}")
    assert not passes({"a": 1}, "{'a': 1, 'b': 2}")
    assert passes({3, 1}, "{1, 3}")
    assert not passes({"a": 1}, "[('a', 1)]")


def test_strings_compare_by_value_whatever_their_quotes() -> None:
    assert passes(["say 4n the str4ng"], '["say 4n the str4ng"]')
    assert passes("it's", '"it\'s"')
    assert not passes("abc", '"abd"')


def test_the_printed_text_is_the_fallback_when_the_expected_text_is_no_literal() -> None:
    assert passes("go for", "go for"), "str of the result"
    assert passes("go  for", "go for"), "whitespace normalised"
    assert passes(object.__new__(Point), "Point(x=1)"), "repr of the result"
    assert passes(list(range(10)), "[0, 1, ..., 9]"), "doctest's ELLIPSIS"
    assert not passes("stop", "go for")


def test_a_call_that_prints_is_compared_on_what_it_printed() -> None:
    assert passes(None, "3", printed="3\n")
    assert passes(None, "hello world", printed="hello   world\n")
    assert not passes(None, "3", printed="4\n")
    assert passes(3, "3", printed="debug line\n"), "the value decides when it matches"
    assert passes(2, "HI\ndone\n2", printed="HI\ndone\n"), "doctest's way: what it printed, then the repr"
    assert not passes(2, "HI\nnope\n2", printed="HI\ndone\n")


def test_booleans_and_ints_compare_as_python_compares_them() -> None:
    assert passes(True, "True") and passes(1, "True") and passes(False, "0")
    assert not passes(None, "False")


def test_expected_value_reads_literals_only() -> None:
    assert expected_value(" [1,\n 2] ") == (True, [1, 2])
    assert expected_value("hello") == (False, None)
    assert expected_value("") == (False, None)
    assert expected_value("__import__('os')") == (False, None)


class Point:
    def __repr__(self) -> str:
        return "Point(x=1)"


def _namespace() -> dict[str, object]:
    def halve(x: float) -> float:
        return x / 2

    def shout(text: str) -> None:
        print(text.upper())

    def fail(_: object) -> None:
        raise ValueError("no such thing")

    return {"halve": halve, "shout": shout, "fail": fail}


def test_check_example_passes_and_fails_with_doctests_wording() -> None:
    check_example("halve(0.6)", "0.3", _namespace(), 4)
    check_example("shout('hi')", "HI", _namespace(), 5)
    with pytest.raises(AssertionError) as info:
        check_example("halve(3)", "2", _namespace(), 7)
    assert str(info.value) == "Failed example (line 7):\n    halve(3)\nExpected:\n    2\nGot:\n    1.5"


def test_an_exception_fails_the_example_and_shows_where_it_was_raised() -> None:
    with pytest.raises(AssertionError) as info:
        check_example("fail(1)", "3", _namespace(), 9)
    text = str(info.value)
    assert text.startswith("Failed example (line 9):\n    fail(1)\nExpected:\n    3\nException raised:\n")
    assert "raise ValueError" in text and text.endswith("ValueError: no such thing")
    assert "check_example" not in text, "the comparison's own frame is left out"


def test_the_sandbox_checkers_frames_are_left_out_of_the_traceback() -> None:
    from debatecode.examples._compare import _CHECKER_FILE
    from debatecode.sandbox.verdict import CHECKER_FILE

    assert _CHECKER_FILE == CHECKER_FILE
    namespace: dict[str, object] = {}
    exec(compile("def relay(x):\n    raise KeyError(x)\n", f"/work/{CHECKER_FILE}", "exec"), namespace)
    with pytest.raises(AssertionError) as info:
        check_example("relay('k')", "1", namespace, 3)
    assert CHECKER_FILE not in str(info.value) and str(info.value).endswith("KeyError: 'k'")


def test_tracebacks_statements_and_empty_outputs_run_as_doctest_runs_them() -> None:
    check_example("fail(1)", "Traceback (most recent call last):\n...\nValueError: no such thing\n", _namespace(), 2)
    check_example("x = halve(2)", "", _namespace(), 3)
    with pytest.raises(AssertionError, match="Expected nothing"):
        check_example("halve(2)", "", _namespace(), 4)
    with pytest.raises(AssertionError, match="ValueError"):
        check_example("halve(1)", "Traceback (most recent call last):\nValueError: x\n", _namespace(), 5)


def test_the_comparison_module_is_stdlib_only_so_it_runs_in_the_sandbox() -> None:
    tree = ast.parse(comparison_source())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert imported <= {"__future__", "ast", "cmath", "contextlib", "doctest", "io", "math", "traceback", "typing"}


def test_the_public_surface() -> None:
    import debatecode.examples

    assert debatecode.examples.__all__ == [
        "FORMS",
        "FoundExample",
        "check_example",
        "comparison_source",
        "example_key",
        "example_passes",
        "expected_value",
        "find_examples",
        "parameter_names",
        "values_match",
    ]
