"""Radon, through its Python API: complexity per function, maintainability index, raw metrics."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from radon.complexity import cc_rank, cc_visit
from radon.metrics import mi_rank, mi_visit
from radon.raw import analyze as raw_analyze

from debatecode.quality.report import ComplexityReport, FunctionComplexity, RawMetrics

__all__ = ["run_radon"]


def _functions(blocks: Iterable[Any], prefix: str = "", inside_function: bool = False) -> Iterable[FunctionComplexity]:
    """Every function, method and closure in radon's block tree, with qualified names."""
    for block in blocks:
        if hasattr(block, "methods"):  # a radon Class
            name = f"{prefix}{block.name}"
            yield from _functions(block.methods, f"{name}.")
            yield from _functions(getattr(block, "inner_classes", []), f"{name}.")
            continue
        name = f"{prefix}{block.name}"
        kind = "closure" if inside_function else ("method" if block.is_method else "function")
        yield FunctionComplexity(
            name=name,
            kind=kind,
            line=block.lineno,
            end_line=block.endline,
            complexity=block.complexity,
            rank=cc_rank(block.complexity),
        )
        yield from _functions(block.closures, f"{name}.", inside_function=True)


def run_radon(code: str) -> ComplexityReport:
    """Measure ``code`` with radon.

    Raises:
        SyntaxError: the code does not parse (radon parses it with ``ast``).
    """
    blocks = cc_visit(code)
    seen: set[tuple[str, int]] = set()
    functions: list[FunctionComplexity] = []
    # cc_visit lists methods both inside their class and flattened; keep each once.
    for function in _functions([b for b in blocks if hasattr(b, "methods") or not b.is_method]):
        if (function.name, function.line) not in seen:
            seen.add((function.name, function.line))
            functions.append(function)
    functions.sort(key=lambda f: f.line)
    maintainability = float(mi_visit(code, multi=True))
    raw = raw_analyze(code)
    worst = max((f.complexity for f in functions), default=0)
    return ComplexityReport(
        functions=functions,
        average_complexity=round(sum(f.complexity for f in functions) / len(functions), 3) if functions else 0.0,
        max_complexity=worst,
        max_rank=cc_rank(worst) if worst else "A",
        maintainability_index=round(maintainability, 3),
        maintainability_rank=mi_rank(maintainability),
        raw=RawMetrics(
            loc=raw.loc,
            lloc=raw.lloc,
            sloc=raw.sloc,
            comments=raw.comments,
            multi=raw.multi,
            blank=raw.blank,
            single_comments=raw.single_comments,
        ),
    )
