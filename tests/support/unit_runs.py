"""``unit_run``: a code-debate run on a hand-built state, with fakes only — no engine, no store, no git, no sandbox.

The model is a ``FunctionModel`` (a reply function of the messages and tags),
the tester and prober run the scripted candidates in this process
(``tests/support/in_process.py``) and the worktree keeps versions in memory.
A phase test builds the state it starts from (``candidates`` with their
reports, exchanged tests, reviews...), runs one phase on it, and reads the
state and the journal.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from tests.support.in_process import InProcessProbes, InProcessTests, MemoryWorktree

from debatecode.config import DebateConfig, load_config
from debatecode.llm.budget import TokenBudget
from debatecode.llm.client import LLMClient
from debatecode.llm.function import FunctionModel, ModelFunction
from debatecode.protocol.deps import DebateDeps
from debatecode.protocol.events import Event, EventBus
from debatecode.protocol.journal import Journal
from debatecode.protocol.participants import plan_participants
from debatecode.protocol.run import DebateRun
from debatecode.protocol.state import Candidate, DebateState
from debatecode.protocol.workspace import CodeWorkspace
from debatecode.store.records import SessionRecord
from debatecode.task import Task, load_task

__all__ = ["REPO", "candidate", "unit_config", "unit_run"]

REPO = Path(__file__).resolve().parents[2]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"

_QUIET = {
    "participants.contrarian": False,
    "participants.moonshot": False,
    "participants.teacher": False,
    "convergence.early_stop": False,
    "quality.enabled": False,
}


def unit_config(**overrides: Any) -> DebateConfig:
    """A config for ``function/debater`` with no debatecode.toml; ``participants.*`` voices off unless named."""
    values: dict[str, Any] = {"model": "function/debater", **_QUIET}
    values.update({k.replace("__", "."): v for k, v in overrides.items()})
    return load_config(overrides=values, use_file=False)


def unit_run(
    config: DebateConfig,
    reply: ModelFunction,
    *,
    task: Task | Path = ADD_TASK,
    state: DebateState | None = None,
    only: Collection[str] | None = None,
    reflexion: bool = False,
) -> DebateRun:
    """A run of session ``unit`` over ``state`` (default: empty), its agents planned from ``config``.

    ``only`` keeps just the agents with those ids (in roster order). With ``reflexion``, the
    run's deps carry Reflexion's settings (and no episodic memory). Its events are kept in
    ``run.deps.bus.seen`` (a list).
    """
    loaded = task if isinstance(task, Task) else load_task(task)
    session = SessionRecord(id="unit", task_title=loaded.title, task_path=loaded.path, task_hash=loaded.text_hash)
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    bus.seen = seen  # type: ignore[attr-defined]
    journal = Journal(session.id, bus)
    workspace = CodeWorkspace(
        task=loaded,
        tests=InProcessTests(loaded),  # type: ignore[arg-type]
        probes=InProcessProbes(),  # type: ignore[arg-type]
        worktree=MemoryWorktree(),
        journal=journal,
        bus=bus,
    )
    llm = LLMClient(config.llm, transport=FunctionModel(reply))
    participants = plan_participants(config, loaded, llm.prompt_style, llm.code_reply)
    deps = DebateDeps(
        llm=llm,
        bus=bus,
        journal=journal,
        workspace=workspace,
        budget=TokenBudget(None),
        topology=participants.topology,
        ordering=participants.ordering,
        satisfaction=participants.satisfaction,
        reflexion=config.reflexion if reflexion else None,
    )
    return DebateRun(
        session=session,
        config=config,
        agents=[a for a in participants.agents if only is None or a.id in only],
        state=state if state is not None else DebateState(),
        deps=deps,
    )


async def candidate(run: DebateRun, agent_id: str, code: str | None, *, label: str = "") -> Candidate:
    """``code`` as ``agent_id``'s current candidate of ``run``'s state, tested by the run's (in-process) tester."""
    report = await run.run_tests(code)
    found = Candidate(agent_id, code, report, label=label)
    run.state.candidates[agent_id] = found
    return found
