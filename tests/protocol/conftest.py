"""Build a real engine over scripted models, the dummy sandbox and a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.dummy_sandbox import DummySandbox

from debatecode.config import DebateConfig, load_config
from debatecode.llm.client import LLMClient
from debatecode.llm.scripted import ScriptedModel, ScriptedReply, register_scripted, unregister_scripted
from debatecode.llm.transport import Transport
from debatecode.protocol.engine import DebateEngine, DebateResult
from debatecode.protocol.events import Event, EventBus
from debatecode.sandbox.base import Sandbox
from debatecode.store import open_store
from debatecode.store.records import TurnRecord
from debatecode.store.repository import SessionStore
from debatecode.task import load_task

REPO = Path(__file__).resolve().parents[2]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"
ADD_REPLIES = REPO / "examples" / "replies" / "add.yaml"
MERGE_TASK = REPO / "examples" / "tasks" / "merge_intervals.md"

GOOD = "```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
BAD = "```python\ndef add(a: int, b: int) -> int:\n    return a - b\n```"
PARTIAL = "```python\ndef add(a: int, b: int) -> int:\n    return a + b if a > 0 else a - b\n```"
WORSE = "```python\ndef add(a, b):\n    raise ValueError('no')\n```"

SKELETON = {
    "phases.dehallucination": False,
    "phases.self_evolvement": True,
    "phases.proposal": True,
    "phases.adjudication": False,
    "phases.critique": False,
    "phases.review": False,
    "phases.optimization": False,
    "phases.adversarial": False,
    "phases.convergence": True,
    "participants.contrarian": False,
    "participants.moonshot": False,
    "participants.teacher": False,
}
"""Only self-evolvement, proposal and convergence: the walking skeleton's protocol."""

LATE_PHASES_OFF = {"phases.optimization": False, "phases.adversarial": False}
"""Optimization and adversarial off: a test of an earlier phase does not run them."""
AUTHORS_ONLY = {"participants.moonshot": False, "participants.contrarian": False}
"""No Moonshot and no Contrarian: only the authors take part."""
EVERY_PHASE_IN_ORDER = [
    "dehallucination",
    "self_evolvement",
    "proposal",
    "adjudication",
    "reflexion",
    "critique",
    "review",
    "optimization",
    "adversarial",
    "convergence",
]
"""The phases a debate with every phase on starts, in the order it starts them."""


def reply(content: str, **filters: Any) -> ScriptedReply:
    return ScriptedReply(content=content, **filters)


class Harness:
    """One engine's world: config, store, event log."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.store_url = f"sqlite:///{tmp_path / 'store.db'}"
        self.events: list[Event] = []
        self.sandbox: Sandbox = DummySandbox()
        self._names: list[str] = []
        self.stores: list[SessionStore] = []

    def config(self, model: str, *, skeleton: bool = False, **overrides: Any) -> DebateConfig:
        # The debate's own mechanics are under test here, so the early stop (which skips the debate when
        # candidates already pass and agree) is off unless a test turns it on; tests/protocol/test_early_stop.py covers it.
        values: dict[str, Any] = {
            "model": model,
            "out": self.tmp_path / "out",
            "store_url": self.store_url,
            "convergence.early_stop": False,
        }
        if skeleton:
            values.update(SKELETON)
        values.update({k.replace("__", "."): v for k, v in overrides.items()})
        return load_config(overrides=values, use_file=False)

    def scripted(self, name: str, replies: list[ScriptedReply | str], **kwargs: Any) -> str:
        register_scripted(name, ScriptedModel(replies, **kwargs))
        self._names.append(name)
        return f"scripted/{name}"

    def engine(
        self, config: DebateConfig, *, human: Any = None, transport: Transport | None = None
    ) -> tuple[DebateEngine, SessionStore]:
        """A new engine on ``config`` (its events logged here) and its store; ``transport``: the LLM's, when given."""
        store = open_store(config.store_url)
        self.stores.append(store)
        bus = EventBus()
        bus.subscribe(self.events.append)
        llm = LLMClient(config.llm, transport=transport, token_budget=config.token_budget)
        return DebateEngine(config, llm=llm, sandbox=self.sandbox, store=store, bus=bus, human=human), store

    async def solve(self, config: DebateConfig, task: Path = ADD_TASK) -> tuple[DebateResult, list[TurnRecord]]:
        """Run a new engine on ``task`` (``add`` by default): its result and every stored turn."""
        engine, store = self.engine(config)
        result = await engine.solve(load_task(task))
        return result, store.turns(result.session.id)

    def of(self, kind: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def close(self) -> None:
        for name in self._names:
            unregister_scripted(name)
        for store in self.stores:
            store.close()


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    yield h
    h.close()
