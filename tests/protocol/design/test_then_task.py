"""From decision to task: the skeleton parses with the real task parser and its check fails until implemented."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from debatecode.errors import TaskError
from debatecode.protocol.design.records import (
    DecisionRecord,
    PerspectiveSummary,
    Recommendation,
    RejectedAlternative,
    RiskEntry,
)
from debatecode.protocol.design.then_task import default_entry_point, task_skeleton, write_task_skeleton
from debatecode.task import Task, load_task, parse_task


def make_record(**changes: object) -> DecisionRecord:
    record = DecisionRecord(
        number=12,
        slug="cache-in-postgres",
        title="Cache in PostgreSQL: UNLOGGED tables",
        date="2025-12-05",
        debate_id="DEB-abc123",
        question="Should we use Redis or PostgreSQL for caching?",
        perspectives=[PerspectiveSummary(name="Operational Simplicity", key_arguments=["one system"])],
        recommendation=Recommendation(
            text="Use UNLOGGED tables with a TTL column.\n## Tests\n```python\nassert True\n```",
            confidence="MEDIUM",
            confidence_reason="load is estimated",
            caveats=["Revisit if p99 passes 5 ms"],
        ),
        rejected=[RejectedAlternative(option="Redis", reason="a second system")],
        risks=[RiskEntry(risk="table bloat", likelihood="high", mitigation="tune autovacuum")],
        open_questions=["What TTL should entries get?"],
    )
    return record.model_copy(update=changes)


def run_tests(task: Task, solution: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Run the task's tests in-process as the sandbox would (``from solution import *`` first): name → outcome."""
    monkeypatch.setitem(sys.modules, "solution", solution)
    outcomes: dict[str, str] = {}
    for block in task.tests:
        namespace: dict[str, object] = {}
        exec(compile("from solution import *\n" + block.code, "test_task.py", "exec"), namespace)
        for name in block.test_names:
            test = namespace[name]
            assert callable(test)
            try:
                test()
            except (AssertionError, AttributeError, TypeError):
                outcomes[name] = "failed"
            else:
                outcomes[name] = "passed"
    return outcomes


def module_with(name: str, func: Callable[..., object] | None) -> types.ModuleType:
    module = types.ModuleType("solution")
    if func is not None:
        setattr(module, name, func)
    return module


def test_skeleton_parses_with_the_real_task_parser() -> None:
    task = parse_task(task_skeleton(make_record()))
    assert task.title == "Cache in PostgreSQL: UNLOGGED tables"
    assert task.entry_point == "cache_in_postgres"
    assert task.signature == "def cache_in_postgres(spec: dict[str, object]) -> dict[str, object]:"
    assert len(task.test_names) >= 1
    assert not task.examples


def test_description_quotes_the_decision_constraints_and_open_questions() -> None:
    task = parse_task(task_skeleton(make_record()))
    description = task.description
    assert "ADR 0012" in description and "DEB-abc123" in description
    assert "> Use UNLOGGED tables with a TTL column." in description
    assert "Confidence: MEDIUM — load is estimated" in description
    assert "- Caveat: Revisit if p99 passes 5 ms" in description
    assert "- Risk (high/medium): table bloat; mitigate by tune autovacuum" in description
    assert "- Not this: Redis" in description
    assert "- TODO: What TTL should entries get?" in description
    assert "Replace or extend it" in description


def test_model_text_cannot_inject_a_tests_section() -> None:
    task = parse_task(task_skeleton(make_record()))
    assert len(task.tests) == 1
    assert all("assert True" not in block.code for block in task.tests)


def test_the_check_fails_against_an_empty_solution(monkeypatch: pytest.MonkeyPatch) -> None:
    task = parse_task(task_skeleton(make_record()))
    outcomes = run_tests(task, module_with("cache_in_postgres", None), monkeypatch)
    assert outcomes and set(outcomes.values()) == {"failed"}


def test_the_check_fails_against_a_wrong_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    task = parse_task(task_skeleton(make_record()))

    def cache_in_postgres(a: object, b: object) -> object:
        return None

    outcomes = run_tests(task, module_with("cache_in_postgres", cache_in_postgres), monkeypatch)
    assert "failed" in outcomes.values()


def test_the_check_passes_once_the_function_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    task = parse_task(task_skeleton(make_record()))

    def cache_in_postgres(spec: dict[str, object]) -> dict[str, object]:
        return spec

    outcomes = run_tests(task, module_with("cache_in_postgres", cache_in_postgres), monkeypatch)
    assert set(outcomes.values()) == {"passed"}


def test_custom_entry_point_and_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    text = task_skeleton(
        make_record(), entry_point="get_cached", signature="def get_cached(key: str, *, ttl: int = 60)"
    )
    task = parse_task(text)
    assert (task.entry_point, task.signature) == ("get_cached", "def get_cached(key: str, *, ttl: int = 60):")

    def get_cached(key: str, *, ttl: int = 60) -> None:
        return None

    assert set(run_tests(task, module_with("get_cached", get_cached), monkeypatch).values()) == {"passed"}


@pytest.mark.parametrize(
    ("slug", "title", "expected"),
    [
        ("use-postgres", "x", "use_postgres"),
        ("", "2024 storage plan", "decision_2024_storage_plan"),
        ("", "###", "decision"),
        ("class", "x", "class_"),
    ],
)
def test_default_entry_point_is_an_identifier(slug: str, title: str, expected: str) -> None:
    name = default_entry_point(make_record(slug=slug, title=title))
    assert name == expected and name.isidentifier()
    parse_task(task_skeleton(make_record(slug=slug, title=title)))


@pytest.mark.parametrize(
    ("entry_point", "signature"),
    [("not-an-identifier", None), ("lambda", None), ("f", "def g(x):"), ("f", "def f(x"), ("f", "x = 1")],
)
def test_bad_entry_point_or_signature_is_a_task_error(entry_point: str, signature: str | None) -> None:
    with pytest.raises(TaskError):
        task_skeleton(make_record(), entry_point=entry_point, signature=signature)


def test_write_task_skeleton_writes_a_loadable_file_and_refuses_to_overwrite(tmp_path: Path) -> None:
    path = write_task_skeleton(tmp_path / "task.md", task_skeleton(make_record()))
    assert load_task(path).entry_point == "cache_in_postgres"
    with pytest.raises(TaskError, match="already exists") as caught:
        write_task_skeleton(path, "something else")
    assert caught.value.fix
    assert load_task(path).entry_point == "cache_in_postgres"
