"""The example parser: every form it reads, on docstrings written here (not taken from any benchmark)."""

from __future__ import annotations

import pytest

from debatecode.examples import FORMS, FoundExample, example_key, find_examples, parameter_names


def pairs(text: str, entry: str, params: list[str] | None = None) -> list[tuple[str, str]]:
    return [(e.call, e.expected) for e in find_examples(text, entry, params)]


def test_doctests_with_output_and_the_none_rule() -> None:
    text = """Return the larger half of a word.

    >>> upper_half("abcd")
    'cd'
    >>> upper_half("")

    >>> upper_half("xyz") == "yz"
    True
    >>> x = 3
    >>> print(upper_half("ab"))
    b
    """
    found = find_examples(text, "upper_half")
    assert [(e.call, e.expected, e.form) for e in found] == [
        ("upper_half('abcd')", "'cd'", "doctest"),
        ("upper_half('')", "None", "doctest"),  # no output line: doctest's rule, the call returns None
        ("upper_half('xyz')", '"yz"', "doctest-equality"),
        ("print(upper_half('ab'))", "b", "doctest"),  # any expression that calls the entry point
    ]
    assert [e.line for e in found] == [3, 5, 7, 10]


def test_a_doctest_comparison_with_no_output_must_hold() -> None:
    text = ">>> area(2, 3) == 6\n>>> area(0, 9) == 0.0\n>>> sorted(area_list()) == [1]\n>>> area(1, 1) == width\n"
    assert pairs(text, "area") == [("area(2, 3)", "6"), ("area(0, 9)", "0.0")]


def test_a_call_with_no_output_is_skipped_where_no_doctest_shows_an_output() -> None:
    assert pairs(">>> reset_counter(4)\n>>> reset_counter(0)\n", "reset_counter") == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("tally([3, 3, 1]) == {3: 2, 1: 1}", "{3: 2, 1: 1}"),
        ("tally([]) ➞ {}", "{}"),
        ("tally('aa') => {'a': 2}", "{'a': 2}"),
        ("tally((1,)) -> {1: 1}", "{1: 1}"),
        ("tally([7]) ==> {7: 1}", "{7: 1}"),
        ("tally([0]) → {0: 1}", "{0: 1}"),
        ("tally([5, 5]) = {5: 2}", "{5: 2}"),
        ("tally([2]) should return {2: 1}.", "{2: 1}"),
        ("tally([4]) returns {4: 1}, as expected", "{4: 1}"),
        ("tally([8])   # => {8: 1}", "{8: 1}"),
        ("tally([9])  # returns {9: 1} (one nine)", "{9: 1}"),
        ("* tally([6, 6, 6]) -> {6: 3}", "{6: 3}"),
        ("`tally([1, 2])` gives `{1: 1, 2: 1}`", "{1: 1, 2: 1}"),
    ],
)
def test_every_operator_and_verb_after_a_call(line: str, expected: str) -> None:
    found = find_examples(f"Count things.\n\nExamples:\n{line}\n", "tally")
    assert [(e.expected, e.line) for e in found] == [(expected, 4)]
    assert found[0].call.startswith("tally(")


def test_verbs_are_prose_and_symbols_are_operators() -> None:
    found = find_examples("halve(8) == 4\nhalve(6) should return 3\n", "halve")
    assert [e.form for e in found] == ["operator", "prose"]


def test_the_expected_value_stops_where_prose_or_a_comment_starts() -> None:
    text = """
    shout('hi') returns 'HI' because every letter is raised.
    shout('ok') -> 'OK' # both letters
    shout('a b') => 'A B' (spaces stay)
    shout('x') should
    return 'X' and shout('y') should return 'Y'.
    """
    assert pairs(text, "shout") == [
        ("shout('hi')", "'HI'"),
        ("shout('ok')", "'OK'"),
        ("shout('a b')", "'A B'"),
        ("shout('x')", "'X'"),
        ("shout('y')", "'Y'"),
    ]


