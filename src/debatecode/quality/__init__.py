"""Code quality of each version: ruff, radon and bandit combined into a ``QualityReport`` and a 0-1 score.

``analyze(code, test_pass_rate=..., settings=...)`` runs on the host and never
executes the code. The tools are imported on first use, so importing this
package (or its settings) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
