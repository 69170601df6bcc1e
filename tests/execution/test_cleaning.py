"""``clean_solution``: what a small model leaves around its solution goes, the solution stays as written.

The replies below are the shapes Qwen2.5-Coder-0.5B writes: example calls and
prints after the function, a ``__main__`` block reading input, doctest-style
asserts at top level, loops over test cases. The last test runs a whole debate
turn: code with ``print(...)`` at module level enters the session cleaned, and
its test run shows no output from import.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.protocol.conftest import ADD_TASK, Harness
from tests.support.debaters import add_debater
from tests.support.runs import hand_built_run

from debatecode.execution.cleaning import CleanedSolution, clean_solution
from debatecode.protocol.phases import ProposalPhase


def clean(code: str, entry_point: str | None = "fizzbuzz") -> CleanedSolution:
    return clean_solution(textwrap.dedent(code).lstrip("\n"), entry_point)


def test_example_prints_and_calls_after_the_function_are_removed() -> None:
    result = clean("""
        def fizzbuzz(n: int) -> str:
            # multiples of 15 first
            if n % 15 == 0:
                return "FizzBuzz"
            if n % 3 == 0:
                return "Fizz"
            return str(n)


        # Example usage:
        print(fizzbuzz(3))  # Output: Fizz
        fizzbuzz(15)
        result = fizzbuzz(5)
        print(f"fizzbuzz(5) = {result}")
    """)
    assert result.code == textwrap.dedent("""\
        def fizzbuzz(n: int) -> str:
            # multiples of 15 first
            if n % 15 == 0:
                return "FizzBuzz"
            if n % 3 == 0:
                return "Fizz"
            return str(n)
    """)
    assert result.removed == (
        "line 11: print(fizzbuzz(3))",
        "line 12: fizzbuzz(15)",
        "line 13: result = fizzbuzz(5)",
        'line 14: print(f"fizzbuzz(5) = {result}")',
    )


def test_a_main_block_reading_input_is_removed() -> None:
    result = clean("""
        import sys


        def fizzbuzz(n):
            return "Fizz" if n % 3 == 0 else str(n)


        if __name__ == "__main__":
            n = int(input("Enter a number: "))
            for i in range(1, n + 1):
                print(fizzbuzz(i))
    """)
    assert result.code == 'import sys\n\n\ndef fizzbuzz(n):\n    return "Fizz" if n % 3 == 0 else str(n)\n'
    assert result.removed == ('line 8: if __name__ == "__main__":',)


def test_doctest_style_asserts_and_test_loops_at_top_level_are_removed() -> None:
    result = clean(
        """
        def is_palindrome(text: str) -> bool:
            cleaned = [c.lower() for c in text if c.isalnum()]
            return cleaned == cleaned[::-1]

        # Test cases
        assert is_palindrome("A man, a plan, a canal: Panama") == True
        assert is_palindrome("race a car") == False
        test_cases = [("abba", True), ("abc", False)]
        for text, expected in test_cases:
            assert is_palindrome(text) == expected, f"failed on {text}"
        print("All tests passed!")
    """,
        "is_palindrome",
    )
    assert result.code == (
        "def is_palindrome(text: str) -> bool:\n"
        "    cleaned = [c.lower() for c in text if c.isalnum()]\n"
        "    return cleaned == cleaned[::-1]\n\n"
        # a plain data assignment stays: it calls nothing
        'test_cases = [("abba", True), ("abc", False)]\n'
    )
    assert [entry.split(":")[0] for entry in result.removed] == ["line 6", "line 7", "line 9", "line 11"]


def test_helpers_constant_tables_setup_and_the_module_docstring_are_kept() -> None:
    code = textwrap.dedent('''\
        """Roman numerals, written by a small model."""
        import sys
        from functools import lru_cache

        sys.setrecursionlimit(10_000)

        # value table, largest first
        TABLE = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C")]
        TABLE.extend([(90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")])
        SYMBOLS = {symbol: value for value, symbol in TABLE}


        @lru_cache(maxsize=None)
        def _digits(number: int) -> str:
            for value, symbol in TABLE:  # greedy
                if number >= value:
                    return symbol + _digits(number - value)
            return ""


        class Roman:
            """A numeral."""

            def __init__(self, number: int) -> None:
                self.text = _digits(number)


        def to_roman(number: int) -> str:
            return Roman(number).text
    ''')
    result = clean_solution(code + "\n\nprint(to_roman(1994))  # MCMXCIV\n", "to_roman")
    assert result.code == code
    assert result.removed == ("line 32: print(to_roman(1994))",)
    assert clean_solution(code, "to_roman") == CleanedSolution(code)


def test_code_that_does_not_parse_is_returned_unchanged() -> None:
    code = "def fizzbuzz(n):\n    return str(n\n\nprint(fizzbuzz(3))\n"
    assert clean_solution(code, "fizzbuzz") == CleanedSolution(code, ())


def test_code_with_nothing_to_remove_is_returned_unchanged_byte_for_byte() -> None:
    code = "def fizzbuzz(n):\r\n    return str(n)   \r\n\r\n\r\n\r\n\r\n"
    assert clean_solution(code, "fizzbuzz") == CleanedSolution(code)


def test_statements_sharing_a_line_are_split_and_dependents_of_removed_names_go_too() -> None:
    result = clean("""
        def fizzbuzz(n):
            return str(n)
        out = fizzbuzz(3); LIMIT = 100; print(out)
        doubled = out * 2
        handler = lambda: print("called later")
    """)
    assert result.code == 'def fizzbuzz(n):\n    return str(n)\nLIMIT = 100\nhandler = lambda: print("called later")\n'
    assert result.removed == ("line 3: out = fizzbuzz(3)", "line 3: print(out)", "line 4: doubled = out * 2")


def test_a_reply_with_no_definitions_at_all_is_left_whole() -> None:
    code = 'print("I cannot solve this")\n'
    assert clean_solution(code, "fizzbuzz") == CleanedSolution(code)


# --------------------------------------------------------------------------- a whole turn


PRINTING_DRAFT = (
    "Plain addition, with an example.\n"
    "```python\n"
    "def add(a: int, b: int) -> int:\n"
    "    return a + b\n"
    "\n"
    "\n"
    "# Example\n"
    "print(add(20260, 1))\n"
    'print("SHOWN-AT-IMPORT")\n'
    "```"
)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    world = Harness(tmp_path)
    yield world
    world.close()


async def test_a_drafted_candidate_with_module_level_prints_runs_its_tests_silently(
    harness: Harness, tmp_path: Path
) -> None:
    debater = add_debater()

    def reply(messages: object, tags: dict[str, str]) -> str:
        return PRINTING_DRAFT if tags.get("kind") == "draft" else debater(messages, tags)

    model = harness.scripted("clean-draft", [], fn=reply)
    config = harness.config(model, agents=2, **{"participants.contrarian": False})
    run = hand_built_run(config, harness.sandbox, ADD_TASK, tmp_path)

    await ProposalPhase().execute(run, 0)

    drafts = run.journal.turns(kind="draft")
    assert drafts and all(turn.code is not None and "print" not in turn.code for turn in drafts)
    assert drafts[0].metadata["cleaned"] == ["line 6: print(add(20260, 1))", 'line 7: print("SHOWN-AT-IMPORT")']
    candidate = run.state.candidates["agent-1"]
    assert candidate.report.cases and candidate.report.all_passed, candidate.report
    assert "20261" not in candidate.report.output and "SHOWN-AT-IMPORT" not in candidate.report.output

    # The same code uncleaned does print when its tests run: the check above can fail.
    uncleaned = PRINTING_DRAFT.split("```python\n")[1].removesuffix("```")
    assert "SHOWN-AT-IMPORT" in (await run.workspace.tests.run(uncleaned)).output
