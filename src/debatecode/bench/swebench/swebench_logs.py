"""swebench's own output formats, written next to debatecode's, so swebench's tools and scripts read our runs.

Per graded prediction, in the layout swebench's harness writes
(``RUN_EVALUATION_LOG_DIR / run_id / model / instance_id``, under ``<out>``):

- ``report.json``: ``{instance_id: {"patch_is_None", "patch_exists",
  "patch_successfully_applied", "resolved", "infra_failure", "tests_status"}}``,
  as ``swebench.harness.grading.get_eval_report`` makes it, but carrying
  debatecode's verdict (the log cross-checked with junit XML and the ledger), not
  the log's alone;
- ``patch.diff``, ``test_output.txt`` (the log swebench's parser read) and
  ``run_instance.log`` (the patch commands tried and what they said).

Per model, the run report ``<out>/<model>.<run_id>.json``, with the keys and the
counting of ``swebench.harness.reporting.make_run_report``.

swebench's rules are kept where they differ from ours:

- a prediction with an empty patch (``""`` or null) is never run by swebench: it
  gets no directory, and counts only in ``empty_patch_ids``;
- a patch that does not apply, and a prediction that could not be set up (our
  ``patch_failed`` and ``error``), get no ``report.json``: swebench's harness
  stops at the failed step, and its run report counts them in ``error_ids``;
- ``patch_successfully_applied`` is true when the log held test results that
  swebench accepts, as swebench defines it; ``tests_status`` is written only then;
- ``model_name_or_path`` is turned into a directory name as swebench does it
  (``/`` becomes ``__``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from debatecode.bench.swebench.predictions import Prediction
from debatecode.bench.swebench.report import InstanceReport
from debatecode.safe_paths import UnsafeName, check_name, model_folder, path_under

__all__ = [
    "DEFAULT_RUN_ID",
    "RUN_REPORT_SCHEMA",
    "check_run_id",
    "prediction_log_dir",
    "prediction_log_folder",
    "run_dir",
    "run_report",
    "run_report_path",
    "swebench_model_dir",
    "swebench_report",
    "write_instance_logs",
    "write_run_reports",
]

RUN_REPORT_SCHEMA = 2
"""The ``schema_version`` of swebench 5's run report (a test compares ours with ``make_run_report``'s)."""
DEFAULT_RUN_ID = "debatecode"
"""The run id when none is given (swebench requires one; it names the log folder and the run report)."""


def swebench_model_dir(model: str) -> str:
    """The directory name swebench gives ``model_name_or_path`` (``/`` becomes ``__``).

    Raises:
        UnsafeName: ``model`` does not match ``MODEL_NAME_PATTERN`` (``..``, say).
    """
    return model_folder(model)


def check_run_id(run_id: str) -> str:
    """``run_id`` when it can name one folder (``NAME_PATTERN``).

    Raises:
        ConfigError: it is empty, has a path separator, is ``.`` or ``..``, or holds other characters.
    """
    from debatecode.errors import ConfigError

    try:
        return check_name(run_id, "--run-id")
    except UnsafeName as exc:
        raise ConfigError(f"--run-id {exc.reason}", key="run_id") from exc


def run_dir(out: Path, run_id: str) -> Path:
    """``<out>/logs/run_evaluation/<run_id>``: where swebench's per-instance logs go.

    Raises:
        ConfigError: ``run_id`` cannot name a folder.
        PathOutsideRoot: the folder resolves outside ``out``.
    """
    return path_under(out, prediction_log_folder(run_id), what="run log")


def prediction_log_folder(run_id: str, model: str | None = None, instance_id: str | None = None) -> str:
    """``logs/run_evaluation/<run_id>[/<model dir>/<instance_id>]``, relative, each name checked.

    Raises:
        ConfigError: ``run_id`` cannot name a folder.
        UnsafeName: the model or the instance id cannot name a folder.
    """
    from swebench.harness.constants import RUN_EVALUATION_LOG_DIR

    parts = [PurePosixPath(RUN_EVALUATION_LOG_DIR).as_posix(), check_run_id(run_id)]
    if model is not None:
        parts.append(swebench_model_dir(model))
    if instance_id is not None:
        parts.append(check_name(instance_id, "instance_id"))
    return "/".join(parts)


def prediction_log_dir(out: Path, run_id: str, model: str, instance_id: str) -> Path:
    """``run_dir(out, run_id) / <model dir> / <instance_id>``: one prediction's folder in swebench's layout.

    Raises:
        ConfigError: ``run_id`` cannot name a folder.
        UnsafeName: the model or instance id cannot name a folder.
        PathOutsideRoot: the folder resolves outside ``out``.
    """
    return path_under(out, prediction_log_folder(run_id, model, instance_id), what="prediction log")


def run_report_path(out: Path, model: str, run_id: str) -> Path:
    """``<out>/<model>.<run_id>.json``, the name ``make_run_report`` gives a model's run report."""
    return path_under(out, f"{swebench_model_dir(model)}.{check_run_id(run_id)}.json", what="run report")


