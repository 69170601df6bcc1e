"""A researcher grades the shipped SWE-bench-format instances: gold patches all resolve, empty patches none."""

from __future__ import annotations

import json

from challenges._harness import REPO, Journey, expect

NEEDS_DOCKER = True


def _grade(journey: Journey, predictions: str) -> tuple[int, int]:
    dataset = REPO / "benchmarks" / "swebench-local" / "instances.jsonl"
    out = f"graded-{predictions}"
    proc = journey.cli("bench", "swebench", "--dataset", str(dataset), "--predictions", predictions, "--out", out)
    expect(proc.returncode == 0, f"grading {predictions} exited {proc.returncode}", proc.stdout + proc.stderr)
    summary = json.loads((journey.workdir / out / "summary.json").read_text())
    reports = list((journey.workdir / out).glob("*/*/report.json"))
    expect(len(reports) == summary["total"], f"{len(reports)} report.json files for {summary['total']} predictions")
    return summary["resolved"], summary["total"]


def run(journey: Journey) -> str:
    gold = _grade(journey, "gold")
    expect(gold[1] >= 3 and gold[0] == gold[1], f"gold patches resolved {gold[0]}/{gold[1]}")
    empty = _grade(journey, "empty")
    expect(empty == (0, gold[1]), f"empty patches resolved {empty[0]}/{empty[1]}")
    return f"gold {gold[0]}/{gold[1]} resolved, empty {empty[0]}/{empty[1]}"
