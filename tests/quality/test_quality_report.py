"""Quality reports on fixture files with known smells; the expected findings are the tools' own ids and ranks."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

import debatecode.quality
from debatecode.config import load_config
from debatecode.errors import ConfigError
from debatecode.quality import QualityReport, QualitySettings, analyze, analyze_async

FIXTURES = Path(__file__).with_name("fixtures")


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.py.txt").read_text(encoding="utf-8")


def test_high_complexity_is_ranked_by_radon_per_function() -> None:
    report = analyze(fixture("tangled"), test_pass_rate=None)
    by_name = {f.name: f for f in report.complexity.functions}
    assert by_name["classify"].rank == "D"
    assert by_name["simple"].rank == "A"
    assert report.complexity.max_rank == "D"
    assert report.complexity.max_complexity == by_name["classify"].complexity
    assert report.components["complexity"] < 1.0
    assert report.complexity.maintainability_rank == "A"
    assert report.complexity.raw.sloc > 0


def test_eval_of_input_is_bandit_b307_medium_severity() -> None:
    report = analyze(fixture("eval_use"), test_pass_rate=None)
    assert [(f.test_id, f.severity, f.confidence) for f in report.security.findings] == [("B307", "MEDIUM", "HIGH")]
    assert report.security.findings[0].line == 5
    assert report.security.by_severity == {"LOW": 0, "MEDIUM": 1, "HIGH": 0}
    assert report.components["security"] == 0.5


def test_unformatted_code_fails_ruffs_format_check_and_formatting_fixes_it(tmp_path: Path) -> None:
    report = analyze(fixture("unformatted"), test_pass_rate=None)
    assert report.lint.formatted is False
    assert report.lint.format_diff.startswith("---")
    assert report.components["format"] == 0.0
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "--line-length", "100", "-"],
        input=fixture("unformatted"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    again = analyze(formatted, test_pass_rate=None)
    assert again.lint.formatted is True
    assert again.components["format"] == 1.0


def test_lint_findings_are_counted_by_ruff_rule() -> None:
    report = analyze(fixture("lint_smells"), test_pass_rate=None)
    assert report.lint.by_rule == {"E711": 1, "E741": 1, "F401": 1}
    assert {f.name for f in report.lint.findings} >= {"unused-import", "none-comparison"}
    assert report.components["lint"] < 1.0


def test_clean_code_has_no_findings_and_scores_above_smelly_code() -> None:
    clean = analyze(fixture("clean"), test_pass_rate=1.0)
    assert clean.lint.count == 0 and clean.lint.formatted is True
    assert clean.security.findings == []
    assert clean.tool_errors == {} and clean.parse_error is None
    for smelly in ("tangled", "eval_use", "unformatted", "lint_smells"):
        assert analyze(fixture(smelly), test_pass_rate=1.0).score < clean.score, smelly
    assert 0.0 <= clean.score <= 1.0
    assert set(clean.tools) == {"ruff", "radon", "bandit"}


def test_code_that_does_not_parse_is_reported_and_scores_zero_on_static_components() -> None:
    report = analyze("def broken(:\n    return 1\n", test_pass_rate=0.0)
    assert report.parse_error is not None and "line 1" in report.parse_error
    assert "invalid-syntax" in report.lint.by_rule
    assert report.lint.formatted is None
    for name in ("format", "complexity", "maintainability", "security"):
        assert report.components[name] == 0.0
    assert report.score < 0.2


def test_weights_are_configurable_and_unmeasured_components_drop_out() -> None:
    only_tests = QualitySettings(
        weight_tests=1, weight_lint=0, weight_format=0, weight_complexity=0, weight_maintainability=0, weight_security=0
    )
    assert analyze(fixture("eval_use"), test_pass_rate=0.25, settings=only_tests).score == 0.25
    only_security = only_tests.model_copy(update={"weight_tests": 0.0, "weight_security": 1.0})
    assert analyze(fixture("eval_use"), test_pass_rate=0.25, settings=only_security).score == 0.5
    without_tests = analyze(fixture("clean"), test_pass_rate=None)
    assert "tests" not in without_tests.components
    weights = without_tests.weights
    expected = sum(weights[k] * v for k, v in without_tests.components.items()) / sum(
        weights[k] for k in without_tests.components
    )
    assert without_tests.score == pytest.approx(expected, abs=1e-4)


def test_suppression_comments_are_ignored_unless_honoured() -> None:
    code = "import os  # noqa: F401\nvalue = eval('1 + 1')  # nosec\n"
    strict = analyze(code, test_pass_rate=None)
    assert "F401" in strict.lint.by_rule
    assert [f.test_id for f in strict.security.findings] == ["B307"]
    lenient = analyze(code, test_pass_rate=None, settings=QualitySettings(honour_suppressions=True))
    assert "F401" not in lenient.lint.by_rule
    assert lenient.security.findings == []


def test_bandit_skip_list_controls_assert_findings() -> None:
    code = "def f(x):\n    assert x\n    return x\n"
    assert analyze(code, test_pass_rate=None).security.findings == []
    report = analyze(code, test_pass_rate=None, settings=QualitySettings(bandit_skip=[]))
    assert [f.test_id for f in report.security.findings] == ["B101"]


def test_analysis_never_executes_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    code = f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(3)\n"
    report = analyze(code, test_pass_rate=None)
    assert not marker.exists()
    assert report.parse_error is None


def test_report_round_trips_through_the_metrics_json() -> None:
    report = analyze(fixture("tangled"), test_pass_rate=0.5)
    stored = json.loads(json.dumps(report.to_metrics()))
    assert QualityReport.from_metrics(stored) == report
    assert QualityReport.from_metrics({}) is None
    assert stored["quality"]["schema_version"] == 1


async def test_async_wrapper_gives_the_same_report() -> None:
    code = fixture("eval_use")
    sync = analyze(code, test_pass_rate=1.0)
    other = await analyze_async(code, test_pass_rate=1.0)
    assert other.model_dump(exclude={"duration_s"}) == sync.model_dump(exclude={"duration_s"})


def test_analysis_of_a_version_takes_well_under_a_second() -> None:
    code = fixture("tangled")
    analyze(code, test_pass_rate=None)  # warm-up: imports bandit and radon once per process
    started = time.perf_counter()
    for _ in range(5):
        analyze(code, test_pass_rate=1.0)
    per_version = (time.perf_counter() - started) / 5
    assert per_version < 1.0, f"{per_version:.3f}s per version"


def test_bad_test_pass_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        analyze("x = 1\n", test_pass_rate=1.5)


def test_settings_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="complexity_zero"):
        QualitySettings(complexity_ok=10, complexity_zero=10)
    with pytest.raises(ValidationError, match="weight"):
        QualitySettings(
            weight_tests=0,
            weight_lint=0,
            weight_format=0,
            weight_complexity=0,
            weight_maintainability=0,
            weight_security=0,
        )
    config_file = tmp_path / "debatecode.toml"
    config_file.write_text("[quality]\nweight_tests = 0.9\nruff_select = ['F']\n")
    config = load_config(config_file)
    assert config.quality.weight_tests == 0.9 and config.quality.ruff_select == ["F"]
    config_file.write_text("[quality]\nweight_test = 0.9\n")
    with pytest.raises(ConfigError, match="weight_tests"):
        load_config(config_file)


def test_quality_package_exports_exactly_its_public_api() -> None:
    assert debatecode.quality.__all__ == [
        "ComplexityReport",
        "FunctionComplexity",
        "LintFinding",
        "LintReport",
        "QualityReport",
        "QualitySettings",
        "RawMetrics",
        "SecurityFinding",
        "SecurityReport",
        "analyze",
        "analyze_async",
    ]
    for name in debatecode.quality.__all__:
        assert getattr(debatecode.quality, name) is not None
    analyzer = importlib.import_module("debatecode.quality.analyzer")
    assert debatecode.quality.analyze is analyzer.analyze  # not shadowed by a submodule of the same name


def test_importing_the_settings_does_not_import_the_tools() -> None:
    code = (
        "import sys, debatecode.quality, debatecode.config;"
        "print(sorted(m for m in ('bandit', 'radon') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
