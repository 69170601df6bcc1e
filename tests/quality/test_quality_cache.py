"""``analyze()`` measures a code version once per settings: repeats come from its in-process cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from debatecode.quality import QualitySettings, analyze, analyzer

CODE = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def ruff_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The code of every ruff run while the test runs, starting from an empty cache."""
    runs: list[str] = []
    real_run_ruff = analyzer.run_ruff

    def counting(code: str, *args: Any, **kwargs: Any) -> Any:
        runs.append(code)
        return real_run_ruff(code, *args, **kwargs)

    monkeypatch.setattr(analyzer, "run_ruff", counting)
    analyzer._CACHE.clear()
    yield runs
    analyzer._CACHE.clear()


def test_the_same_code_is_measured_once_and_scored_with_each_pass_rate(ruff_runs: list[str]) -> None:
    first = analyze(CODE, test_pass_rate=1.0)
    again = analyze(CODE, test_pass_rate=0.0)
    assert ruff_runs == [CODE]
    assert again.lint == first.lint and again.complexity == first.complexity and again.security == first.security
    assert first.components["tests"] == 1.0 and again.components["tests"] == 0.0
    assert again.score < first.score


def test_other_code_or_settings_are_measured_again(ruff_runs: list[str]) -> None:
    analyze(CODE, test_pass_rate=None)
    analyze(CODE + "\n\nx = 1\n", test_pass_rate=None)
    analyze(CODE, test_pass_rate=None, settings=QualitySettings(line_length=60))
    analyze(CODE, test_pass_rate=None, filename="other.py")
    assert len(ruff_runs) == 4


def test_a_changed_report_does_not_change_the_cached_one(ruff_runs: list[str]) -> None:
    first = analyze("import os\n", test_pass_rate=None)
    assert first.lint.findings
    first.lint.findings.clear()
    first.components.clear()
    again = analyze("import os\n", test_pass_rate=None)
    assert again.lint.findings and again.components
    assert len(ruff_runs) == 1


def test_project_ruff_config_and_tool_errors_are_not_cached(
    ruff_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = QualitySettings(ruff_config="project")
    analyze(CODE, test_pass_rate=None, settings=project)
    analyze(CODE, test_pass_rate=None, settings=project)
    assert len(ruff_runs) == 2

    def failing(code: str, *args: Any, **kwargs: Any) -> Any:
        ruff_runs.append(code)
        raise analyzer.RuffFailed("ruff went away")

    monkeypatch.setattr(analyzer, "run_ruff", failing)
    assert analyze("y = 2\n", test_pass_rate=None).tool_errors == {"ruff": "ruff went away"}
    monkeypatch.undo()
    assert analyze("y = 2\n", test_pass_rate=None).tool_errors == {}


def test_the_cache_keeps_only_the_latest_versions(ruff_runs: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analyzer, "_CACHE", analyzer._MeasurementCache(2))
    for code in ("a = 1\n", "b = 2\n", "c = 3\n", "a = 1\n"):
        analyze(code, test_pass_rate=None)
    assert ruff_runs == ["a = 1\n", "b = 2\n", "c = 3\n", "a = 1\n"]


async def test_analyze_async_measures_in_a_thread_and_scores_a_cached_version_on_the_caller(
    ruff_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import threading

    threads: list[str] = []
    real_scored = analyzer._scored

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real_scored(*args, **kwargs)

    monkeypatch.setattr(analyzer, "_scored", recording)
    first = await analyzer.analyze_async(CODE, test_pass_rate=1.0)
    again = await analyzer.analyze_async(CODE, test_pass_rate=0.5)
    other = await analyzer.analyze_async(CODE, test_pass_rate=None, settings=QualitySettings(ruff_config="project"))
    loop_thread = threading.current_thread().name
    assert threads[0] != loop_thread, "a new version is measured in a worker thread"
    assert threads[1] == loop_thread, "a cached version needs no thread"
    assert threads[2] != loop_thread, "a project ruff configuration is never cached"
    assert ruff_runs == [CODE, CODE]
    assert again.lint == first.lint and again.components["tests"] == 0.5 and other.test_pass_rate is None
    assert asyncio.get_running_loop().is_running()
    with pytest.raises(ValueError, match="between 0 and 1"):
        await analyzer.analyze_async(CODE, test_pass_rate=1.5)
