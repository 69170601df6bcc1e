"""debatecode: several LLM agents debate their way to correct code; running it settles every claim.

The public surface is small and imported lazily, so ``import debatecode``
stays fast and never pulls in litellm or the Docker SDK. See docs/python-api.md.

- Run a debate: ``solve()`` (also from a notebook), ``solve_async()``; both return a ``DebateResult``.
- Debate a design question into a decision record: ``debate()``, ``debate_async()`` (a ``DesignResult``).
- Configure it: ``load_config()``, ``apply_overrides()``, ``DebateConfig``; tasks: ``load_task()``, ``parse_task()``, ``Task``.
- Watch it: pass an ``EventBus`` and subscribe to ``Event`` subclasses such as ``TurnCompleted``.
- Share a sandbox pool between runs: ``build_services()`` -> ``Services``.
- Run several sessions on one engine: ``DebateEngine.from_config(config)``; answer with a
  Python function: ``FunctionModel(fn)``.
- Benchmarks live in ``debatecode.bench`` (``run_humaneval``, the SWE-bench harness).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode._api import Services, apply_overrides, build_services, solve, solve_async
    from debatecode._design_api import debate, debate_async
    from debatecode.config import DebateConfig, load_config
    from debatecode.errors import BudgetExceeded, ConfigError, DebatecodeError, ModelError, SandboxError, TaskError
    from debatecode.llm.function import FunctionModel
    from debatecode.protocol.engine import DebateEngine, DebateResult
    from debatecode.protocol.events import (
        AgentStatusChanged,
        CheckpointDecided,
        CheckpointRequested,
        CodeVersionCommitted,
        Escalated,
        EscalationDecided,
        Event,
        EventBus,
        GateDecided,
        GateRequested,
        PhaseCompleted,
        PhaseStarted,
        RoundCompleted,
        SessionFinished,
        SessionStarted,
        TestsRun,
        TurnCompleted,
        VoteCast,
        event_data,
    )
    from debatecode.task import Task, load_task, parse_task

__version__ = "0.1.0"

__all__ = [
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

_EVENTS = (
    "AgentStatusChanged",
    "CheckpointDecided",
    "CheckpointRequested",
    "CodeVersionCommitted",
    "Escalated",
    "EscalationDecided",
    "Event",
    "EventBus",
    "GateDecided",
    "GateRequested",
    "PhaseCompleted",
    "PhaseStarted",
    "RoundCompleted",
    "SessionFinished",
    "SessionStarted",
    "TestsRun",
    "TurnCompleted",
    "VoteCast",
    "event_data",
)

_LAZY = {
    **dict.fromkeys(
        ("BudgetExceeded", "ConfigError", "DebatecodeError", "ModelError", "SandboxError", "TaskError"),
        "debatecode.errors",
    ),
    **dict.fromkeys(("DebateConfig", "load_config"), "debatecode.config"),
    **dict.fromkeys(("Task", "load_task", "parse_task"), "debatecode.task"),
    **dict.fromkeys(("Services", "apply_overrides", "build_services", "solve", "solve_async"), "debatecode._api"),
    **dict.fromkeys(_EVENTS, "debatecode.protocol.events"),
    **dict.fromkeys(("DebateEngine", "DebateResult"), "debatecode.protocol.engine"),
    "FunctionModel": "debatecode.llm.function",
    **dict.fromkeys(("debate", "debate_async"), "debatecode._design_api"),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), [*__all__, "__version__"])
