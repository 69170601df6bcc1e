"""extract_code and extract_choice on the reply shapes models actually produce."""

from __future__ import annotations

import ast

import pytest

from debatecode.llm import COMPLETION_STOP, extract_choice, extract_code

HEADER = 'def add(a, b):\n    """Return a + b."""\n'


@pytest.mark.parametrize("reply", ["", "   \n", "I cannot help with that.", "hello", "Use a loop over the list."])
def test_replies_without_code_give_none(reply: str) -> None:
    assert extract_code(reply) is None
    assert extract_code(reply, entry_point="add") is None


def test_fenced_python_block_is_extracted() -> None:
    reply = "Here you go:\n```python\ndef add(a, b):\n    return a + b\n```\nDone."
    assert extract_code(reply, entry_point="add") == "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("tag", ["python", "py", "Python3", ""])
def test_fence_tags_that_mean_python(tag: str) -> None:
    reply = f"```{tag}\nx = 1\ndef f():\n    return x\n```"
    assert extract_code(reply) == "x = 1\ndef f():\n    return x\n"


def test_non_python_fences_are_ignored() -> None:
    assert extract_code("```bash\npip install numpy\n```") is None


def test_block_defining_the_entry_point_beats_a_longer_one() -> None:
    reply = (
        "```python\ndef add(a, b):\n    return a + b\n```\n"
        "Tests:\n```python\nimport unittest\n\nclass T(unittest.TestCase):\n"
        "    def test(self):\n        self.assertEqual(add(1, 2), 3)\n```"
    )
    assert extract_code(reply, entry_point="add") == "def add(a, b):\n    return a + b\n"


def test_without_entry_point_the_longest_parsing_block_wins() -> None:
    reply = "```\nprint(1)\n```\n```python\ndef f(x):\n    return x * 2\n```\n```python\ndef broken(:\n```"
    assert extract_code(reply) == "def f(x):\n    return x * 2\n"


def test_unclosed_block_is_trimmed_until_it_parses() -> None:
    reply = "```python\ndef add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a -"
    assert extract_code(reply, entry_point="add") == "def add(a, b):\n    return a + b\n"


def test_only_unparsable_blocks_are_returned_unchanged_for_the_sandbox_to_report() -> None:
    code = extract_code("```python\ndef add(a, b)\n    return a + b\n```", entry_point="add")
    assert code == "def add(a, b)\n    return a + b\n"


def test_bare_code_that_defines_the_entry_point_is_accepted() -> None:
    reply = "Sure, here it is:\ndef add(a, b):\n    return a + b\nThat should work."
    assert extract_code(reply, entry_point="add") == "def add(a, b):\n    return a + b\n"


def test_bare_code_for_another_function_is_rejected() -> None:
    assert extract_code("def sub(a, b):\n    return a - b\n", entry_point="add") is None


def test_completion_is_appended_to_the_prompt_prefix_and_cut_at_column_zero() -> None:
    reply = "    return a + b\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    assert extract_code(reply, entry_point="add", prompt_prefix=HEADER) == HEADER + "    return a + b\n"


@pytest.mark.parametrize(
    "tail", ["\nif __name__ == '__main__':\n    print(add(1, 2))", "\nprint(add(1, 2))", "\n# test", "\n```"]
)
def test_completion_stops_at_the_humaneval_stop_lines(tail: str) -> None:
    code = extract_code("    return a + b\n" + tail, prompt_prefix=HEADER)
    assert code == HEADER + "    return a + b\n"


def test_completion_cut_mid_statement_keeps_the_complete_lines() -> None:
    reply = "    total = a + b\n    return total\n    extra = (1,"
    code = extract_code(reply, prompt_prefix=HEADER)
    assert code == HEADER + "    total = a + b\n    return total\n"
    assert code is not None
    ast.parse(code)


def test_completion_keeps_imports_in_the_prefix() -> None:
    prefix = "from typing import List\n\n\ndef total(xs: List[int]) -> int:\n"
    assert extract_code("    return sum(xs)\n", prompt_prefix=prefix) == prefix + "    return sum(xs)\n"


def test_empty_completion_is_no_code() -> None:
    assert extract_code("\n\n", prompt_prefix=HEADER) is None


def test_completion_reply_that_is_a_fenced_block_falls_back_to_chat_parsing() -> None:
    reply = "```python\ndef add(a, b):\n    return a + b\n```"
    assert extract_code(reply, entry_point="add", prompt_prefix=HEADER) == "def add(a, b):\n    return a + b\n"


def test_completion_stop_list_holds_the_humaneval_stops() -> None:
    assert {"\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#"} <= set(COMPLETION_STOP)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Candidate 2", 1),
        ("2", 1),
        ("B", 1),
        ("candidate #3 is the best", 2),
        ("Candidate 1 fails test 3, but Candidate 2 passes all. I vote for Candidate 2.", 1),
        ("The best candidate is 3.", 2),
        ("Best: A", 0),
        ("My answer: C", 2),
        ("3\nBecause it handles empty lists.", 2),
        ("Only candidate 1 handles empty input correctly.", 0),
    ],
)
def test_extract_choice_reads_votes(reply: str, expected: int) -> None:
    assert extract_choice(reply, 3) == expected


@pytest.mark.parametrize(
    "reply",
    ["Candidate 7", "I am not sure.", "A candidate should be short.", "Candidate 1 and candidate 2 both fail.", ""],
)
def test_extract_choice_gives_none_when_unclear_or_out_of_range(reply: str) -> None:
    assert extract_choice(reply, 3) is None
