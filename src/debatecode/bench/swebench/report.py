"""Per-prediction reports and the run summary (``summary.json``, ``summary.md``).

``report.json`` (one per prediction) and ``summary.json`` carry ``schema_version``;
fields are only ever added.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from debatecode.bench.swebench.grading import TestVerdict
from debatecode.bench.swebench.images import ImageSet
from debatecode.bench.swebench.patching import PatchOutcome
from debatecode.bench.swebench.protect import RestoredFile

__all__ = [
    "REPORT_SCHEMA",
    "InstanceReport",
    "ModelTally",
    "RunSummary",
    "SummaryRow",
    "summarize",
    "summary_markdown",
    "write_summary",
]

REPORT_SCHEMA = 1
Status = Literal["resolved", "unresolved", "patch_failed", "error"]


class InstanceReport(BaseModel):
    """Everything about one graded prediction (``report.json``)."""

    schema_version: int = REPORT_SCHEMA
    instance_id: str
    model_name_or_path: str
    repo: str
    status: Status
    resolved: bool = False
    resolution: str | None = None
    """swebench's RESOLVED_FULL / RESOLVED_PARTIAL / RESOLVED_NO, when tests ran."""
    patch: PatchOutcome | None = None
    protected_restored: list[RestoredFile] = Field(default_factory=list)
    test_patch_files: list[str] = Field(default_factory=list)
    tests: dict[str, TestVerdict] = Field(default_factory=dict)
    tests_status: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    """swebench's report: FAIL_TO_PASS / PASS_TO_PASS (and the to-fail categories) -> success / failure."""
    exit_code: int | None = None
    run_status: str | None = None
    log_accepted: bool = False
    junit_found: bool = False
    ledger_found: bool = False
    tampering: list[str] = Field(default_factory=list)
    """Changes to pytest's machinery (or plugins from repository files) the grader plugin found."""
    reasons: list[str] = Field(default_factory=list)
    images: ImageSet | None = None
    durations: dict[str, float] = Field(default_factory=dict)
    """Seconds: ``images``, ``prepare``, ``tests``, ``total``."""
    error: str | None = None
    input_sha256: str = ""
    """Fingerprint of what was graded (model, instance, patch): ``results.jsonl``'s resume key."""


class SummaryRow(BaseModel):
    """One graded prediction, in brief."""

    instance_id: str
    model: str
    status: Status
    resolved: bool
    patch: str
    """How the patch applied: a method, ``empty``, or ``failed``."""
    tests_passed: str
    """``passed/total`` over FAIL_TO_PASS and PASS_TO_PASS, or ``-`` when no test ran."""
    protected_restored: int
    duration_s: float


class ModelTally(BaseModel):
    """Counts for one model."""

    total: int = 0
    resolved: int = 0
    unresolved: int = 0
    patch_failed: int = 0
    error: int = 0

    @property
    def rate(self) -> float:
        """Resolved share of the graded predictions."""
        return self.resolved / self.total if self.total else 0.0


class RunSummary(BaseModel):
    """The whole run."""

    schema_version: int = REPORT_SCHEMA
    source: str
    """What was graded (``gold``, ``empty``, a predictions file, or ``solve:<model>``)."""
    total: int
    resolved: int
    by_model: dict[str, ModelTally] = Field(default_factory=dict)
    rows: list[SummaryRow] = Field(default_factory=list)
    images_built: int = 0
    image_build_s: float = 0.0
    duration_s: float = 0.0
    resumed: int = 0
    """Predictions whose result an earlier run into the same folder had already written (``results.jsonl``)."""


def _patch_label(report: InstanceReport) -> str:
    if report.patch is None:
        return "-"
    if report.patch.empty:
        return "empty"
    return report.patch.method or "failed"


def summarize(reports: Sequence[InstanceReport], *, source: str, duration_s: float, resumed: int = 0) -> RunSummary:
    """Tally ``reports`` by model and status; ``resumed`` of them came from an earlier run."""
    by_model: dict[str, ModelTally] = {}
    rows: list[SummaryRow] = []
    built: set[str] = set()
    build_s = 0.0
    for report in reports:
        tally = by_model.setdefault(report.model_name_or_path, ModelTally())
        tally.total += 1
        setattr(tally, report.status, getattr(tally, report.status) + 1)
        passed = sum(1 for verdict in report.tests.values() if verdict.status in ("PASSED", "XFAIL"))
        rows.append(
            SummaryRow(
                instance_id=report.instance_id,
                model=report.model_name_or_path,
                status=report.status,
                resolved=report.resolved,
                patch=_patch_label(report),
                tests_passed=f"{passed}/{len(report.tests)}" if report.tests else "-",
                protected_restored=len(report.protected_restored),
                duration_s=report.durations.get("total", 0.0),
            )
        )
        if report.images is not None:
            for layer in (report.images.base, report.images.env, report.images.instance):
                if layer.built and layer.tag not in built:
                    built.add(layer.tag)
                    build_s += layer.build_s
    return RunSummary(
        source=source,
        total=len(reports),
        resolved=sum(1 for report in reports if report.resolved),
        by_model=by_model,
        rows=rows,
        images_built=len(built),
        image_build_s=round(build_s, 2),
        duration_s=round(duration_s, 2),
        resumed=resumed,
    )


def summary_markdown(summary: RunSummary) -> str:
    """``summary.md``: totals per model, then one row per prediction."""
    lines = [
        "# SWE-bench grading summary",
        "",
        f"Source: `{summary.source}`. {summary.resolved}/{summary.total} resolved. "
        f"Images built: {summary.images_built} ({summary.image_build_s:.1f} s). Total time: {summary.duration_s:.1f} s.",
        "",
        "| model | resolved | unresolved | patch failed | error | rate |",
        "|---|---|---|---|---|---|",
    ]
    for model, tally in summary.by_model.items():
        lines.append(
            f"| {model} | {tally.resolved}/{tally.total} | {tally.unresolved} | {tally.patch_failed} | "
            f"{tally.error} | {tally.rate:.0%} |"
        )
    lines += [
        "",
        "| instance | model | status | patch | tests passed | protected files restored | time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in summary.rows:
        lines.append(
            f"| {row.instance_id} | {row.model} | {row.status} | {row.patch} | {row.tests_passed} | "
            f"{row.protected_restored} | {row.duration_s:.1f} |"
        )
    return "\n".join(lines) + "\n"


def write_summary(out: Path, summary: RunSummary) -> tuple[Path, Path]:
    """Write ``summary.json`` and ``summary.md`` into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "summary.json"
    markdown_path = out / "summary.md"
    json_path.write_text(json.dumps(summary.model_dump(), indent=2) + "\n", encoding="utf-8")
    markdown_path.write_text(summary_markdown(summary), encoding="utf-8")
    return json_path, markdown_path
