"""Predictions in SWE-bench's format, plus the ``gold`` and ``empty`` names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debatecode.bench.swebench import (
    EMPTY,
    GOLD,
    Prediction,
    SWEBenchInputError,
    SWEBenchInstance,
    load_predictions,
    write_predictions,
)


def test_gold_and_empty_cover_the_selected_instances(local_instances: list[SWEBenchInstance]) -> None:
    gold = load_predictions(GOLD, local_instances)
    assert [p.model_patch for p in gold] == [i.patch for i in local_instances]
    assert {p.model_name_or_path for p in gold} == {"gold"}
    empty = load_predictions(EMPTY, local_instances, local_instances[:1])
    assert len(empty) == 1 and empty[0].is_empty and empty[0].model_name_or_path == "empty"


def test_a_file_round_trips_and_is_filtered_to_the_selection(
    tmp_path: Path, local_instances: list[SWEBenchInstance]
) -> None:
    first, second = local_instances[:2]
    written = [
        Prediction(instance_id=first.instance_id, model_name_or_path="m/a", model_patch=first.patch),
        Prediction(instance_id=second.instance_id, model_name_or_path="m/a", model_patch=None),
        Prediction(instance_id=first.instance_id, model_name_or_path="m/b", model_patch=""),
    ]
    path = write_predictions(tmp_path / "preds.jsonl", written)
    assert load_predictions(path, local_instances) == written
    assert [p.model_name_or_path for p in load_predictions(path, local_instances, [first])] == ["m/a", "m/b"]
    keyed = tmp_path / "preds.json"
    keyed.write_text(json.dumps({p.instance_id: p.model_dump() for p in written[:2]}))
    assert load_predictions(keyed, local_instances) == written[:2]


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        ({"model_name_or_path": "m", "model_patch": ""}, "instance_id", "missing"),
        ({"instance_id": "X", "model_patch": ""}, "model_name_or_path", "missing"),
        ({"instance_id": "X", "model_name_or_path": "m"}, "model_patch", "missing"),
        ({"instance_id": "X", "model_name_or_path": "m", "model_patch": 3}, "model_patch", "unified diff"),
    ],
)
def test_a_bad_record_is_named_with_its_line_and_field(
    tmp_path: Path, local_instances: list[SWEBenchInstance], record: dict[str, object], field: str, words: str
) -> None:
    record = {key: (local_instances[0].instance_id if value == "X" else value) for key, value in record.items()}
    path = tmp_path / "preds.jsonl"
    path.write_text("\n" + json.dumps(record) + "\n")
    with pytest.raises(SWEBenchInputError) as caught:
        load_predictions(path, local_instances)
    assert caught.value.line == 2 and caught.value.field == field and words in str(caught.value)
    assert str(caught.value).startswith(f"{path}:2:")


def test_repeats_and_unknown_instances_are_errors(tmp_path: Path, local_instances: list[SWEBenchInstance]) -> None:
    one = {"instance_id": local_instances[0].instance_id, "model_name_or_path": "m", "model_patch": ""}
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(one) + "\n" + json.dumps(one) + "\n")
    with pytest.raises(SWEBenchInputError, match="a second prediction of model 'm'"):
        load_predictions(path, local_instances)
    path.write_text(json.dumps({**one, "instance_id": "owner__repo-99"}) + "\n")
    with pytest.raises(SWEBenchInputError, match="the dataset does not have: owner__repo-99"):
        load_predictions(path, local_instances)
    with pytest.raises(SWEBenchInputError, match="no such predictions file"):
        load_predictions(tmp_path / "absent.jsonl", local_instances)
