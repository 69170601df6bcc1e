"""Ray's ``worker_process_setup_hook`` for the SWE-bench Ray tests: Docker-free grading in every worker.

A Ray worker is another process: it grades with the stand-in image builder and
test sandbox of ``tests.bench_swebench.fake_grading`` only if this hook makes
``remote.make_worker_harness`` build its harness with them, and it knows the
scripted solver ``scripted/swebench-ray-solver`` (which writes the calc fix) only
if this hook registers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.bench_swebench.fake_grading import FakeBuilder, FakeTestSandbox, RunLog
from tests.bench_swebench.solve_fixtures import GOOD_EDIT

from debatecode.bench.swebench import SWEBenchHarness, SWEBenchInstance, remote
from debatecode.llm import ScriptedModel, register_scripted

__all__ = ["HOOK", "SOLVER", "fake_worker_harness", "prepare_worker", "solver_model"]

HOOK = f"{__name__}.prepare_worker"
"""The hook as Ray's ``runtime_env`` names it."""
SOLVER = "swebench-ray-solver"
"""The scripted solver's name (``scripted/swebench-ray-solver``)."""


def solver_model() -> ScriptedModel:
    """Answers every proposal with the edit that fixes ``clamp``."""
    return ScriptedModel(fn=lambda messages, tags: GOOD_EDIT)


def fake_worker_harness(
    instances: Sequence[SWEBenchInstance], *, repos_dir: Path, out: Path, run_id: str
) -> SWEBenchHarness:
    """A worker's harness grading with ``FakeBuilder`` and an honest ``FakeTestSandbox``."""
    log = RunLog()
    return SWEBenchHarness(
        instances,
        repos_dir=repos_dir,
        out=out,
        builder=FakeBuilder(),
        sandbox_factory=lambda image, pool_size: FakeTestSandbox(image, log),
        run_id=run_id,
    )


def prepare_worker() -> None:
    """Make this worker's SWE-bench tasks build their harness with the fake builder and sandbox; register the solver."""
    remote.make_worker_harness = fake_worker_harness
    register_scripted(SOLVER, solver_model())
