"""A sweep resumes: a re-run into the same folder runs only the runs its ``runs.jsonl`` does not have yet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.support.dummy_sandbox import DummySandbox
from tests.support.sweep_scripted import MODEL, TASKS, content, light_config_file, sweep_model

import debatecode._api
import debatecode.sandbox
from debatecode.bench.sweep import RUNS_FILE, run_sweep
from debatecode.errors import ModelUnreachable
from debatecode.llm.scripted import register_scripted, unregister_scripted
from debatecode.sandbox.settings import SandboxSettings
from debatecode.store import open_store


@dataclass
class Solves:
    """Every session a sweep starts (``task@agents``), and one to fail as a provider gone down would."""

    started: list[str] = field(default_factory=list)
    fail: str | None = None


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> Iterator[Solves]:
    """The scripted model and the dummy sandbox, with every session started recorded."""

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    seen = Solves()
    real_solve = debatecode._api.solve_async

    async def counted(task: Any, config: Any, **kwargs: Any) -> Any:
        name = f"{Path(task.path).name}@{config.agents}"
        seen.started.append(name)
        if name == seen.fail:
            raise ModelUnreachable("the provider went away", model=config.model)
        return await real_solve(task, config, **kwargs)

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    monkeypatch.setattr(debatecode._api, "solve_async", counted)
    register_scripted(MODEL, sweep_model())
    yield seen
    unregister_scripted(MODEL)


def _sweep(tmp_path: Path, agents: list[int], tasks: list[Path] = TASKS) -> Any:
    config_file = tmp_path / "debatecode.toml"
    return run_sweep(tasks, {"agents": list(agents)}, out=tmp_path / "sweep", config_file=config_file, jobs=1)


@pytest.mark.slow
def test_a_rerun_runs_only_the_runs_not_recorded_yet(tmp_path: Path, solves: Solves) -> None:
    light_config_file(tmp_path, tmp_path / "sweep.db")
    add, sum_range = (task.name for task in TASKS)

    solves.fail = f"{add}@2"
    with pytest.raises(ModelUnreachable):
        _sweep(tmp_path, [1, 2])
    assert solves.started == [f"{add}@1", f"{sum_range}@1", f"{add}@2"], "stopped at the third run"
    recorded = (tmp_path / "sweep" / RUNS_FILE).read_text().splitlines()
    assert [(json.loads(line)["task"], json.loads(line)["values"]) for line in recorded] == [
        (add, {"agents": 1}),
        (sum_range, {"agents": 1}),
    ], "each finished run is on disk as soon as it finished"

    solves.fail = None
    solves.started.clear()
    resumed = _sweep(tmp_path, [1, 2])
    assert solves.started == [f"{add}@2", f"{sum_range}@2"], "only the runs missing ran"
    assert resumed.recorded == 2 and len(resumed.runs) == 4

    solves.started.clear()
    extended = _sweep(tmp_path, [1, 2, 3])
    assert solves.started == [f"{add}@3", f"{sum_range}@3"], "a sweep with one more value runs only that value"
    assert [(r.values["agents"], r.task) for r in extended.runs] == [
        (agents, task.name) for agents in (1, 2, 3) for task in TASKS
    ], "recorded and new runs, in grid order"
    assert [r.session_id for r in extended.runs[:4]] == [r.session_id for r in resumed.runs]
    assert content(extended.runs[:4]) == content(resumed.runs)
    assert "6 runs (4 recorded by an earlier run of this sweep" in extended.markdown_path.read_text()
    assert len(extended.rows()) == 3

    solves.started.clear()
    again = _sweep(tmp_path, [1, 2, 3])
    assert solves.started == [] and again.recorded == 6
    assert content(again.runs) == content(extended.runs)
    with open_store(f"sqlite:///{tmp_path / 'sweep.db'}") as store:
        assert len(store.list_sessions(limit=100)) == 6, "one stored session per run: nothing ran twice"


def test_a_run_whose_config_changed_is_run_again(tmp_path: Path, solves: Solves) -> None:
    config_file = light_config_file(tmp_path, tmp_path / "sweep.db")
    _sweep(tmp_path, [1], TASKS[:1])
    config_file.write_text(config_file.read_text().replace("rounds = 0\n", "rounds = 0\ntoken_budget = 90000\n"))
    changed = _sweep(tmp_path, [1], TASKS[:1])
    assert solves.started == [f"{TASKS[0].name}@1"] * 2, "another config is another run"
    assert changed.recorded == 0 and len(changed.runs) == 1
