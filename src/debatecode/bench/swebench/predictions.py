"""Predictions in SWE-bench's format: ``instance_id``, ``model_name_or_path``, ``model_patch``.

A predictions file is a JSON list, a JSON object keyed by instance id, or JSONL.
Two names stand for generated predictions: ``gold`` (every instance's reference
``patch``) and ``empty`` (an empty patch each: the negative control). One file may
hold predictions of several models; each (model, instance) pair is graded once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from debatecode.bench.swebench.dataset import SWEBenchInstance, read_records
from debatecode.bench.swebench.errors import SWEBenchInputError

__all__ = ["EMPTY", "GOLD", "Prediction", "load_predictions", "write_predictions"]

GOLD = "gold"
EMPTY = "empty"


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
        identifier = record.get("instance_id") if isinstance(record.get("instance_id"), str) else None

        def fail(
            field: str,
            message: str,
            *,
            _line: int | None = line,
            _item: int | None = item,
            _id: str | None = identifier,
        ) -> SWEBenchInputError:
            return SWEBenchInputError(path, message, line=_line, item=_item, field=field, instance_id=_id)

        for name in ("instance_id", "model_name_or_path"):
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                raise fail(name, "missing" if value is None else f"expected a non-empty string, got {value!r}")
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
