"""``results.jsonl``: one line per graded prediction, so that a run into the same folder resumes.

Each line is an ``InstanceReport`` (what ``report.json`` holds) whose
``input_sha256`` fingerprints what was graded: the model, the instance (every
field) and the patch. A re-run skips each prediction whose fingerprint already has
a result other than ``error``. Errors, such as an image that failed to build, are
graded again. When a fingerprint has several lines, the last one wins.

Lines are appended whole, with one write, and only from the event loop's thread, so
predictions graded at once never interleave. A run killed mid-write leaves at most
one torn last line, which is ignored.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from pydantic import ValidationError

from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.predictions import Prediction
from debatecode.bench.swebench.report import InstanceReport

__all__ = ["RESULTS_FILE", "append_result", "fingerprint", "read_results", "reusable"]

logger = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"


def fingerprint(prediction: Prediction, instance: SWEBenchInstance) -> str:
    """The SHA-256 of the model, the instance's fields and the patch: equal inputs, equal fingerprints."""
    document = {
        "model_name_or_path": prediction.model_name_or_path,
        "model_patch": prediction.model_patch,
        "instance": instance.model_dump(mode="json"),
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8", "surrogateescape")).hexdigest()


def read_results(path: Path) -> dict[str, InstanceReport]:
    """The last result of each fingerprint in ``path`` (empty when there is no such file).

    Lines that are not reports (a torn last line, hand edits) are skipped with a warning.
    """
    if not path.is_file():
        return {}
    results: dict[str, InstanceReport] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            report = InstanceReport.model_validate_json(line)
        except ValidationError:
            logger.warning("%s:%d: not a grading result; ignored", path, number)
            continue
        if report.input_sha256:
            results[report.input_sha256] = report
    return results


def reusable(report: InstanceReport | None) -> bool:
    """Whether an earlier result stands: it exists and is not an ``error``."""
    return report is not None and report.status != "error"


def append_result(path: Path, report: InstanceReport) -> None:
    """Append ``report`` to ``path`` as one whole line (call from the event loop's thread only)."""
    line = report.model_dump_json() + "\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
