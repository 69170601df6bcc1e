"""A server world: the app over a real SQLite store in ``tmp_path``, scripted debaters and the dummy sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.api.conftest import ADD_TASK, LIGHT, dummy_services, scripted_model  # noqa: F401 - scripted_model is a fixture
from tests.support.debaters import add_debater
from tests.support.dummy_sandbox import DummySandbox
from tests.support.scripted_models import registered_model

from debatecode import DebateConfig, Services, load_config
from debatecode.llm.client import LLMClient
from debatecode.llm.scripted import ScriptedModel
from debatecode.server import ServerOptions, create_app
from debatecode.store import open_store

__all__ = ["ADD_TASK_TEXT", "LIGHT", "ROUNDS", "server_config"]

ADD_TASK_TEXT = ADD_TASK.read_text(encoding="utf-8")


ROUNDS: dict[str, Any] = {
    "agents": 2,
    "rounds": 2,
    "phases.critique": True,
    "phases.review": True,
    "review.reviewers": ["judge"],
    "convergence.early_stop": False,
    "convergence.patience": 9,
}
"""With ``unsatisfied_model``: two debate rounds, so one checkpoint after round 1."""


@pytest.fixture
def unsatisfied_model() -> Iterator[str]:
    """``scripted/<unique>``: the add.md debater whose reviews stay at 60, so the rounds run on."""
    with registered_model("server", ScriptedModel(fn=add_debater(satisfaction=60, style_variants=False))) as model:
        yield model


@pytest.fixture
def buggy_model() -> Iterator[str]:
    """agent-2 drafts ``add`` with a special case for zero, which a test of add.md catches."""
    with registered_model("views", ScriptedModel(fn=add_debater(buggy=("agent-2",), style_variants=False))) as model:
        yield model


@pytest.fixture
def stalemate_model() -> Iterator[str]:
    """The design debate of ``test_escalation.py`` that escalates after three flat rounds."""
    from tests.protocol.design.conftest import RecordingModel
    from tests.server.test_escalation import stalemate_script

    with registered_model("escalation", RecordingModel(stalemate_script())) as model:
        yield model


def server_config(tmp_path: Path, model: str, **overrides: Any) -> DebateConfig:
    """The server's base config: ``model``, the light protocol, a store in ``tmp_path``."""
    return load_config(
        overrides={
            "model": model,
            "store_url": f"sqlite:///{tmp_path / 'store.db'}",
            "memory.embedder": "hashing",
            **LIGHT,
            **overrides,
        },
        use_file=False,
    )


def dummy_factory(config: DebateConfig) -> Services:
    """Each code session's services: its own model client and store, the dummy sandbox."""
    return Services(
        llm=LLMClient(config.llm, token_budget=config.token_budget),
        sandbox=DummySandbox(),
        store=open_store(config.store_url),
    )


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """``make_app(config, token=None)``: the app; every app made is shut down after the test."""
    made: list[Any] = []

    def make(config: DebateConfig, *, token: str | None = None, **options: Any) -> Any:
        app = create_app(
            ServerOptions(config=config, data_dir=tmp_path / "server", token=token, **options),
            services=dummy_factory,
        )
        made.append(app)
        return app

    yield make
    for app in made:
        app.state.ctx.manager.shutdown()
        app.state.ctx.close()


@pytest.fixture
def app(tmp_path: Path, scripted_model: str, make_app: Callable[..., Any]) -> Any:  # noqa: F811 - the fixture above
    """The app over the scripted add.md debaters."""
    return make_app(server_config(tmp_path, scripted_model))


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to ``app`` in-process (httpx's ASGI transport)."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        yield http
