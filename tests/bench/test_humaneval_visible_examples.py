"""The HumanEval bridge's visible tests come from the prompt alone, in every form its docstrings use."""

from __future__ import annotations

from typing import Any

from debatecode.bench.humaneval import load_problems, problem_task

HIDDEN = ("test", "canonical_solution")
SENTINEL = "SENTINEL_7f3a"


class Poisoned(dict[str, Any]):
    """A problem whose hidden fields fail the test when read, and hold a sentinel if read some other way."""

    def __getitem__(self, key: str) -> Any:
        assert key not in HIDDEN, f"problem_task read the hidden field {key!r}"
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        assert key not in HIDDEN, f"problem_task read the hidden field {key!r}"
        return super().get(key, default)


def poisoned(problem: dict[str, Any]) -> Poisoned:
    return Poisoned(
        problem,
        test=f"def check(candidate):\n    assert candidate('{SENTINEL}') == 999  # {SENTINEL}\n",
        canonical_solution=f"    return '{SENTINEL}'\n",
    )


def test_visible_examples_are_built_from_the_prompt_alone() -> None:
    for problem in load_problems(ids=["0", "66", "68", "113"]):
        task = problem_task(poisoned(problem))
        assert task.examples, problem["task_id"]
        dumped = task.model_dump_json()
        assert SENTINEL not in dumped and "999" not in dumped and "def check" not in dumped


def test_a_prompt_without_examples_gets_none_from_the_hidden_test() -> None:
    problem = {
        "task_id": "HumanEval/900",
        "entry_point": "double",
        "prompt": 'def double(x: int) -> int:\n    """Return twice x."""\n',
        "test": "def check(candidate):\n    assert candidate(2) == 4\n",
        "canonical_solution": "    return 2 * x\n",
    }
    task = problem_task(poisoned(problem))
    assert task.examples == []


def test_forms_beyond_doctest_become_examples() -> None:
    (problem,) = load_problems(ids=["68"])  # Input:/Output: pairs, no doctest at all
    examples = problem_task(problem).examples
    assert len(examples) >= 3
    assert all(e.source.startswith("pluck(") for e in examples)


def test_most_problems_have_a_visible_test() -> None:
    with_examples = sum(bool(problem_task(problem).examples) for problem in load_problems())
    assert with_examples >= 155, f"{with_examples}/164 problems have a visible test (the issue's floor is 155)"
