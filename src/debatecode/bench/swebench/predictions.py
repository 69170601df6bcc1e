"""Predictions in SWE-bench's format: ``instance_id``, ``model_name_or_path``, ``model_patch``.

A predictions file is a JSON list, a JSON object keyed by instance id, or JSONL.
Two names stand for generated predictions: ``gold`` (every instance's reference
``patch``) and ``empty`` (an empty patch each: the negative control). One file may
hold predictions of several models; each (model, instance) pair is graded once.

Solve mode keeps its predictions in such a file too, one line appended per solved
instance (``SolvedPrediction``). Each line carries an extra ``debatecode`` key
(``schema_version``, ``fingerprint``, ``status``) that swebench's reader and
``load_predictions`` ignore; ``plan_resume`` decides from it which lines a re-run
reuses.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from debatecode.bench.swebench.dataset import SWEBenchInstance, read_records, record_error
from debatecode.bench.swebench.errors import SWEBenchInputError
from debatecode.safe_paths import UnsafeName, check_model_name, check_name

__all__ = [
    "EMPTY",
    "GOLD",
    "PREDICTIONS_FILE",
    "SOLVED_KEY",
    "SOLVED_SCHEMA_VERSION",
    "Prediction",
    "ResumePlan",
    "SolvedPrediction",
    "append_solved",
    "load_predictions",
    "plan_resume",
    "read_solved",
    "rewrite_solved",
    "write_predictions",
]

logger = logging.getLogger(__name__)

GOLD = "gold"
EMPTY = "empty"
PREDICTIONS_FILE = "predictions.jsonl"
"""Solve mode's ``<out>/predictions.jsonl``: a line per solved instance, from which a re-run resumes."""
SOLVED_KEY = "debatecode"
"""The extra key of a solved prediction's line: ``{"schema_version", "fingerprint", "status"}``."""
SOLVED_SCHEMA_VERSION = 1
"""Version of the ``debatecode`` key's contents."""
_SOLVED_AGAIN = frozenset({"error"})
"""Statuses whose prediction a re-run does not reuse: the instance could not be set up, so it is solved again."""


class Prediction(BaseModel):
    """One model's patch for one instance."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    model_name_or_path: str
    model_patch: str | None
    """A unified diff; ``None`` or empty means the model produced no patch."""

    @property
    def is_empty(self) -> bool:
        """No patch at all, or only whitespace."""
        return not (self.model_patch or "").strip()


def _from_file(path: Path) -> list[Prediction]:
    predictions: list[Prediction] = []
    seen: set[tuple[str, str]] = set()
    for record, line, item in read_records(path, what="predictions"):
        fail = record_error(path, record, line, item)
        for name in ("instance_id", "model_name_or_path"):
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                raise fail(name, "missing" if value is None else f"expected a non-empty string, got {value!r}")
            try:  # both name folders under --out: ``../x`` or ``/tmp/x`` would write outside it
                (check_name if name == "instance_id" else check_model_name)(value, name)
            except UnsafeName as exc:
                raise fail(name, exc.reason) from exc
        if "model_patch" not in record:
            raise fail("model_patch", "missing (use null or an empty string for no patch)")
        patch = record["model_patch"]
        if patch is not None and not isinstance(patch, str):
            raise fail("model_patch", f"expected a unified diff as a string (or null), got {type(patch).__name__}")
        prediction = Prediction(
            instance_id=record["instance_id"], model_name_or_path=record["model_name_or_path"], model_patch=patch
        )
        key = (prediction.model_name_or_path, prediction.instance_id)
        if key in seen:
            raise fail("instance_id", f"a second prediction of model {key[0]!r} for this instance")
        seen.add(key)
        predictions.append(prediction)
    return predictions


def load_predictions(
    source: str | Path,
    dataset: Sequence[SWEBenchInstance],
    selected: Sequence[SWEBenchInstance] | None = None,
) -> list[Prediction]:
    """The predictions to grade: ``gold``, ``empty`` or those of a file, for the ``selected`` instances.

    ``selected`` defaults to the whole ``dataset``. A file's predictions for instances
    outside ``selected`` are dropped; predictions for instances the dataset does not
    have at all are an error, as in SWE-bench's harness.

    Raises:
        SWEBenchInputError: the file is unreadable or malformed, a field is missing or
            has the wrong type, a (model, instance) pair repeats, or an instance id is
            not in the dataset.
    """
    chosen = list(dataset if selected is None else selected)
    if str(source) == GOLD:
        return [Prediction(instance_id=i.instance_id, model_name_or_path=GOLD, model_patch=i.patch) for i in chosen]
    if str(source) == EMPTY:
        return [Prediction(instance_id=i.instance_id, model_name_or_path=EMPTY, model_patch="") for i in chosen]
    path = Path(source)
    predictions = _from_file(path)
    known = {instance.instance_id for instance in dataset}
    unknown = sorted({p.instance_id for p in predictions if p.instance_id not in known})
    if unknown:
        raise SWEBenchInputError(
            path, f"predictions for instances the dataset does not have: {', '.join(unknown)}", field="instance_id"
        )
    wanted = {instance.instance_id for instance in chosen}
    return [prediction for prediction in predictions if prediction.instance_id in wanted]


def write_predictions(path: Path, predictions: Sequence[Prediction]) -> Path:
    """Write predictions as SWE-bench JSONL (``instance_id``, ``model_name_or_path``, ``model_patch``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p.model_dump()) + "\n" for p in predictions), encoding="utf-8")
    return path


