"""task.md reads examples in every form, from ``## Examples`` and from the description."""

from __future__ import annotations

import pytest

from debatecode.errors import TaskError
from debatecode.task import parse_task

HEAD = '---\ntitle: Clamp\nentry_point: clamp\nsignature: "def clamp(x: int, low: int, high: int) -> int:"\n---\n'


def examples(text: str) -> list[tuple[str, str, int]]:
    return [(e.source.strip(), e.want.strip(), e.line) for e in parse_task(HEAD + text).examples]


def test_an_example_in_the_description_is_a_check() -> None:
    assert examples("Keep `x` within bounds: `clamp(5, 0, 3) == 3`.\n") == [("clamp(5, 0, 3)", "3", 6)]


def test_examples_in_other_forms_under_the_examples_heading() -> None:
    text = "Keep x within bounds.\n\n## Examples\nclamp(-2, 0, 3) ➞ 0\nFor x = 2, low = 0, high = 3 the result is 2\n"
    assert examples(text) == [("clamp(-2, 0, 3)", "0", 9), ("clamp(2, 0, 3)", "2", 10)]


def test_a_doctest_comparison_without_output_must_hold() -> None:
    assert examples("Keep x within bounds.\n\n## Examples\n>>> clamp(9, 0, 3) == 3\n") == [
        ("clamp(9, 0, 3) == 3", "True", 9)
    ]


def test_the_same_example_in_the_description_and_the_section_counts_once() -> None:
    text = "Keep x within bounds; clamp(9, 0, 3) returns 3.\n\n## Examples\n>>> clamp(9, 0, 3)\n3\n"
    assert examples(text) == [("clamp(9, 0, 3)", "3", 9)]


def test_examples_text_in_no_known_form_names_the_line_and_the_forms() -> None:
    with pytest.raises(TaskError) as info:
        parse_task(HEAD + "Keep x within bounds.\n\n## Examples\nclamp keeps five at three\n", "clamp.md")
    assert "## Examples has text but no example in a form the parser understands" in str(info.value)
    assert info.value.line == 9 and "docs/task-format.md" in (info.value.fix or "")


def test_a_task_with_no_example_in_any_form_and_no_tests_has_no_checks() -> None:
    with pytest.raises(TaskError, match="no examples"):
        parse_task(HEAD + "clamp(x, low, high) -> int keeps x between low and high.\n")
