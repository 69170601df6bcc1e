"""The forgery corpus: wrong code that tries to forge its own verdict must score 0 on every backend.

Each technique in ``_forgery_corpus.FORGERIES`` goes through the three ways
debatecode grades code: HumanEval-style checks (``run_checks``, what ``bench
humaneval`` uses), a task's visible tests (``TestRunner``, what ``solve`` uses),
and ``debatecode bench humaneval --predictions`` end to end. The honest control
must pass each time, so that "scores 0" is not "cannot pass at all".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from _forgery_corpus import FORGERIES, HONEST, code_of

from debatecode.config import SandboxSettings
from debatecode.execution.runner import TestRunner
from debatecode.sandbox.base import Limits, Sandbox
from debatecode.sandbox.checks import CheckJob, run_checks
from debatecode.task import load_task

ROOT = Path(__file__).resolve().parents[1]
ADD_TASK = ROOT / "examples" / "tasks" / "add.md"
CHECK = (
    "def check(candidate):\n"
    "    import random\n"
    "    assert candidate(0, 1) == 1\n"
    "    assert candidate(2, 3) == 5\n"
    "    for _ in range(20):\n"
    "        x, y = random.randint(0, 1000), random.randint(0, 1000)\n"
    "        assert candidate(x, y) == x + y\n"
)
NOT_RUN: dict[str, dict[str, str]] = {
    "unsafe-host": {
        "kill_everything": "kill(-1) would reach every process of the job's uid on the host",
    },
}
"""Backend -> technique -> why it is not run there."""

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "bubblewrap", "unsafe-host"]


def make_sandbox(backend: str) -> Sandbox:
    if backend == "docker":
        from debatecode.sandbox.docker import DockerSandbox

        return DockerSandbox(SandboxSettings(pool_size=1, sweep_on_start=False))
    from debatecode.sandbox.local import LocalSandbox

    return LocalSandbox(isolation="rlimits" if backend == "unsafe-host" else "bubblewrap")


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox(backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    if backend == "docker":
        problem = request.getfixturevalue("docker_problem")
        if problem is not None:
            if os.environ.get("DEBATECODE_REQUIRE_DOCKER") == "1":
                pytest.fail(f"Docker is required but unusable: {problem}")
            pytest.skip(f"Docker sandbox unusable: {problem}")
    instance = make_sandbox(backend)
    try:
        instance.check()
    except Exception as exc:
        if backend == "docker":
            raise
        pytest.skip(f"{backend} unusable here: {exc}")
    yield instance
    await instance.aclose()


def techniques(backend: str) -> list[str]:
    return [name for name in FORGERIES if name not in NOT_RUN.get(backend, {})]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_honest_control_passes_both_ways(sandbox: Sandbox) -> None:
    (result,) = await run_checks(sandbox, [CheckJob(code=code_of(HONEST), tests=CHECK, entry_point="add")])
    assert result.passed, result
    runner = TestRunner(load_task(ADD_TASK), sandbox, SandboxSettings())
    report = await runner.run(code_of(HONEST))
    assert report.all_passed, report


@pytest.mark.asyncio(loop_scope="module")
async def test_every_forgery_scores_zero_through_humaneval_checks(sandbox: Sandbox, backend: str) -> None:
    names = techniques(backend)
    jobs = [
        CheckJob(code=code_of(FORGERIES[name]), tests=CHECK, entry_point="add", name=name, test_timeout_s=5)
        for name in names
    ]
    results = await run_checks(sandbox, jobs, limits=Limits(timeout_s=20), concurrency=1)
    forged = {r.name: [(t.name, t.outcome, t.message[-200:]) for t in r.tests] for r in results if r.passed}
    assert not forged, forged
    assert all(result.count("passed") == 0 for result in results), [
        (r.name, [(t.name, t.outcome) for t in r.tests]) for r in results
    ]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("name", list(FORGERIES))
async def test_each_forgery_scores_zero_through_the_task_tests(sandbox: Sandbox, backend: str, name: str) -> None:
    if name in NOT_RUN.get(backend, {}):
        pytest.skip(NOT_RUN[backend][name])
    runner = TestRunner(load_task(ADD_TASK), sandbox, SandboxSettings(timeout_s=3))
    report = await runner.run(code_of(FORGERIES[name]))
    assert report.passed == 0, [(case.name, case.outcome, case.message[-300:]) for case in report.cases]
    assert report.total == 4 and not report.all_passed


@pytest.mark.parametrize("backend_name", [pytest.param("docker", marks=pytest.mark.docker), "local"])
def test_the_corpus_scores_zero_through_bench_humaneval_predictions(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend_name == "docker":
        request.getfixturevalue("requires_docker")
    predictions = tmp_path / "forgeries.jsonl"
    with predictions.open("w", encoding="utf-8") as handle:
        for completion in FORGERIES.values():
            handle.write(json.dumps({"task_id": "HumanEval/53", "completion": completion}) + "\n")
    honest = tmp_path / "honest.jsonl"
    honest.write_text(json.dumps({"task_id": "HumanEval/53", "completion": HONEST}) + "\n", encoding="utf-8")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    command = [str(Path(sys.executable).with_name("debatecode")), "bench", "humaneval", "--sandbox", backend_name]
    forged = subprocess.run(
        [*command, "--predictions", str(predictions), "--out", str(tmp_path / "out-forged")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    control = subprocess.run(
        [*command, "--predictions", str(honest), "--out", str(tmp_path / "out-honest")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert "Traceback" not in forged.stderr + control.stderr, forged.stderr[-2000:] + control.stderr[-2000:]
    forged_line, control_line = " ".join(forged.stdout.split()), " ".join(control.stdout.split())
    assert forged.returncode == 0 and control.returncode == 0, (forged.stderr[-2000:], control.stderr[-2000:])
    # pass@1 over n samples of one problem is c/n: 0.000 means not one of the forgeries passed.
    # With 10 or more samples pass@10 is printed too: 0.000 as well, since no sample passed.
    assert "pass@1 0.000" in forged_line and f"({len(FORGERIES)} samples" in forged_line, forged_line
    assert "pass@10 0.000" in forged_line or len(FORGERIES) < 10, forged_line
    assert "1/1 problems solved" in control_line and "pass@1 1.000 (1 samples" in control_line, control_line


SOLVE_TECHNIQUES = ["result_file_then_exit", "always_equal_object", "pytest_conftest_and_plugins"]
"""A sample through the whole CLI (every technique already goes through the same TestRunner above)."""


@pytest.mark.parametrize("backend_name", [pytest.param("docker", marks=pytest.mark.docker), "local"])
@pytest.mark.parametrize("name", SOLVE_TECHNIQUES)
def test_forgeries_fail_end_to_end_through_debatecode_solve(
    backend_name: str, name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The real console script, a scripted model that proposes the forgery: ``solve`` must not report a pass."""
    if backend_name == "docker":
        request.getfixturevalue("requires_docker")
    block = "```python\n" + code_of(FORGERIES[name]).replace("def add(x: int, y: int):", "def add(x, y):") + "```\n"
    replies = tmp_path / "replies.yaml"
    replies.write_text(json.dumps({"replies": [], "default": block}), encoding="utf-8")  # JSON is YAML
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"})
    env["DEBATECODE_MEMORY__EMBEDDER"] = "hashing"  # grading is under test, not memory: no torch load (~10 s)
    solved = subprocess.run(
        [
            str(Path(sys.executable).with_name("debatecode")),
            "solve",
            str(ADD_TASK),
            "--model",
            f"scripted:{replies}",
            "--agents",
            "1",
            "--phases",
            "proposal,convergence",
            "--sandbox",
            backend_name,
            "--no-checkpoints",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    output = " ".join(solved.stdout.split())
    assert solved.returncode == 1, (solved.returncode, output[-1500:], solved.stderr[-1500:])
    assert "0/4 tests pass" in output, output[-1500:]
    assert "Traceback" not in solved.stderr