@dataclass(frozen=True)
class SolvedPrediction:
    """One line of a solve run's predictions file: the prediction and what makes it reusable.

    ``fingerprint`` is None for a line without the ``debatecode`` key (written by
    another tool, or by hand); such a line is never reused. ``line`` is the stored
    JSON text (no newline), written back as it is when the line is kept.
    """

    prediction: Prediction
    fingerprint: str | None
    status: str
    line: str

    @classmethod
    def of(cls, prediction: Prediction, fingerprint: str, status: str) -> SolvedPrediction:
        """A new line: the prediction's three SWE-bench fields, then the ``debatecode`` key."""
        extra = {"schema_version": SOLVED_SCHEMA_VERSION, "fingerprint": fingerprint, "status": status}
        line = json.dumps({**prediction.model_dump(), SOLVED_KEY: extra})
        return cls(prediction=prediction, fingerprint=fingerprint, status=status, line=line)

    @property
    def instance_id(self) -> str:
        """The prediction's instance."""
        return self.prediction.instance_id


def _parse_solved(line: str) -> SolvedPrediction | None:
    try:
        record: Any = json.loads(line)
        prediction = Prediction.model_validate(record)
    except (json.JSONDecodeError, ValidationError):
        return None
    extra = record.get(SOLVED_KEY)
    fingerprint = extra.get("fingerprint") if isinstance(extra, dict) else None
    status = extra.get("status") if isinstance(extra, dict) else None
    return SolvedPrediction(
        prediction=prediction,
        fingerprint=fingerprint if isinstance(fingerprint, str) and fingerprint else None,
        status=status if isinstance(status, str) else "ok",
        line=line,
    )


def read_solved(path: Path) -> list[SolvedPrediction]:
    """The lines of a solve run's predictions file, in file order (empty when there is no such file).

    Lines that are not predictions (a torn last line from a killed run, hand edits)
    are skipped with a warning, and dropped when the file is rewritten.
    """
    if not path.is_file():
        return []
    solved: list[SolvedPrediction] = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        entry = _parse_solved(line)
        if entry is None:
            logger.warning("%s:%d: not a prediction; ignored", path, number)
            continue
        solved.append(entry)
    return solved


def append_solved(path: Path, entry: SolvedPrediction) -> None:
    """Append ``entry`` to ``path`` as one whole line (call from the event loop's thread only)."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(entry.line + "\n")
        handle.flush()


def rewrite_solved(path: Path, entries: Sequence[SolvedPrediction]) -> Path:
    """Replace ``path`` with ``entries``, one line each, atomically (a kill leaves the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text("".join(entry.line + "\n" for entry in entries), encoding="utf-8")
    os.replace(partial, path)
    return path


@dataclass(frozen=True)
class ResumePlan:
    """What an earlier run's predictions file gives a run of the instances of ``fingerprints``."""

    total: int
    """Instances in this run."""
    reused: dict[str, SolvedPrediction] = field(default_factory=dict)
    """By instance id: the earlier line made with the same fingerprint, which stands."""
    replaced: list[SolvedPrediction] = field(default_factory=list)
    """Earlier lines of this run's instances made with another fingerprint (model, strategy, settings)."""
    retried: list[SolvedPrediction] = field(default_factory=list)
    """Earlier lines of this run's instances with the same fingerprint whose solve failed (status ``error``)."""
    kept: list[SolvedPrediction] = field(default_factory=list)
    """Lines of instances outside this run, kept as they are."""


def plan_resume(entries: Sequence[SolvedPrediction], fingerprints: Mapping[str, str]) -> ResumePlan:
    """Sort an earlier run's lines (``read_solved``) for a run of ``fingerprints`` (instance id -> fingerprint).

    An instance's last line with its fingerprint and a status other than ``error``
    is reused (an earlier copy of it is dropped); the instance's other lines are
    replaced (another fingerprint, or none) or retried (``error``). Lines of
    instances not in ``fingerprints`` are kept.
    """
    plan = ResumePlan(total=len(fingerprints))
    for entry in entries:
        wanted = fingerprints.get(entry.instance_id)
        if wanted is None:
            plan.kept.append(entry)
        elif entry.fingerprint == wanted and entry.status not in _SOLVED_AGAIN:
            plan.reused[entry.instance_id] = entry
        elif entry.fingerprint == wanted:
            plan.retried.append(entry)
        else:
            plan.replaced.append(entry)
    return plan
