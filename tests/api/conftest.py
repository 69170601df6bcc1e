"""A world for the public API tests: a scripted model, the dummy sandbox and a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.debaters import add_debater
from tests.support.dummy_sandbox import DummySandbox
from tests.support.scripted_models import registered_model
from tests.support.scripted_solve import LIGHT_PROTOCOL

from debatecode import DebateConfig, Services, load_config
from debatecode.llm.client import LLMClient
from debatecode.llm.scripted import ScriptedModel
from debatecode.store import open_store

REPO = Path(__file__).resolve().parents[2]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"

LIGHT = LIGHT_PROTOCOL
"""Proposal and convergence only: enough to end a session, fast."""


@pytest.fixture
def scripted_model() -> Iterator[str]:
    """``scripted/<unique>``: the add.md debater, registered for one test."""
    with registered_model("api", ScriptedModel(fn=add_debater(style_variants=False))) as model:
        yield model


GOOD_ADD = "```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```"


def light_config(tmp_path: Path, model: str) -> DebateConfig:
    """``model``, outputs and store in ``tmp_path``, the light protocol; 3 agents (the default)."""
    return load_config(
        overrides={
            "model": model,
            "out": tmp_path / "out",
            "store_url": f"sqlite:///{tmp_path / 'store.db'}",
            **LIGHT,
        },
        use_file=False,
    )


@pytest.fixture
def config(tmp_path: Path, scripted_model: str) -> DebateConfig:
    """The scripted add.md debater in the light protocol."""
    return light_config(tmp_path, scripted_model)


def dummy_services(config: DebateConfig) -> Services:
    """Services over the dummy sandbox (no Docker): the caller closes them."""
    return Services(
        llm=LLMClient(config.llm, token_budget=config.token_budget),
        sandbox=DummySandbox(),
        store=open_store(config.store_url),
    )
