"""The forgery corpus: wrong code that tries to forge its own verdict must score 0 on every backend.

Each technique in ``_forgery_corpus.FORGERIES`` goes through the three ways
debatecode grades code: HumanEval-style checks (``run_checks``, what ``bench
humaneval`` uses), a task's visible tests (``CandidateTester``, what ``solve`` uses),
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
from _operator_forgeries import OPERATOR_FORGERIES, OperatorForgery

from debatecode.config import SandboxSettings
from debatecode.execution.tester import CandidateTester
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
    runner = CandidateTester(load_task(ADD_TASK), sandbox, SandboxSettings())
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
    runner = CandidateTester(load_task(ADD_TASK), sandbox, SandboxSettings(timeout_s=3))
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
"""A sample through the whole CLI (every technique already goes through the same CandidateTester above)."""


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


# --------------------------------------------------------------------------- forgeries through values and task names

MEAN_TASK = Path(__file__).resolve().parent / "tasks" / "mean.md"
SOLVE_PATH_FORGERIES = ["sub_answers_zero", "abs_answers_zero", "truediv_answers_one", "reduces_to_the_expected_value"]
"""Operator forgeries of ``mean`` that the mean task's own tests (``tasks/mean.md``) would be fooled by."""


def _operator_forgery(name: str) -> OperatorForgery:
    (found,) = [forgery for forgery in OPERATOR_FORGERIES if forgery.name == name]
    return found


def test_the_operator_corpus_has_both_ideas_and_fifteen_variants_beyond_the_two_reported() -> None:
    names = {forgery.name for forgery in OPERATOR_FORGERIES}
    assert {"sub_answers_zero", "redefined_prompt_helper"} <= names
    assert len(names) == len(OPERATOR_FORGERIES) >= 17


@pytest.mark.asyncio(loop_scope="module")
async def test_operator_and_task_name_forgeries_score_zero_and_their_honest_controls_pass(sandbox: Sandbox) -> None:
    jobs = [
        CheckJob(
            code=forgery.code if kind == "forged" else forgery.honest_code,
            tests=forgery.check,
            entry_point=forgery.entry_point,
            task_code=forgery.task_code,
            name=f"{kind}:{forgery.name}",
            test_timeout_s=5,
        )
        for forgery in OPERATOR_FORGERIES
        for kind in ("forged", "honest")
    ]
    results = {result.name: result for result in await run_checks(sandbox, jobs, limits=Limits(timeout_s=20))}
    failing_controls = {
        n: [t.message[-300:] for t in r.tests] for n, r in results.items() if n.startswith("honest:") and not r.passed
    }
    assert not failing_controls, failing_controls
    forged = {
        n: [t.message[-300:] for t in r.tests]
        for n, r in results.items()
        if n.startswith("forged:") and r.count("passed")
    }
    assert not forged, forged
    # The reported one fails with a message that says why, not with a bare assertion.
    (reported,) = results["forged:sub_answers_zero"].tests
    assert "_Z object of the code under test> is not plain data, so a test cannot compute with it" in reported.message


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("name", SOLVE_PATH_FORGERIES)
async def test_operator_forgeries_score_zero_through_a_tasks_tests(sandbox: Sandbox, name: str) -> None:
    task = load_task(MEAN_TASK)
    runner = CandidateTester(task, sandbox, SandboxSettings(timeout_s=3))
    honest = await runner.run(_operator_forgery(name).honest_code)
    assert honest.all_passed, [(case.name, case.outcome, case.message[-300:]) for case in honest.cases]
    report = await runner.run(_operator_forgery(name).code)
    assert report.passed == 0 and report.total == honest.total, [
        (c.name, c.outcome, c.message[-300:]) for c in report.cases
    ]


