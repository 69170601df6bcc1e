"""The public surface of the SWE-bench bridge, pinned."""

from __future__ import annotations

import debatecode.bench.swebench as swebench


def test_exported_members() -> None:
    assert sorted(swebench.__all__) == sorted(
        [
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
    )
    for name in swebench.__all__:
        assert getattr(swebench, name) is not None


def test_the_harness_offers_what_a_solver_needs() -> None:
    for method in ("context", "prepare", "run_overlay", "run_patch", "check_inputs", "grade", "aclose"):
        assert callable(getattr(swebench.SWEBenchHarness, method)), method
