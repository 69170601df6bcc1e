"""Code quality of each version: ruff, radon and bandit combined into a ``QualityReport`` and a 0-1 score.

``analyze(code, test_pass_rate=..., settings=...)`` runs on the host and never
executes the code. The tools are imported on first use, so importing this
package (or its settings) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports
from debatecode.quality.settings import QualitySettings

if TYPE_CHECKING:
    from debatecode.quality.analyzer import analyze, analyze_async
    from debatecode.quality.report import (
        ComplexityReport,
        FunctionComplexity,
        LintFinding,
        LintReport,
        QualityReport,
        RawMetrics,
        SecurityFinding,
        SecurityReport,
    )

__all__ = [
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

_LAZY = {
    "analyze": "debatecode.quality.analyzer",
    "analyze_async": "debatecode.quality.analyzer",
    **{
        name: "debatecode.quality.report"
        for name in (
            "ComplexityReport",
            "FunctionComplexity",
            "LintFinding",
            "LintReport",
            "QualityReport",
            "RawMetrics",
            "SecurityFinding",
            "SecurityReport",
        )
    },
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