def test_prose_spellings_of_booleans_and_worked_arithmetic() -> None:
    text = """
    is_even(4) => true
    is_even(7) => FALSE
    find_key({}) -> null
    total([2, 3, 4]) == 2 + 3 + 4 = 9
    total([10, 5]) -> 10 + 5 = 15
    power_of_two(10) == 2 ** 10
    total([1]) == 1 and total = 4 is wrong
    """
    assert pairs(text, "is_even") == [("is_even(4)", "True"), ("is_even(7)", "False")]
    assert pairs(text, "find_key") == [("find_key({})", "None")]
    assert pairs(text, "total") == [("total([2, 3, 4])", "9"), ("total([10, 5])", "15"), ("total([1])", "1")]
    assert pairs(text, "power_of_two") == [("power_of_two(10)", "1024")]


def test_several_examples_on_one_line_and_a_call_over_several_lines() -> None:
    text = """Examples: clamp(5, 0, 3) == 3, clamp(-2, 0, 3) == 0; clamp(1, 0, 3) == 1.
    transpose([
        [1, 2],
        [3, 4],
    ]) == [[1, 3],
           [2, 4]]
    """
    assert pairs(text, "clamp") == [("clamp(5, 0, 3)", "3"), ("clamp(-2, 0, 3)", "0"), ("clamp(1, 0, 3)", "1")]
    found = find_examples(text, "transpose")
    assert [(e.call, e.line) for e in found] == [("transpose([[1, 2], [3, 4]])", 2)]
    assert " ".join(found[0].expected.split()) == "[[1, 3], [2, 4]]"


def test_for_this_input_the_output_should_be() -> None:
    text = """
    For word = "level" the output should be True.
    For text = "abc", k = 2, the result should be ["ab", "bc"]
    for k = 1 and text = "xy" the answer is ["x", "y"]
    For n = 12, its digits add up to 3, so the output should be 3.
    """
    assert pairs(text, "is_palindrome", ["word"]) == [("is_palindrome('level')", "True")]
    assert pairs(text, "windows", ["text", "k"]) == [
        ("windows('abc', 2)", '["ab", "bc"]'),
        ("windows('xy', 1)", '["x", "y"]'),  # named inputs go to the signature's names, in its order
    ]
    assert pairs(text, "digit_sum", ["n"]) == [("digit_sum(12)", "3")]
    assert pairs(text, "digit_sum", ["number"]) == [], "a name the signature lacks is another function's input"
    assert [call for call, _ in pairs(text, "digit_sum", None)] == [
        "digit_sum('level')",
        "digit_sum('abc', 2)",
        "digit_sum(1, 'xy')",
        "digit_sum(12)",
    ], "without a signature, every input is the function's, in the order written (give task.md a signature)"


def test_named_inputs_that_do_not_fit_the_signature_are_skipped() -> None:
    text = "For a = 1, b = 2, c = 3 the output should be 6\n"
    assert pairs(text, "add_pair", ["x", "y"]) == []
    assert pairs(text, "add3", None) == [("add3(1, 2, 3)", "6")]  # no signature: in the order written


def test_assignments_then_a_result_line() -> None:
    text = """
    nums = [3, 1, 2]
    -> sorted: [1, 2, 3]
    return [3, 2, 1]

    nums = []
    return = []
    """
    assert pairs(text, "descending", ["nums"]) == [("descending([3, 1, 2])", "[3, 2, 1]"), ("descending([])", "[]")]
    assert pairs(text, "descending", ["values"]) == [], "assignment lines must name parameters"
    assert pairs(text, "descending", None) == [], "and without a signature they name nothing"


def test_input_output_pairs() -> None:
    text = """
    Example 1:
    Input: grid = [[1, 0], [0, 1]], steps = 2
    Output: 4
    Explanation: both cells, twice.

    Example 2:
    Input:
    grid : [[0]]
    limit : 7
    Output: 0 # nothing to count

    Example 3: Input: [[5]], 1  Output: 5

    Input: "abc"
    Output: cba
    """
    found = find_examples(text, "walk", ["grid", "steps"])
    assert [(e.call, e.expected, e.form) for e in found] == [
        ("walk([[1, 0], [0, 1]], 2)", "4", "input-output"),
        ("walk([[0]], 7)", "0", "input-output"),  # "limit" is not "steps": two names, two parameters, in order
        ("walk([[5]], 1)", "5", "input-output"),  # unnamed: a tuple of as many values as parameters
    ]  # and Input: "abc" is one value where walk takes two: skipped


