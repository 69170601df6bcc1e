"""Generated inputs: visible calls, nudges, hypothesis draws from the signature and examples, edge cases."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from debatecode.execution.inputs import Parameter, generated_inputs, signature_parameters
from debatecode.task import Example, Task


def _task(entry: str, signature: str | None = None, description: str = "Compute it.", *calls: str) -> Task:
    examples = [Example(source=f"{call}\n", want="None\n", line=i) for i, call in enumerate(calls, 1)]
    return Task(title=entry, entry_point=entry, signature=signature, description=description, examples=examples)


def _args(call: str) -> tuple[list[Any], dict[str, Any]]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    return [ast.literal_eval(a) for a in node.args], {k.arg or "": ast.literal_eval(k.value) for k in node.keywords}


def _well_formed(entry: str, calls: list[str]) -> None:
    for call in calls:
        node = ast.parse(call, mode="eval").body
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry, call
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            value = ast.literal_eval(arg)
            assert ast.literal_eval(repr(value)) == value, call


ANNOTATED = _task(
    "summarize",
    "def summarize(n: int, ratio: float, name: str, flag: bool, maybe: Optional[int], words: list[str],"
    " counts: List[int], pair: tuple[int, str], rest: Tuple[int, ...], table: dict[str, int], index: Dict[int, bool],"
    " seen: set[int], extra: int | None = None) -> str:",
)


def test_each_annotation_kind_gets_values_of_its_type_and_small_sizes() -> None:
    calls = generated_inputs(ANNOTATED, limit=30)

    assert len(calls) >= 20
    _well_formed("summarize", calls)
    for call in calls:
        args, kwargs = _args(call)
        assert len(args) == 12 and not kwargs, "the parameter with a default is left to its default"
        n, ratio, name, flag, maybe, words, counts, pair, rest, table, index, seen = args
        assert type(n) is int and -10 <= n <= 100
        assert type(ratio) is float and -10 <= ratio <= 100
        assert type(name) is str and len(name) <= 12
        assert type(flag) is bool
        assert maybe is None or type(maybe) is int
        assert type(words) is list and len(words) <= 8 and all(type(w) is str for w in words)
        assert type(counts) is list and all(type(c) is int for c in counts)
        assert type(pair) is tuple and len(pair) == 2 and type(pair[0]) is int and type(pair[1]) is str
        assert type(rest) is tuple and len(rest) <= 8 and all(type(r) is int for r in rest)
        assert type(table) is dict and all(type(k) is str and type(v) is int for k, v in table.items())
        assert type(index) is dict and all(type(k) is int and type(v) is bool for k, v in index.items())
        assert type(seen) is set and all(type(s) is int for s in seen)
    assert {_args(c)[0][4] is None for c in calls} == {True, False}, "Optional draws both None and ints"


def test_unannotated_parameters_follow_the_examples_values() -> None:
    task = _task("stretch", "def stretch(xs, word, k):", "Stretch the word.", "stretch([1.5, 2.0], 'abba', 3)")

    calls = generated_inputs(task, limit=24)

    assert calls[0] == "stretch([1.5, 2.0], 'abba', 3)", "the visible call comes first"
    assert len(calls) == 24
    _well_formed("stretch", calls)
    for call in calls:
        xs, word, k = _args(call)[0]
        assert type(xs) is list and len(xs) <= 8 and all(type(x) is float and 0 <= x <= 7.0 for x in xs)
        assert type(word) is str and set(word) <= {"a", "b"} and len(word) <= 12
        assert type(k) is int and 0 <= k <= 13, "near the example's 3, never negative when no example is"


def test_without_a_signature_the_examples_give_the_arity_and_types() -> None:
    task = _task("join", None, "Join them.", "join('x', 2)", "join('yz', 0)")

    calls = generated_inputs(task, limit=16)

    assert calls[0] == "join('x', 2)" and "join('yz', 0)" in calls[:8], "visible calls lead each round"
    _well_formed("join", calls)
    assert all(type(_args(c)[0][0]) is str and type(_args(c)[0][1]) is int for c in calls)
    assert len(calls) == 16


def test_same_seed_same_inputs_and_another_seed_other_inputs() -> None:
    first = generated_inputs(ANNOTATED, limit=8, seed=0)

    assert generated_inputs(ANNOTATED, limit=8, seed=0) == first
    assert generated_inputs(ANNOTATED, limit=8, seed=1) != first


_OTHER_PROCESS = """
import importlib, json
from debatecode.execution.inputs import generated_inputs
from debatecode.task import Task

