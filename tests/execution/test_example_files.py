"""``test_examples.py``: one test per example, self-contained (stdlib only), comparing by value in the checker."""

from __future__ import annotations

import ast
import sys
import types

from tests.support.dummy_sandbox import DummySandbox

from debatecode.config import SandboxSettings
from debatecode.execution.tester import CandidateTester
from debatecode.execution.testfiles import build_test_files
from debatecode.task import Task, parse_task

TASK = """---
title: Centroid
entry_point: centroid
signature: "def centroid(points: list[tuple[float, float]]) -> tuple[float, float]:"
---
Return the mean point of `points` as a tuple, or `None` for no points.
`centroid([(0, 0), (2, 4)]) == (1.0, 2.0)` and `centroid([]) -> None`.

## Examples
>>> centroid([(0.1, 0.2), (0.2, 0.4)])
(0.15, 0.30000000000000004)
>>> centroid([(1, 1)]) == (1.0, 1.0)
>>> labels(centroid([(2, 2)]))
["x=2.0", "y=2.0"]
"""

RIGHT = """
def centroid(points):
    if not points:
        return None
    return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))


def labels(point):
    return [f"x={point[0]}", f"y={point[1]}"]
"""

AS_LIST = RIGHT.replace("return (sum(p[0]", "return [sum(p[0]").replace("len(points))", "len(points)]")


def task() -> Task:
    return parse_task(TASK, "centroid.md")


def test_the_task_reads_examples_from_the_description_and_every_form_of_the_examples_section() -> None:
    assert [(e.source.strip(), e.want.strip(), e.line) for e in task().examples] == [
        ("centroid([(0.1, 0.2), (0.2, 0.4)])", "(0.15, 0.30000000000000004)", 10),
        ("centroid([(1, 1)]) == (1.0, 1.0)", "True", 12),  # no output line: the comparison must hold
        ("labels(centroid([(2, 2)]))", '["x=2.0", "y=2.0"]', 13),
        ("centroid([(0, 0), (2, 4)])", "(1.0, 2.0)", 7),
        ("centroid([])", "None", 7),
    ]


def _run_examples(code: str) -> dict[str, str]:
    """Run the generated test file in this process, with ``code`` as the ``solution`` module; outcome per test."""
    source = build_test_files(task(), code)["test_examples.py"]
    module = types.ModuleType("solution")
    exec(compile(code, "solution.py", "exec"), module.__dict__)
    namespace: dict[str, object] = {"__name__": "test_examples"}
    saved = sys.modules.get("solution")
    sys.modules["solution"] = module
    try:
        exec(compile(source, "test_examples.py", "exec"), namespace)
    finally:
        if saved is None:
            sys.modules.pop("solution", None)
        else:
            sys.modules["solution"] = saved
    outcomes = {}
    for name, test in namespace.items():
        if name.startswith("test_") and callable(test):
            try:
                test()
                outcomes[name] = "passed"
            except AssertionError as exc:
                outcomes[name] = f"failed: {exc}"
    return outcomes


def test_the_generated_file_imports_nothing_of_debatecode() -> None:
    source = build_test_files(task(), RIGHT)["test_examples.py"]
    modules = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name) or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not any(name.startswith("debatecode") for name in modules), modules
    assert "solution" in modules


def test_a_right_candidate_passes_every_example_by_value() -> None:
    assert _run_examples(RIGHT) == {f"test_example_{n}": "passed" for n in range(1, 6)}


def test_a_list_is_not_the_tuple_an_example_shows() -> None:
    outcomes = _run_examples(AS_LIST)
    assert outcomes["test_example_1"].startswith("failed: Failed example (line 10):\n    centroid(")
    assert "Got:\n    [0.15" in outcomes["test_example_1"]
    assert outcomes["test_example_3"] == "passed" and outcomes["test_example_5"] == "passed"
    assert outcomes["test_example_4"].startswith("failed: Failed example (line 7):")


async def test_the_examples_run_in_the_sandbox_checker() -> None:
    runner = CandidateTester(task(), DummySandbox(), SandboxSettings(timeout_s=10))
    for code, passed in [(RIGHT, [True] * 5), (AS_LIST, [False, False, True, False, True])]:
        report = await runner.run(code)
        assert [case.name for case in report.cases] == [f"test_example_{n}" for n in range(1, 6)]
        assert [case.outcome == "passed" for case in report.cases] == passed, report.cases
    failed = next(case for case in report.cases if case.outcome != "passed")
    assert "Failed example (line 10):" in failed.message and "Got:" in failed.message, failed.message
    assert "[0.15000000000000002, 0.30000000000000004]" in failed.message
