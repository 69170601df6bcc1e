"""``hand_built_run``: a code-debate run assembled without the engine, for unit tests of one phase or one call.

The engine normally builds the session record, event bus, journal,
tester, workspace, git worktree, LLM client and participants; a test that
drives ``ProposalPhase`` or ``DebateRun.ask`` directly needs the same parts
and nothing else (no store, no driver, no rounds).
"""

from __future__ import annotations

from pathlib import Path

from debatecode.config import DebateConfig
from debatecode.execution.probes import Prober
from debatecode.execution.tester import CandidateTester
from debatecode.llm.budget import TokenBudget
from debatecode.llm.client import LLMClient
from debatecode.llm.transport import Transport
from debatecode.protocol.deps import DebateDeps
from debatecode.protocol.events import EventBus
from debatecode.protocol.journal import Journal
from debatecode.protocol.participants import plan_participants
from debatecode.protocol.run import DebateRun
from debatecode.protocol.state import DebateState
from debatecode.protocol.workspace import CodeWorkspace
from debatecode.sandbox.base import Sandbox
from debatecode.store.records import SessionRecord
from debatecode.task import load_task
from debatecode.vcs.worktree import VersionRepository

__all__ = ["hand_built_run"]


def hand_built_run(
    config: DebateConfig,
    sandbox: Sandbox,
    task: Path,
    workdir: Path,
    *,
    budget: int | None = 50_000,
    transport: Transport | None = None,
) -> DebateRun:
    """A fresh ``DebateRun`` of session ``unit`` on the task file ``task``, with empty state.

    Args:
        config: the debate's settings; the participants are planned from it
            (``agents``, ``participants.*``) and its ``llm`` and ``sandbox``
            sections configure the client and the tester.
        sandbox: where candidates' tests and probes run.
        task: a task markdown file (e.g. ``examples/tasks/add.md``).
        workdir: the session's out dir; the version repository is made in ``workdir / "repo"``.
        budget: the session's token allowance, ``None`` for unlimited.
        transport: what the LLM client sends requests through (a fake, to see
            them); the default routes by model string (``scripted/...`` and the rest).

    Raises:
        TaskError: the task file cannot be read or parsed.
    """
    loaded = load_task(task)
    session = SessionRecord(
        id="unit", task_title=loaded.title, task_path=loaded.path, task_hash=loaded.text_hash, out_dir=str(workdir)
    )
    bus = EventBus()
    journal = Journal(session.id, bus)
    tests = CandidateTester(loaded, sandbox, config.sandbox)
    workspace = CodeWorkspace(
        task=loaded,
        tests=tests,
        probes=Prober(sandbox, tests.limits),
        worktree=VersionRepository(workdir / "repo").open_session(session.id),
        journal=journal,
        bus=bus,
    )
    llm = LLMClient(config.llm, transport=transport)
    participants = plan_participants(config, loaded, llm.prompt_style)
    deps = DebateDeps(llm=llm, bus=bus, journal=journal, workspace=workspace, budget=TokenBudget(budget))
    return DebateRun(session=session, config=config, agents=participants.agents, state=DebateState(), deps=deps)
