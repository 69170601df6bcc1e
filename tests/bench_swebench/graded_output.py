"""What a grading run wrote, with its timings left out, to compare runs that must agree. TEST-ONLY.

Serial and parallel grading, local and Ray grading, must write the same verdicts and files; only how
long things took (and which run built a shared image) may differ.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from debatecode.bench.swebench.results import RESULTS_FILE

__all__ = ["TIMINGS", "files_matching", "results_by_input", "without_timings"]

TIMINGS = frozenset({"duration_s", "durations", "image_build_s", "build_s"})
"""The keys of a record, a report or a summary that hold durations."""


def without_timings(value: Any, keys: Collection[str] = TIMINGS) -> Any:
    """``value`` (JSON-like) with every dict entry under one of ``keys`` left out, at any depth."""
    if isinstance(value, dict):
        return {key: without_timings(item, keys) for key, item in value.items() if key not in keys}
    if isinstance(value, list):
        return [without_timings(item, keys) for item in value]
    return value


def results_by_input(out: Path) -> dict[str, Any]:
    """``out``'s results file, a record per line, by its ``input_sha256``, timings left out."""
    records = [json.loads(line) for line in (out / RESULTS_FILE).read_text().splitlines()]
    return {record["input_sha256"]: without_timings(record) for record in records}


def files_matching(out: Path, pattern: str) -> dict[str, str]:
    """The text of each file under ``out`` matching ``pattern``, by its path relative to ``out``."""
    return {path.relative_to(out).as_posix(): path.read_text() for path in sorted(out.glob(pattern))}