def _is_empty(prediction: Prediction) -> bool:
    """swebench's test for an empty patch (whitespace is a patch to swebench)."""
    return prediction.model_patch in ("", None)


def swebench_report(
    prediction: Prediction, report: InstanceReport, test_output: Path | None
) -> dict[str, dict[str, Any]] | None:
    """``report.json`` in swebench's format for a graded prediction, or None when swebench would write none.

    ``test_output`` is the log the run wrote (its infrastructure failures are
    classified with swebench's ``classify_logs`` when swebench did not accept it).
    """
    from swebench.harness.infra_failure import TIER_ENVIRONMENT, classify_logs

    if _is_empty(prediction) or report.status in ("patch_failed", "error"):
        return None
    entry: dict[str, Any] = {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": report.log_accepted,
        "resolved": report.resolved,
        "infra_failure": False,
    }
    if report.log_accepted:
        entry["tests_status"] = report.tests_status
    elif test_output is not None:
        classification = classify_logs(test_output)
        if classification:
            reason, tier = classification
            entry["infra_failure"] = tier == TIER_ENVIRONMENT
            entry["infra_failure_reason"] = reason
    return {prediction.instance_id: entry}


def _instance_log(prediction: Prediction, report: InstanceReport) -> str:
    """``run_instance.log``: the patch commands with swebench's markers, then how the prediction ended."""
    from swebench.harness.constants import APPLY_PATCH_FAIL, APPLY_PATCH_PASS

    lines = [f"Grading {prediction.instance_id} ({prediction.model_name_or_path}) with debatecode"]
    attempts = report.patch.attempts if report.patch is not None else []
    for attempt in attempts:
        if attempt.ok:
            lines.append(f"{APPLY_PATCH_PASS} ({attempt.method}):\n{attempt.output}")
        else:
            lines.append(f"Failed to apply patch: {attempt.method}")
    if report.status == "patch_failed":
        lines.append(f"{APPLY_PATCH_FAIL}:\n{attempts[-1].output if attempts else ''}")
    if report.error:
        lines.append(f"Error: {report.error}")
    lines.append(f"Result for {prediction.instance_id}: {report.status}, resolved: {report.resolved}")
    return "\n".join(lines) + "\n"


def write_instance_logs(
    out: Path, run_id: str, prediction: Prediction, report: InstanceReport, test_output: Path | None
) -> Path | None:
    """Write the prediction's folder in swebench's layout; return its ``report.json``, or None when it has none.

    A ``report.json`` left there by an earlier grading of the same (model, instance) is
    removed when this outcome has none, so swebench's tools never read a stale verdict.
    """
    from swebench.harness.constants import LOG_INSTANCE, LOG_REPORT, LOG_TEST_OUTPUT

    where = prediction_log_dir(out, run_id, prediction.model_name_or_path, prediction.instance_id)
    document = swebench_report(prediction, report, test_output)
    if document is None:
        (where / LOG_REPORT).unlink(missing_ok=True)
        if _is_empty(prediction):
            return None
    where.mkdir(parents=True, exist_ok=True)
    (where / "patch.diff").write_text(prediction.model_patch or "", encoding="utf-8")
    (where / LOG_INSTANCE).write_text(_instance_log(prediction, report), encoding="utf-8")
    if test_output is not None and test_output.is_file():
        shutil.copyfile(test_output, where / LOG_TEST_OUTPUT)
    else:
        (where / LOG_TEST_OUTPUT).unlink(missing_ok=True)
    if document is None:
        return None
    path = where / LOG_REPORT
    path.write_text(json.dumps(document, indent=4), encoding="utf-8")
    return path


