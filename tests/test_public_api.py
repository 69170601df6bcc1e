"""The public surface is small, pinned, and lazy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import debatecode

REPO = Path(__file__).resolve().parents[1]


def test_public_names_are_pinned() -> None:
    assert debatecode.__all__ == [
        "AgentStatusChanged",
        "BudgetExceeded",
        "CheckpointDecided",
        "CheckpointRequested",
        "CodeVersionCommitted",
        "ConfigError",
        "DebateConfig",
        "DebateEngine",
        "DebateResult",
        "DebatecodeError",
        "Escalated",
        "EscalationDecided",
        "Event",
        "EventBus",
        "FunctionModel",
        "GateDecided",
        "GateRequested",
        "ModelError",
        "PhaseCompleted",
        "PhaseStarted",
        "RoundCompleted",
        "SandboxError",
        "Services",
        "SessionFinished",
        "SessionStarted",
        "Task",
        "TaskError",
        "TestsRun",
        "TurnCompleted",
        "VoteCast",
        "apply_overrides",
        "build_services",
        "debate",
        "debate_async",
        "event_data",
        "load_config",
        "load_task",
        "parse_task",
        "solve",
        "solve_async",
    ]
    for name in debatecode.__all__:
        assert getattr(debatecode, name) is not None
    assert set(debatecode.__all__) <= set(dir(debatecode))


def test_bench_names_are_pinned() -> None:
    import debatecode.bench

    assert debatecode.bench.__all__ == [
        "STRATEGIES",
        "HumanEvalOutcome",
        "HumanEvalResults",
        "Prediction",
        "RunSummary",
        "SWEBenchHarness",
        "SWEBenchInstance",
        "generate_predictions",
        "load_instances",
        "load_predictions",
        "load_problems",
        "pass_at_k",
        "problem_task",
        "run_humaneval",
        "run_humaneval_async",
        "select_instances",
        "strategy_config",
        "write_predictions",
    ]


def test_every_event_class_is_exported() -> None:
    from debatecode.protocol import events

    assert set(events.__all__) <= set(debatecode.__all__)


def test_results_are_typed() -> None:
    """``DebateResult``, not ``Any`` (a string annotation: the engine is imported only when a debate runs)."""
    import typing

    from debatecode import _api
    from debatecode.protocol import engine, human

    names = {**vars(_api), "DebateResult": engine.DebateResult, "HumanInterface": human.HumanInterface}
    for function in (_api.solve, _api.solve_async):
        assert typing.get_type_hints(function, globalns=names)["return"] is engine.DebateResult


def test_import_is_light() -> None:
    code = "import sys, debatecode; print(sorted(m for m in ('litellm', 'docker', 'sqlalchemy', 'git', 'jinja2') if m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )


def test_configuration_reference_is_up_to_date() -> None:
    from debatecode.config import config_reference_markdown

    on_disk = (REPO / "docs" / "configuration.md").read_text()
    assert on_disk.strip() == config_reference_markdown().strip(), (
        "regenerate: python -m debatecode.config > docs/configuration.md"
    )
