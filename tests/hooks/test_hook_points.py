"""Hook points: validations of a candidate, run for real (static tools on the host, tests in a sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from tests.support.dummy_sandbox import DummySandbox

import debatecode.hooks
from debatecode.config import load_config
from debatecode.errors import ConfigError
from debatecode.hooks import HookOutcome, HookPoint, HookPointSettings, HooksSettings, HookValidator
from debatecode.hooks.settings import GitHookSettings, ValidationThresholds
from debatecode.quality import analyze
from debatecode.sandbox.base import Sandbox
from debatecode.task import Task, load_task

REPO = Path(__file__).resolve().parents[2]
GOOD = '"""Sum."""\n\n\ndef add(a: int, b: int) -> int:\n    """Return a + b."""\n    return a + b\n'
EVIL = "def add(a: int, b: int) -> int:\n    return eval(f'{a} + {b}')\n"
WRONG = "def add(a: int, b: int) -> int:\n    return a - b\n"
SLOW = "import time\n\n\ndef add(a: int, b: int) -> int:\n    time.sleep(0.3)\n    return a + b\n"


@pytest.fixture
def task() -> Task:
    return load_task(REPO / "examples" / "tasks" / "add.md")


def runner(task: Task, sandbox: Sandbox, **points: HookPointSettings) -> HookValidator:
    return HookValidator(HooksSettings(**points), sandbox, task)  # type: ignore[arg-type]


async def test_a_security_finding_blocks_convergence_and_explains_itself(task: Task) -> None:
    sandbox = DummySandbox()
    outcome = await runner(task, sandbox).run(HookPoint.POST_PROPOSAL, EVIL)
    by_name = {r.name: r for r in outcome.results}
    assert list(by_name) == ["tests", "lint", "static_analysis", "security"]
    assert by_name["tests"].passed, by_name["tests"].findings  # eval gives the right sums: tests cannot see it
    security = by_name["security"]
    assert not security.passed and security.blocking
    assert [(f.rule, f.line) for f in security.findings] == [("B307", 2)]
    assert outcome.blocked and not outcome.passed
    assert [r.name for r in outcome.blocking_failures()] == ["security"]
    feedback = outcome.feedback()
    assert "security: FAILED (blocking)" in feedback and "B307" in feedback
    assert "cannot be chosen as the final answer" in feedback
    assert len(sandbox.jobs) == 1  # the tests ran once, in the sandbox


async def test_clean_passing_code_passes_every_validation(task: Task) -> None:
    outcome = await runner(task, DummySandbox()).run("post_proposal", GOOD)
    assert outcome.passed and not outcome.blocked
    assert outcome.feedback() == ""
    assert outcome.quality_score is not None and outcome.quality_score > 0.9


async def test_a_given_test_report_and_quality_report_are_reused(task: Task) -> None:
    sandbox = DummySandbox()
    hooks = runner(task, sandbox)
    report = await hooks.tests.run(WRONG)
    quality = analyze(WRONG, test_pass_rate=report.pass_rate)
    sandbox.jobs.clear()
    outcome = await hooks.run(HookPoint.POST_PROPOSAL, WRONG, report, quality=quality)
    assert sandbox.jobs == []
    tests = outcome.results[0]
    assert tests.name == "tests" and not tests.passed and not tests.blocking
    assert tests.summary == f"{report.passed}/{report.total} tests pass"
    assert {f.message.split(":")[0] for f in tests.findings} == {c.name for c in report.failures()}
    assert outcome.quality_score == quality.score
    assert not outcome.blocked  # tests are not blocking by default


async def test_failing_tests_block_when_configured(task: Task) -> None:
    strict = HookPointSettings(validations=["tests"], blocking=["tests"])
    outcome = await runner(task, DummySandbox(), post_adversarial=strict).run(HookPoint.POST_ADVERSARIAL, WRONG)
    assert outcome.blocked
    assert "tests: FAILED (blocking)" in outcome.feedback()


async def test_static_analysis_fails_on_complexity_above_the_threshold(task: Task) -> None:
    branches = "\n".join(f"    if a == {i}:\n        return b + {i}" for i in range(12))
    code = f"def add(a: int, b: int) -> int:\n{branches}\n    return a + b\n"
    point = HookPointSettings(validations=["static_analysis"], blocking=["static_analysis"])
    outcome = await runner(task, DummySandbox(), post_proposal=point).run(HookPoint.POST_PROPOSAL, code)
    result = outcome.results[0]
    assert not result.passed and outcome.blocked
    assert result.findings[0].rule == "cc" and "function add" in result.findings[0].message
    assert result.details["max_rank"] == "C"


async def test_benchmark_times_the_candidate_over_several_sandbox_runs(task: Task) -> None:
    sandbox = DummySandbox()
    settings = HooksSettings(
        post_optimization=HookPointSettings(validations=["benchmark"], blocking=["benchmark"]),
        thresholds=ValidationThresholds(benchmark_runs=2, benchmark_max_s=0.2),
    )
    hooks = HookValidator(settings, sandbox, task)
    fast = await hooks.run(HookPoint.POST_OPTIMIZATION, GOOD)
    assert len(sandbox.jobs) == 2
    bench = fast.results[0]
    assert bench.passed and bench.details["runs"] == 2 and bench.details["all_tests_passed"]
    assert 0.0 <= bench.details["test_time_s"] < 0.2
    assert set(bench.details["per_test_s"]) == set(task.test_names)
    slow = await hooks.run(HookPoint.POST_OPTIMIZATION, SLOW)
    assert slow.blocked
    assert slow.results[0].findings[0].rule == "too_slow"
    assert slow.results[0].details["test_time_s"] >= 0.3 * len(task.test_names)


async def test_disabled_hooks_run_nothing(task: Task) -> None:
    sandbox = DummySandbox()
    outcome = await HookValidator(HooksSettings(enabled=False), sandbox, task).run(HookPoint.POST_CONVERGENCE, EVIL)
    assert outcome.results == [] and outcome.passed and not outcome.blocked
    assert sandbox.jobs == []


async def test_unknown_points_are_refused(task: Task) -> None:
    with pytest.raises(ValueError, match="post_lunch"):
        await runner(task, DummySandbox()).run("post_lunch", GOOD)


async def test_outcomes_persist_as_json_and_load_back(task: Task) -> None:
    outcome = await runner(task, DummySandbox()).run(HookPoint.POST_PROPOSAL, EVIL)
    stored = json.loads(json.dumps(outcome.to_metadata()))
    assert stored["point"] == "post_proposal" and stored["blocked"] is True and stored["passed"] is False
    assert stored["results"][3]["findings"][0]["rule"] == "B307"
    assert HookOutcome.from_metadata(stored) == outcome


@pytest.mark.docker
async def test_hook_point_runs_tests_and_benchmark_in_the_docker_sandbox(task: Task, requires_docker: None) -> None:
    from debatecode.sandbox.docker import DockerSandbox
    from debatecode.sandbox.settings import SandboxSettings

    sandbox = DockerSandbox(SandboxSettings(sweep_on_start=False))
    try:
        settings = HooksSettings(thresholds=ValidationThresholds(benchmark_runs=2))
        outcome = await HookValidator(settings, sandbox, task).run(HookPoint.POST_CONVERGENCE, EVIL)
    finally:
        await sandbox.aclose()
    by_name = {r.name: r for r in outcome.results}
    assert by_name["tests"].passed and by_name["tests"].details["total"] == len(task.test_names)
    assert by_name["benchmark"].passed and by_name["benchmark"].details["runs"] == 2
    assert not by_name["security"].passed and outcome.blocked


def test_blocking_validations_must_be_run() -> None:
    with pytest.raises(ValidationError, match="must also be listed"):
        HookPointSettings(validations=["lint"], blocking=["security"])
    with pytest.raises(ValidationError, match="git hooks run no code"):
        GitHookSettings(validations=["tests"], blocking=[])


def test_hooks_are_configured_from_the_config_file(tmp_path: Path) -> None:
    config_file = tmp_path / "debatecode.toml"
    config_file.write_text(
        "[hooks.post_proposal]\nvalidations = ['tests', 'lint']\nblocking = ['tests']\n"
        "[hooks.thresholds]\nmax_complexity = 7\n[hooks.git]\nblocking = []\n"
    )
    hooks = load_config(config_file).hooks
    assert hooks.post_proposal.validations == ["tests", "lint"] and hooks.post_proposal.blocking == ["tests"]
    assert hooks.thresholds.max_complexity == 7 and hooks.git.blocking == []
    assert hooks.post_convergence.validations == ["tests", "lint", "static_analysis", "security", "benchmark"]
    config_file.write_text("[hooks.post_proposal]\nvalidations = ['lint']\nblocking = ['security']\n")
    with pytest.raises(ConfigError, match="must also be listed"):
        load_config(config_file)


def test_hooks_package_exports_exactly_its_public_api() -> None:
    assert debatecode.hooks.__all__ == [
        "FileCheck",
        "GitHookSettings",
        "HookOutcome",
        "HookPoint",
        "HookPointSettings",
        "HookValidator",
        "HooksSettings",
        "ValidationFinding",
        "ValidationResult",
        "ValidationThresholds",
        "check_files",
    ]
    for name in debatecode.hooks.__all__:
        assert getattr(debatecode.hooks, name) is not None