task = Task(title="mix", entry_point="mix", signature=SIGNATURE, description="Mix them.")
before = generated_inputs(task, limit=24)
importlib.import_module("constants_elsewhere")
print(json.dumps([before, generated_inputs(task, limit=24)]))
"""


def test_another_process_draws_the_same_inputs_and_writes_no_files(tmp_path: Path) -> None:
    """A resumed session must rebuild the same inputs, whatever else its process imported.

    Hypothesis' default provider mixes in constants read from the source of local modules
    (and caches them, and its unicode tables, under ``./.hypothesis``); ours must do neither.
    """
    signature = "def mix(a: int, b: float, c: list[int], d: str) -> int:"
    here = generated_inputs(_task("mix", signature, "Mix them."), limit=24)
    (tmp_path / "constants_elsewhere.py").write_text(
        "VALUES = [37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 3.25, 7.75, 'qq']\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")} | {"PYTHONDONTWRITEBYTECODE": "1"}
    script = f"SIGNATURE = {signature!r}\n{_OTHER_PROCESS}"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout)
    assert before == here
    assert after == here, "a newly imported module's constants changed the draws"
    assert [p.name for p in tmp_path.iterdir()] == ["constants_elsewhere.py"]


def test_the_limit_is_kept_and_a_small_limit_reaches_every_source() -> None:
    task = _task("halve", "def halve(n: int) -> int:", "Negative numbers are halved too.", "halve(7)")

    for limit in (0, 1, 2, 5, 40):
        assert len(generated_inputs(task, limit=limit)) <= limit
    calls = generated_inputs(task, limit=4)

    assert calls[0] == "halve(7)", "visible call"
    assert calls[1] == "halve(6)", "a nudge"
    assert calls[3] == "halve(-1)", "an edge case the text names"
    assert len(calls) == 4 and len(set(calls)) == 4


def test_edge_words_produce_the_edge_inputs() -> None:
    task = _task(
        "top_scores",
        "def top_scores(scores: list[int], k: int, label: str) -> list[int]:",
        "Return the k highest scores. The list may be empty or hold a single element; k may be zero."
        " Scores can be negative. k is between 1 and 10, and the label has at most 3 characters."
        " Raise ValueError for an invalid k.",
        "top_scores([4, 9, 2], 2, 'top')",
    )

    calls = set(generated_inputs(task, limit=80))

    expected = {
        "top_scores([], 2, 'top')",  # empty
        "top_scores([4], 2, 'top')",  # single element
        "top_scores([4, 9, 2], 2, '')",  # empty string
        "top_scores([4, 9, 2], 0, 'top')",  # zero
        "top_scores([-3, -1, -2], 2, 'top')",  # negative scores
        "top_scores([4, 9, 2], -1, 'top')",  # negative k
        "top_scores([4, 9, 2], 11, 'top')",  # above "between 1 and 10"
        "top_scores([4, 9, 2], 2, 'topt')",  # one more than "at most 3 characters"
        "top_scores(None, 2, 'top')",  # must raise: None
        "top_scores([4, 9, 2], 'a', 'top')",  # must raise: wrong type
    }
    assert expected <= calls, expected - calls
    _well_formed("top_scores", sorted(calls))


def test_no_edge_inputs_without_edge_words() -> None:
    task = _task("double", "def double(n: int) -> int:", "Twice the number.", "double(21)")

    calls = generated_inputs(task, limit=60)

    assert "double(None)" not in calls and "double('a')" not in calls and "double(-1)" not in calls


def test_tasks_that_say_nothing_about_arguments() -> None:
    assert generated_inputs(_task("mystery", None, "Do the right thing.")) == []
    assert generated_inputs(_task("now", "def now() -> int:")) == ["now()"]
    unknown = _task("apply", "def apply(fn: Callable[[int], int], x: int) -> int:", "Apply fn to x.")
    assert generated_inputs(unknown) == [], "nothing literal can stand for a function"


def test_signature_parameters_from_a_header_or_a_code_prompt() -> None:
    bare = _task("area", "def area(w: float, h: float = 1.0, *rest: int, unit: str = 'm', **extra) -> float")
    assert signature_parameters(bare) == [
        Parameter("w", "float", None),
        Parameter("h", "float", "1.0"),
        Parameter("rest", "int", None, "var_positional"),
        Parameter("unit", "str", "'m'", "keyword"),
        Parameter("extra", None, None, "var_keyword"),
    ]
    prompt = (
        "from typing import List\n\n\ndef helper(x):\n    return x\n\n\n"
        "def count_vowels(words: List[str],\n                 strict=False) -> int:\n"
        '    """Count the vowels in every word; an empty list gives 0.\n\n    >>> count_vowels(["tree"])\n    2\n    """\n'
    )
    task = Task(title="c", entry_point="count_vowels", description="Count vowels.", code_prompt=prompt)
    assert signature_parameters(task) == [Parameter("words", "List[str]", None), Parameter("strict", None, "False")]
    calls = generated_inputs(task, limit=12)
    assert calls[0] == "count_vowels(['tree'])", "a doctest in the prompt is a visible call"
    assert "count_vowels([])" in calls
    assert signature_parameters(_task("ghost")) == []


def test_a_tasks_inputs_are_drawn_once_per_process_and_each_caller_gets_its_own_list(monkeypatch: Any) -> None:
    import debatecode.execution._input_strategies as strategies

    draws: list[int] = []
    real = strategies.draw_arguments

    def counted(*args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        draws.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(strategies, "draw_arguments", counted)
    task = _task("cached_once", "def cached_once(xs: list[int], k: int) -> int:")
    first = generated_inputs(task, limit=10, seed=3)
    first.append("mutated by the caller")
    again = generated_inputs(task.model_copy(), limit=10, seed=3)
    assert len(draws) == 1 and "mutated by the caller" not in again and again == first[:-1]
    # Another description is another task: its inputs are drawn anew.
    generated_inputs(task.model_copy(update={"description": "Compute it, for empty lists too."}), limit=10, seed=3)
    assert len(draws) == 2


def test_a_header_that_ends_the_text_without_a_colon_keeps_its_last_character() -> None:
    # A task.md `signature:` is often written without the colon; its return annotation must survive whole.
    params = signature_parameters(_task("shout", "def shout(word: str) -> str"))
    assert [(p.name, p.annotation) for p in params] == [("word", "str")]
    params = signature_parameters(_task("pair", "def pair(a: int, b: tuple[int, str])"))
    assert [(p.name, p.annotation) for p in params] == [("a", "int"), ("b", "tuple[int, str]")]