def test_unquoted_output_text_is_kept_as_text_but_prose_is_not() -> None:
    text = "Input: 'abc'\nOutput: cba\n\nInput: 'a'\nOutput: the same letter if it is alone\n"
    assert pairs(text, "flip", ["text"]) == [("flip('abc')", "cba")]


def test_prose_that_mentions_the_function_gives_nothing() -> None:
    text = """
    Call merge(a, b) -> list when both inputs are sorted; merge(x, y) == merge(y, x) always.
    The result of merge(left, right) should be a sorted list.
    merge([1], [2]) returns a new list rather than changing either argument.
    merge([1], [2]) should be called once per pair.
    Use merge(*parts) = merged parts. See also remerge([1], [2]) == [1, 2] and self.merge([1], [2]) == [9].
    def merge(a, b) -> list: ...
    merge([1], [2]) -> True if the first is shorter
    merge([3], [4]) == ""broken"
    """
    assert pairs(text, "merge", ["a", "b"]) == []


def test_examples_of_other_functions_are_skipped() -> None:
    text = "helper(2) == 4\n>>> helper(3)\n9\n\nscale(2) == 4\n>>> scale(5)\n10\n"
    assert pairs(text, "scale") == [("scale(2)", "4"), ("scale(5)", "10")]
    assert pairs(">>> helper(3)\n9\nscale(2) == 4\n", "scale") == [], "doctest's rule: output runs to a blank line"


def test_a_recurrence_keeps_only_the_examples_after_the_examples_heading() -> None:
    text = """The sequence is defined by
    steps(0) = 1
    steps(n) = steps(n - 1) + 2 * n
    so steps(2) = 1 + 2 + 4 = 7 as a term of the sequence.
    The function returns the first n + 1 terms.
    Examples:
    steps(2) = [1, 3, 7]
    """
    assert pairs(text, "steps") == [("steps(2)", "[1, 3, 7]")]


def test_a_bare_equals_without_a_recurrence_is_an_example() -> None:
    assert pairs("nearest_even(7) = 8\nnearest_even(2) = 2\n", "nearest_even") == [
        ("nearest_even(7)", "8"),
        ("nearest_even(2)", "2"),
    ]


def test_repeats_count_once_whatever_their_spelling() -> None:
    text = ">>> pick([\"a\"])\n'a'\npick(['a']) == \"a\"\npick([\"a\"]) -> 'a'\n"
    found = find_examples(text, "pick")
    assert len(found) == 1 and found[0].form == "doctest"
    assert example_key("pick(['a'])\n", "'a'\n") == example_key('pick( ["a"] )', '"a"')


def test_every_form_is_named_in_forms() -> None:
    text = (
        ">>> f(1)\n2\n>>> f(2) == 3\n\nf(3) == 4\nf(4) returns 5\nFor x = 5 the output should be 6\n"
        "Input: 6\nOutput: 7\n"
    )
    found = find_examples(text, "f", ["x"])
    assert {e.form for e in found} == set(FORMS)
    assert all(isinstance(e, FoundExample) for e in found)


def test_parameter_names_from_a_prompt_or_a_signature() -> None:
    assert parameter_names("def add(a: int, b: int) -> int:", "add") == ["a", "b"]
    assert parameter_names('import math\n\ndef area(r, /, k=1, *, unit="m"):\n    """Doc."""\n', "area") == ["r", "k"]
    assert parameter_names("def other(x):\n    pass\n", "area") is None
    assert parameter_names("def broken(:", "broken") is None


def test_a_large_task_text_is_read_in_linear_time() -> None:
    """Long prose after every call once took a minute and more (every end of the prose was parsed); a guard only."""
    import time

    prose = " ".join(["word"] * 300)
    text = "\n".join(
        [f"scale({i}) == {prose}" for i in range(150)]
        + [f"Input: {prose}\nOutput: {prose}" for _ in range(50)]
        + ["For x = 1, " + ", ".join(f"y{j} = {j}" for j in range(100)) + " the output should be 3"] * 20
    )
    assert len(text) > 256 * 1024 // 2
    started = time.perf_counter()
    assert find_examples(text, "scale", ["x"]) == []
    assert time.perf_counter() - started < 30, "the old quadratic reading took about 90 s here"
