"""The shared walk over code-like text: string literals skipped under either rule, brackets counted."""

from __future__ import annotations

import pytest

from debatecode.examples._scan import CodeScan, string_end


def _walk(text: str, *, python_literals: bool, start: int = 0, stop: int | None = None) -> tuple[str, CodeScan]:
    scan = CodeScan(text, start, stop, python_literals=python_literals)
    return "".join(char for _, char, _ in scan), scan


@pytest.mark.parametrize("python_literals", [True, False])
def test_brackets_inside_a_string_are_skipped(python_literals: bool) -> None:
    seen, scan = _walk("f(')]', \"({\") + 1", python_literals=python_literals)

    assert seen == "f(, ) + 1"
    assert scan.depth == 0
    assert not scan.unclosed
    assert scan.end == len("f(')]', \"({\") + 1")


def test_depth_of_a_bracket_pair_is_the_depth_outside_it() -> None:
    depths = [(char, depth) for _, char, depth in CodeScan("(a[b])c)", python_literals=True)]

    assert depths == [("(", 0), ("a", 1), ("[", 1), ("b", 2), ("]", 1), (")", 0), ("c", 0), (")", -1)]


def test_indices_are_those_of_the_text() -> None:
    indices = [index for index, _, _ in CodeScan("x = 'ab' + y", 2, python_literals=True)]

    assert indices == [2, 3, 8, 9, 10, 11]


def test_an_escaped_quote_stays_inside_the_literal_with_python_literals() -> None:
    text = r"('a\')', b)"

    seen, scan = _walk(text, python_literals=True)

    assert seen == "(, b)"
    assert scan.depth == 0


def test_without_python_literals_a_backslash_escapes_nothing() -> None:
    text = r"('a\')', b)"

    seen, scan = _walk(text, python_literals=False)

    # The literal is 'a\' and the next quote opens one that never closes: the walk stops there.
    assert seen == "()"
    assert scan.unclosed
    assert scan.end == text.index("'", 5)
    assert scan.depth == 0


def test_a_single_quoted_literal_closes_on_its_own_line_only_with_python_literals() -> None:
    text = "(user's\nx')"

    assert _walk(text, python_literals=True)[1].unclosed
    assert _walk(text, python_literals=True)[1].end == text.index("'")
    assert _walk(text, python_literals=False)[0] == "(user)"


def test_triple_quotes_hold_a_single_quote_with_python_literals() -> None:
    text = "('''a'b)''', c)"

    assert _walk(text, python_literals=True)[0] == "(, c)"
    # Read plainly, the quotes pair off one by one: ``b)`` between two pairs is code, and the seventh quote
    # opens a literal that never closes.
    seen, scan = _walk(text, python_literals=False)
    assert seen == "(b)"
    assert scan.unclosed


@pytest.mark.parametrize("python_literals", [True, False])
def test_unbalanced_brackets_leave_the_depth_off_zero(python_literals: bool) -> None:
    assert _walk("((a)", python_literals=python_literals)[1].depth == 1
    assert _walk("a))", python_literals=python_literals)[1].depth == -2


@pytest.mark.parametrize("python_literals", [True, False])
def test_an_unclosed_literal_ends_the_walk_at_its_quote(python_literals: bool) -> None:
    seen, scan = _walk("(a, 'b", python_literals=python_literals)

    assert seen == "(a, "
    assert scan.unclosed
    assert scan.end == 4
    assert scan.depth == 1


def test_stop_bounds_the_walk_but_a_literal_begun_before_it_is_read_whole() -> None:
    seen, scan = _walk("ab'cd'ef", python_literals=True, stop=3)

    assert seen == "ab"
    assert scan.end == 6
    assert _walk("abcdef", python_literals=True, stop=3)[1].end == 3


def test_a_break_leaves_the_depth_where_it_was() -> None:
    scan = CodeScan("((a:b))", python_literals=True)
    for _, char, _ in scan:
        if char == ":":
            break

    assert scan.depth == 2


def test_string_end() -> None:
    assert string_end("'a\\'b' c", 0) == 6
    assert string_end("'a\\'b' c", 0, python_literals=False) == 4
    assert string_end('"""a"b"""', 0) == 9
    assert string_end("'a\nb'", 0) is None
    assert string_end("'a\nb'", 0, python_literals=False) == 5
    assert string_end("'abc", 0, python_literals=False) is None
