"""``sweep --jobs N``: runs go at once, and the report lists them in grid order, as a serial sweep does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli
from tests.support.dummy_sandbox import DummySandbox
from tests.support.in_flight import InFlight
from tests.support.sweep_scripted import TASKS, content, light_config_file, sweep_model

import debatecode.bench.sweep as sweep_module
import debatecode.sandbox
from debatecode.bench.sweep import run_sweep
from debatecode.sandbox.settings import SandboxSettings


@pytest.fixture
def light_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short protocol on a scripted model, with the tests' dummy sandbox (it runs only the model's code below)."""
    from debatecode.llm.scripted import register_scripted, unregister_scripted

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    register_scripted("sweep-jobs", sweep_model())
    yield light_config_file(tmp_path, tmp_path / "sweep.db", model="scripted/sweep-jobs")
    unregister_scripted("sweep-jobs")


def test_a_sweep_with_jobs_3_reports_what_a_serial_sweep_reports(
    light_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import debatecode._api

    sessions = InFlight()
    monkeypatch.setattr(debatecode._api, "solve_async", sessions.counted(debatecode._api.solve_async))
    grid: dict[str, list[Any]] = {"agents": [1, 2, 3]}
    reports = {}
    for jobs in (1, 3):
        sessions.most = 0
        reports[jobs] = run_sweep(TASKS, grid, out=tmp_path / f"sw-{jobs}", config_file=light_config, jobs=jobs)
        assert sessions.most == jobs, f"--jobs {jobs} ran {sessions.most} at once"

    serial, parallel = reports[1], reports[3]
    assert len(serial.runs) == 6
    assert [(r.values["agents"], r.task) for r in parallel.runs] == [
        (agents, task.name) for agents in (1, 2, 3) for task in TASKS
    ], "runs in grid order"
    assert content(parallel.runs) == content(serial.runs)
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in parallel.rows()] == [
        {k: v for k, v in row.items() if k != "seconds"} for row in serial.rows()
    ]


def test_the_sweep_default_with_a_local_model_is_the_calls_its_copies_generate_at_once(
    light_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one core: one copy of the model, one run at a time
    seen: list[int] = []

    async def record(report: Any, runs: Any, configs: Any, out: Path, console: Any, jobs: int = 1) -> None:
        seen.append(jobs)

    monkeypatch.setattr(sweep_module, "_run_all", record)
    monkeypatch.setattr(sweep_module, "_write", lambda report, out: None)
    run_sweep(TASKS[:1], {"agents": [1]}, model="local/gemma-3-270m", out=tmp_path / "a", config_file=light_config)
    run_sweep(TASKS[:1], {"agents": [1]}, out=tmp_path / "b", config_file=light_config, jobs=2)
    assert seen == [1, 2]


def test_the_sweep_cli_refuses_jobs_0(tmp_path: Path) -> None:
    proc = run_cli("sweep", str(TASKS[0]), "--set", "agents=1,2", "--jobs", "0", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2 and "--jobs" in proc.stderr