def run_report(
    out: Path, run_id: str, predictions: Sequence[Prediction], instance_ids: Sequence[str]
) -> dict[str, Any]:
    """One model's run report, counted from the files in ``run_dir(out, run_id)`` as ``make_run_report`` counts.

    ``predictions`` are that model's; ``instance_ids`` is the dataset graded (swebench's
    ``full_dataset``: every selected instance, with or without a prediction).
    """
    from swebench.harness.constants import LOG_INSTANCE, LOG_REPORT, LOG_TEST_OUTPUT
    from swebench.harness.infra_failure import TIER_ENVIRONMENT, classify_logs

    by_id = {prediction.instance_id: prediction for prediction in predictions}
    completed: set[str] = set()
    resolved: set[str] = set()
    unresolved: set[str] = set()
    errors: set[str] = set()
    incomplete: set[str] = set()
    empty: set[str] = set()
    for instance_id in instance_ids:
        prediction = by_id.get(instance_id)
        if prediction is None:
            incomplete.add(instance_id)
            continue
        if _is_empty(prediction):
            empty.add(instance_id)
            continue
        path = prediction_log_dir(out, run_id, prediction.model_name_or_path, instance_id) / LOG_REPORT
        if not path.exists():
            errors.add(instance_id)
            continue
        completed.add(instance_id)
        try:
            content = path.read_text(encoding="utf-8").strip()
            if not content:
                errors.add(instance_id)
                continue
            (resolved if json.loads(content)[instance_id]["resolved"] else unresolved).add(instance_id)
        except (json.JSONDecodeError, KeyError):
            errors.add(instance_id)
    infra: set[str] = set()
    ambiguous: set[str] = set()
    reasons: dict[str, str] = {}
    for instance_id in unresolved | errors:
        folder = prediction_log_dir(out, run_id, by_id[instance_id].model_name_or_path, instance_id)
        classification = classify_logs(folder / LOG_TEST_OUTPUT, folder / LOG_INSTANCE)
        if classification:
            reason, tier = classification
            reasons[instance_id] = reason
            (infra if tier == TIER_ENVIRONMENT else ambiguous).add(instance_id)
    return {
        "total_instances": len(instance_ids),
        "submitted_instances": len(by_id),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "infra_failure_instances": len(infra),
        "ambiguous_failure_instances": len(ambiguous),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": sorted(completed),
        "incomplete_ids": sorted(incomplete),
        "empty_patch_ids": sorted(empty),
        "submitted_ids": sorted(by_id),
        "resolved_ids": sorted(resolved),
        "unresolved_ids": sorted(unresolved),
        "infra_failure_ids": sorted(infra),
        "ambiguous_failure_ids": sorted(ambiguous),
        "failure_reasons": dict(sorted(reasons.items())),
        "error_ids": sorted(errors),
        "schema_version": RUN_REPORT_SCHEMA,
    }


def write_run_reports(
    out: Path, run_id: str, predictions: Sequence[Prediction], instance_ids: Sequence[str]
) -> list[Path]:
    """Write ``<out>/<model>.<run_id>.json`` for every model among ``predictions``; return the paths."""
    models: dict[str, list[Prediction]] = {}
    for prediction in predictions:
        models.setdefault(prediction.model_name_or_path, []).append(prediction)
    paths: list[Path] = []
    for model, own in models.items():
        path = run_report_path(out, model, run_id)
        path.write_text(json.dumps(run_report(out, run_id, own, instance_ids), indent=4) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