@pytest.mark.asyncio(loop_scope="module")
async def test_candidate_objects_still_work_through_their_methods(sandbox: Sandbox) -> None:
    """Tests that build the code's own objects (an LRU cache) and call their methods keep passing."""
    code = (
        "from collections import OrderedDict\n"
        "class LRUCache:\n"
        "    def __init__(self, capacity):\n"
        "        self.capacity, self.items = capacity, OrderedDict()\n"
        "    def get(self, key):\n"
        "        if key not in self.items:\n"
        "            return -1\n"
        "        self.items.move_to_end(key)\n"
        "        return self.items[key]\n"
        "    def put(self, key, value):\n"
        "        self.items[key] = value\n"
        "        self.items.move_to_end(key)\n"
        "        if len(self.items) > self.capacity:\n"
        "            self.items.popitem(last=False)\n"
        "    def size(self):\n"
        "        return len(self.items)\n"
        "    def keys(self):\n"
        "        return self.items.keys()\n"
    )
    tests = (
        "def test_lru_evicts_the_least_recently_used():\n"
        "    cache = LRUCache(2)\n"
        "    cache.put('a', 1)\n"
        "    cache.put('b', 2)\n"
        "    assert cache.get('a') == 1\n"
        "    cache.put('c', 3)\n"
        "    assert cache.get('b') == -1 and cache.size() == 2\n"
        "    assert list(cache.keys()) == ['a', 'c'] and cache.keys() == {'a', 'c'}\n"
        "def test_but_not_through_operators():\n"
        "    cache = LRUCache(1)\n"
        "    assert len(cache) == 0\n"
    )
    (result,) = await run_checks(sandbox, [CheckJob(code=code, tests=tests)])
    outcomes = {test.name: (test.outcome, test.message) for test in result.tests}
    assert outcomes["test_lru_evicts_the_least_recently_used"][0] == "passed", outcomes
    outcome, message = outcomes["test_but_not_through_operators"]
    assert outcome == "error" and "cannot take the length of it" in message, outcomes


HUMANEVAL_VALUE_FORGERIES = {
    "HumanEval/4": "    class _Z:\n        def __sub__(self, other):\n            return 0.0\n    return _Z()\n",
    "HumanEval/32": "    return 0.0\n\n\ndef poly(xs, x):\n    return 0.0\n",
}
"""The issue's two reproductions, as HumanEval completions scored against the real hidden tests."""


@pytest.mark.parametrize("backend_name", [pytest.param("docker", marks=pytest.mark.docker), "local"])
def test_the_reported_value_forgeries_score_zero_through_bench_humaneval_predictions(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend_name == "docker":
        request.getfixturevalue("requires_docker")
    from debatecode.bench.humaneval import load_problems

    problems = {problem["task_id"]: problem for problem in load_problems(ids=list(HUMANEVAL_VALUE_FORGERIES))}
    forged, honest = tmp_path / "forged.jsonl", tmp_path / "honest.jsonl"
    forged.write_text(
        "".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in HUMANEVAL_VALUE_FORGERIES.items())
    )
    honest.write_text(
        "".join(json.dumps({"task_id": t, "completion": problems[t]["canonical_solution"]}) + "\n" for t in problems)
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    command = [str(Path(sys.executable).with_name("debatecode")), "bench", "humaneval", "--sandbox", backend_name]
    lines = {}
    for label, path in (("forged", forged), ("honest", honest)):
        run = subprocess.run(
            [*command, "--predictions", str(path), "--out", str(tmp_path / f"out-{label}")],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
        )  # fmt: skip
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
        lines[label] = " ".join(run.stdout.split())
    assert "0/2 problems solved" in lines["forged"] and "pass@1 0.000" in lines["forged"], lines["forged"]
    assert "2/2 problems solved" in lines["honest"], lines["honest"]


@pytest.mark.parametrize("backend_name", [pytest.param("docker", marks=pytest.mark.docker), "local"])
def test_the_reported_operator_forgery_fails_end_to_end_through_debatecode_solve(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The issue's ``mean()`` reproduction: ``solve`` said "2/2 tests pass" and exited 0."""
    if backend_name == "docker":
        request.getfixturevalue("requires_docker")
    block = "```python\n" + _operator_forgery("sub_answers_zero").code + "```\n"
    replies = tmp_path / "replies.yaml"
    replies.write_text(json.dumps({"replies": [], "default": block}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"})
    env["DEBATECODE_MEMORY__EMBEDDER"] = "hashing"
    solved = subprocess.run(
        [
            str(Path(sys.executable).with_name("debatecode")), "solve", str(MEAN_TASK),
            "--model", f"scripted:{replies}", "--agents", "1", "--phases", "proposal,convergence",
            "--sandbox", backend_name, "--no-checkpoints", "--out", str(tmp_path / "out"),
        ],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    output = " ".join(solved.stdout.split())
    assert solved.returncode == 1, (solved.returncode, output[-1500:], solved.stderr[-1500:])
    assert "0/4 tests pass" in output, output[-1500:]
