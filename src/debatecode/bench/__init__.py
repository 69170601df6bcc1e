"""Research tooling: the HumanEval strategy comparison and the SWE-bench harness, as Python functions.

Names are imported on first use, so ``import debatecode.bench`` stays cheap.
See docs/python-api.md.

HumanEval::

    from debatecode.bench import run_humaneval

    results = run_humaneval(ids=["0", "1"], strategies=["single", "debate"], out="bench-out/he")
    print(results.pass_at_1(), results.report_path)

SWE-bench (grading in locally built Docker images; ``pip install 'debatecode[bench]'``)::

    from debatecode.bench import SWEBenchHarness, load_instances, load_predictions

    instances = load_instances("benchmarks/swebench-local/instances.jsonl")
    harness = SWEBenchHarness(instances, repos_dir=Path("benchmarks/swebench-local/repos"), out=Path("out"))
    try:
        summary = await harness.grade(load_predictions("gold", instances))
    finally:
        await harness.aclose()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode.bench.humaneval.problems import load_problems, problem_task
    from debatecode.bench.humaneval.run import (
        HumanEvalOutcome,
        HumanEvalResults,
        run_humaneval,
        run_humaneval_async,
    )
    from debatecode.bench.humaneval.samples import pass_at_k
    from debatecode.bench.humaneval.strategies import STRATEGIES, strategy_config
    from debatecode.bench.swebench import (
        Prediction,
        RunSummary,
        SWEBenchHarness,
        SWEBenchInstance,
        load_instances,
        load_predictions,
        select_instances,
        write_predictions,
    )
    from debatecode.bench.swebench.solve import generate_predictions

__all__ = [
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

_LAZY = {
    **dict.fromkeys(
        ("HumanEvalOutcome", "HumanEvalResults", "run_humaneval", "run_humaneval_async"),
        "debatecode.bench.humaneval.run",
    ),
    **dict.fromkeys(("load_problems", "problem_task"), "debatecode.bench.humaneval.problems"),
    "pass_at_k": "debatecode.bench.humaneval.samples",
    **dict.fromkeys(("STRATEGIES", "strategy_config"), "debatecode.bench.humaneval.strategies"),
    **dict.fromkeys(
        (
            "Prediction",
            "RunSummary",
            "SWEBenchHarness",
            "SWEBenchInstance",
            "load_instances",
            "load_predictions",
            "select_instances",
            "write_predictions",
        ),
        "debatecode.bench.swebench",
    ),
    "generate_predictions": "debatecode.bench.swebench.solve",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
