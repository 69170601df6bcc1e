"""The SWE-bench bridge: grade SWE-bench predictions offline, in locally built, hardened images.

::

    from debatecode.bench.swebench import SWEBenchHarness, load_instances, load_predictions

    instances = load_instances("benchmarks/swebench-local/instances.jsonl")
    harness = SWEBenchHarness(instances, repos_dir=Path("benchmarks/swebench-local/repos"), out=Path("out"))
    try:
        summary = await harness.grade(load_predictions("gold", instances), jobs=2)
    finally:
        await harness.aclose()

``load_dataset_source`` also takes a Hugging Face dataset name
(``princeton-nlp/SWE-bench_Verified``). Next to its own reports, a run writes
swebench's per-instance ``report.json`` files and ``<model>.<run_id>.json`` run
reports (``swebench_logs``), and ``results.jsonl``, from which a re-run resumes.

Solvers use ``SWEBenchHarness.context`` (mirror, spec and images of an instance),
``SWEBenchHarness.prepare`` (a patched, protected tree as an ``Overlay``) and
``SWEBenchHarness.run_overlay`` / ``SWEBenchHarness.run_patch`` (tests in the
instance sandbox). See docs/benchmarks-swebench.md.
"""

from __future__ import annotations

from debatecode.bench.swebench.dataset import SWEBenchInstance, load_instances, select_instances
from debatecode.bench.swebench.errors import ImageBuildError, InstanceSetupError, SWEBenchInputError
from debatecode.bench.swebench.execution import TestRun
from debatecode.bench.swebench.grading import Grade, TestVerdict, grade_run
from debatecode.bench.swebench.harness import HarnessEvent, InstanceContext, SWEBenchHarness, default_repos_dir
from debatecode.bench.swebench.hub import load_dataset_source
from debatecode.bench.swebench.images import ImageBuilder, ImageSet
from debatecode.bench.swebench.patching import PatchOutcome, apply_with_fallbacks
from debatecode.bench.swebench.predictions import EMPTY, GOLD, Prediction, load_predictions, write_predictions
from debatecode.bench.swebench.report import InstanceReport, RunSummary
from debatecode.bench.swebench.repos import RepoMirror, RepoRegistry, RepoSpec
from debatecode.bench.swebench.workspace import Overlay, PreparedTree

__all__ = [
    "EMPTY",
    "GOLD",
    "Grade",
    "HarnessEvent",
    "ImageBuildError",
    "ImageBuilder",
    "ImageSet",
    "InstanceContext",
    "InstanceReport",
    "InstanceSetupError",
    "Overlay",
    "PatchOutcome",
    "Prediction",
    "PreparedTree",
    "RepoMirror",
    "RepoRegistry",
    "RepoSpec",
    "RunSummary",
    "SWEBenchHarness",
    "SWEBenchInputError",
    "SWEBenchInstance",
    "TestRun",
    "TestVerdict",
    "apply_with_fallbacks",
    "default_repos_dir",
    "grade_run",
    "load_dataset_source",
    "load_instances",
    "load_predictions",
    "select_instances",
    "write_predictions",
]
