"""Every phase, topology and voting method through the real engine and the real Docker sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.protocol.conftest import ADD_TASK, EVERY_PHASE_IN_ORDER, Harness
from tests.support.debaters import add_debater

from debatecode.config import SandboxSettings
from debatecode.protocol.events import PhaseStarted
from debatecode.sandbox.docker import DockerSandbox
from debatecode.task import load_task


@pytest.fixture
def docker_harness(tmp_path: Path, requires_docker: None) -> Iterator[Harness]:
    harness = Harness(tmp_path)
    harness.sandbox = DockerSandbox(SandboxSettings(sweep_on_start=False))
    yield harness
    harness.close()


@pytest.mark.docker
@pytest.mark.parametrize("topology", ["mesh", "star", "chain", "tree"])
async def test_every_phase_runs_on_each_topology(docker_harness: Harness, topology: str) -> None:
    harness = docker_harness
    model = harness.scripted(f"topo-{topology}", [], fn=add_debater(buggy=("agent-2",)))
    config = harness.config(
        model, agents=3, **{"topology.type": topology, "topology.planning": "dpde", "phases.dehallucination": True}
    )
    engine, store = harness.engine(config)
    task = load_task(ADD_TASK).model_copy(update={"difficulty": "complex"})
    result = await engine.solve(task)
    try:
        assert result.status == "completed", result.error
        assert [e.phase for e in harness.of(PhaseStarted)] == EVERY_PHASE_IN_ORDER
        assert result.all_passed and "a + 1" not in (result.code or "")
        turns = store.turns(result.session.id)
        backends = {
            t.test_results["backend"] for t in turns if t.test_results and t.test_results.get("status") != "skipped"
        }
        assert backends == {"docker"}
        attacks = {(t.agent_id, t.metadata.get("target")) for t in turns if t.metadata["kind"].startswith("attack-")}
        assert attacks, "agents attacked each other"
        assert result.session.topology == topology
        assert {
            "ask-1",
            "answer-1",
            "draft",
            "moonshot",
            "object",
            # agent-2's b == 0 hack is settled in adjudication now, before the critique needs a contrast.
            "adjudicate-1",
            "refine-adjudicated-1",
            "review",
            "attack",
            "defend",
            "explain",
        } <= {t.metadata["kind"] for t in turns}
    finally:
        await harness.sandbox.aclose()


@pytest.mark.docker
@pytest.mark.parametrize("method", ["plurality", "borda", "condorcet", "unanimous", "weighted"])
async def test_each_voting_method_decides_a_tie(docker_harness: Harness, method: str) -> None:
    harness = docker_harness
    model = harness.scripted(f"vote-{method}", [], fn=add_debater())
    config = harness.config(
        model,
        agents=3,
        skeleton=True,
        **{"convergence.voting": method, "convergence.ranking": "vote", "participants.contrarian": True},
    )
    engine, store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    try:
        assert result.status == "completed", result.error
        vote = result.session.outcome["vote"]
        assert vote["method"] == method
        assert result.session.outcome["winner"] == "agent-1", "every voter ranks candidate 1 first"
        votes = [t for t in store.turns(result.session.id) if t.metadata["kind"] == "vote"]
        assert {t.agent_id for t in votes} == {"agent-1", "agent-2", "agent-3", "contrarian"}
        assert vote["share"] == 1.0 and vote["threshold_reached"] is True
    finally:
        await harness.sandbox.aclose()
