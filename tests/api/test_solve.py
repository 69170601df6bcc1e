"""``solve()`` keeps the given config under overrides, returns a typed result, and works inside a running loop."""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from debatecode import ConfigError, DebateConfig, DebateResult, EventBus, SessionFinished, TurnCompleted, solve
from debatecode._api import apply_overrides, run_sync, solve_async

from .conftest import ADD_TASK, LIGHT, dummy_services


def test_overrides_apply_on_top_of_the_given_config(config: DebateConfig, scripted_model: str) -> None:
    services = dummy_services(config)
    try:
        result = solve(ADD_TASK, config, agents=2, services=services)
    finally:
        services.store.close()
    assert isinstance(result, DebateResult)
    assert result.session.model == scripted_model
    stored = result.session.config
    assert stored["model"] == scripted_model
    assert stored["agents"] == 2
    assert stored["phases"]["critique"] is False
    assert Path(stored["out"]) == config.out
    assert result.status == "completed"
    assert result.all_passed
    assert config.agents == 3, "the caller's config object is left as it was"


def test_without_a_config_overrides_apply_on_top_of_the_loaded_one(
    config: DebateConfig, scripted_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "debatecode.toml").write_text(f'model = "{scripted_model}"\nagents = 3\n')
    monkeypatch.chdir(project)
    services = dummy_services(config)
    try:
        result = solve(ADD_TASK, agents=1, out=str(tmp_path / "out2"), services=services, **LIGHT)
    finally:
        services.store.close()
    assert result.session.model == scripted_model
    assert result.session.config["agents"] == 1


def test_apply_overrides_forms_and_validation(config: DebateConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATECODE_AGENTS", "7")
    updated = apply_overrides(
        config,
        {"rounds": 2, "sandbox__backend": "local", "llm.seed": 5, "convergence": {"voting": "borda"}},
    )
    assert updated.agents == config.agents == 3, "environment variables never creep back in"
    assert (updated.rounds, updated.sandbox.backend, updated.llm.seed) == (2, "local", 5)
    assert updated.convergence.voting == "borda"
    assert updated.convergence.model_dump(exclude={"voting"}) == config.convergence.model_dump(exclude={"voting"})
    assert updated.model == config.model
    assert updated.phases == config.phases


def test_unknown_override_names_the_key(config: DebateConfig) -> None:
    with pytest.raises(ConfigError, match="agentz") as caught:
        solve(ADD_TASK, config, agentz=2)
    assert caught.value.key == "agentz"
    assert "agents" in str(caught.value)
    with pytest.raises(ConfigError) as nested:
        apply_overrides(config, {"sandbox__backnd": "local"})
    assert nested.value.key == "sandbox.backnd"


def test_invalid_override_is_a_config_error(config: DebateConfig) -> None:
    with pytest.raises(ConfigError, match="agents") as caught:
        apply_overrides(config, {"agents": 0})
    assert caught.value.key == "agents"
    with pytest.raises(ConfigError, match="table"):
        apply_overrides(config, {"sandbox": "local"})


def test_solve_works_inside_a_running_event_loop(config: DebateConfig) -> None:
    """As in Jupyter: a plain ``solve()`` call in the body of a coroutine, on the loop's thread."""
    services = dummy_services(config)
    bus = EventBus()
    threads: set[str] = set()
    turns: list[TurnCompleted] = []
    bus.subscribe(lambda event: threads.add(threading.current_thread().name))
    bus.subscribe(lambda event: turns.append(event) if isinstance(event, TurnCompleted) else None)

    async def notebook_cell() -> DebateResult:
        return solve(ADD_TASK, config, agents=2, bus=bus, services=services)

    try:
        result = asyncio.run(notebook_cell())
    finally:
        services.store.close()
    assert result.status == "completed"
    assert result.all_passed
    assert threads == {"debatecode-solve"}, "the debate ran on a loop of its own"
    assert {t.turn.agent_id for t in turns} >= {"agent-1", "agent-2"}


async def test_solve_async_returns_the_typed_result_and_emits_events(config: DebateConfig) -> None:
    services = dummy_services(config)
    bus = EventBus()
    finished: list[SessionFinished] = []
    bus.subscribe(lambda event: finished.append(event) if isinstance(event, SessionFinished) else None)
    try:
        result = await solve_async(ADD_TASK, config, bus=bus, services=services)
    finally:
        await services.aclose()
    assert isinstance(result, DebateResult)
    assert [f.status for f in finished] == ["completed"]
    assert result.code is not None and "return a + b" in result.code


_marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


def test_run_sync_in_a_running_loop_keeps_context_and_raises_what_the_coroutine_raises() -> None:
    async def read_marker() -> str:
        await asyncio.sleep(0)
        return _marker.get()

    async def fail() -> None:
        raise ConfigError("boom", key="x")

    async def cell() -> str:
        _marker.set("from the caller")
        with pytest.raises(ConfigError, match="boom"):
            run_sync(fail)
        return run_sync(read_marker)

    assert asyncio.run(cell()) == "from the caller"
    assert run_sync(read_marker) == "unset", "without a running loop it is asyncio.run"


def _run_as_a_notebook_cell(cell: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """``cell()`` on a loop of our own whose SIGINT handling is Python's default, as in an IPython kernel."""
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(cell())
    finally:
        loop.close()


@pytest.mark.usefixtures("ctrl_c_raises")
def test_interrupting_the_wait_cancels_the_worker() -> None:
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def cell() -> None:
        threading.Timer(0.3, _thread.interrupt_main).start()
        run_sync(slow)

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _run_as_a_notebook_cell(cell)
    assert cancelled.is_set()
    assert time.monotonic() - started < 10


async def test_one_bus_serves_several_runs(config: DebateConfig) -> None:
    """The engine subscribes its store recorder per run: the caller's bus must not collect them."""
    bus = EventBus()
    finished: list[SessionFinished] = []
    bus.subscribe(lambda event: finished.append(event) if isinstance(event, SessionFinished) else None)
    services = dummy_services(config)
    try:
        first = await solve_async(ADD_TASK, config, bus=bus, services=services)
        second = await solve_async(ADD_TASK, config, bus=bus, services=services)
    finally:
        await services.aclose()
    assert (first.status, second.status) == ("completed", "completed")
    assert [f.session_id for f in finished] == [first.session.id, second.session.id]


def test_overrides_do_not_mix_with_resume(config: DebateConfig) -> None:
    with pytest.raises(ConfigError, match="resumed session") as caught:
        solve(ADD_TASK, config, resume="0123456789ab", agents=2)
    assert caught.value.key == "agents"


@pytest.mark.usefixtures("ctrl_c_raises")
def test_interrupting_a_notebook_solve_stops_the_session_as_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debatecode.llm.scripted import ScriptedModel, ScriptedReply, register_scripted, unregister_scripted

    from .conftest import GOOD_ADD, light_config

    # Every author waits on the model, so nothing else is in flight when the interrupt lands.
    register_scripted("api-slow", ScriptedModel([ScriptedReply(content=GOOD_ADD, delay_s=30)] * 3, default=GOOD_ADD))
    config = light_config(tmp_path, "scripted/api-slow")
    services = dummy_services(config)

    async def cell() -> None:
        threading.Timer(1.0, _thread.interrupt_main).start()
        solve(ADD_TASK, config, services=services)

    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            _run_as_a_notebook_cell(cell)
        [session] = services.store.list_sessions()
    finally:
        services.store.close()
        unregister_scripted("api-slow")
    assert time.monotonic() - started < 20
    assert session.status == "cancelled"
    assert session.error == "interrupted by the user"
