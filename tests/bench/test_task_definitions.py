"""``task_definitions``: what a HumanEval check takes from the prompt rather than from the code under test."""

from __future__ import annotations

import ast

from debatecode.bench.humaneval import load_problems, task_definitions


def test_the_prompts_helpers_and_imports_are_kept_and_the_function_to_write_is_not() -> None:
    prompt = (
        "import math\nfrom typing import List\n\nLIMIT = 3\n\n\n@staticmethod\ndef helper(x):\n    return x + LIMIT\n\n\n"
        'def solve(xs: List[int]) -> int:\n    """Use helper.\n    >>> solve([1])\n    4\n    """\n'
    )
    code = task_definitions(prompt, "solve")
    names = {getattr(node, "name", None) for node in ast.parse(code).body}
    assert "helper" in names and "solve" not in names
    assert "import math" in code and "LIMIT = 3" in code and "@staticmethod" in code


def test_humaneval_32_and_38_keep_the_helpers_their_tests_call() -> None:
    problems = {p["task_id"]: p for p in load_problems(ids=["HumanEval/32", "HumanEval/38", "HumanEval/0"])}
    poly = task_definitions(problems["HumanEval/32"]["prompt"], "find_zero")
    assert "def poly(" in poly and "import math" in poly and "def find_zero" not in poly
    cyclic = task_definitions(problems["HumanEval/38"]["prompt"], "decode_cyclic")
    assert "def encode_cyclic(" in cyclic and "def decode_cyclic" not in cyclic
    assert (
        task_definitions(problems["HumanEval/0"]["prompt"], "has_close_elements").strip() == "from typing import List"
    )


def test_a_prompt_that_does_not_parse_gives_no_definitions() -> None:
    assert task_definitions("def broken(:\n", "broken") == ""
