"""Loading SWE-bench instances: the local set loads; malformed input names the file, line, instance and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from debatecode.bench.swebench import SWEBenchInputError, SWEBenchInstance, load_instances, select_instances
from debatecode.errors import UserError

from .conftest import DATASET


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(DATASET.read_text().splitlines()[0])
    record.update(changes)
    return {key: value for key, value in record.items() if value is not None}


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_the_local_set_has_at_least_three_instances_of_our_repositories() -> None:
    instances = load_instances(DATASET)
    assert len(instances) >= 3
    assert {i.repo for i in instances} == {
        "debatecode-local/strutils",
        "debatecode-local/daterange",
        "debatecode-local/confparse",
    }
    first = instances[0]
    assert isinstance(first.FAIL_TO_PASS, list) and first.FAIL_TO_PASS, "JSON-string lists are decoded"
    assert first.tests[: len(first.FAIL_TO_PASS)] == first.FAIL_TO_PASS


def test_a_json_list_loads_too(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps([_record(FAIL_TO_PASS=["t.py::a"], PASS_TO_PASS=[])]))
    [instance] = load_instances(path)
    assert isinstance(instance, SWEBenchInstance) and instance.FAIL_TO_PASS == ["t.py::a"]


def test_a_line_that_is_not_json_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(_record()) + "\n\n{not json\n")
    with pytest.raises(SWEBenchInputError) as caught:
        load_instances(path)
    assert isinstance(caught.value, UserError) and caught.value.line == 3
    assert str(caught.value).startswith(f"{path}:3: not valid JSON")


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"patch": None}, "patch", "missing"),
        ({"FAIL_TO_PASS": "not a list"}, "FAIL_TO_PASS", "expected a list of test ids"),
        ({"FAIL_TO_PASS": "[]"}, "FAIL_TO_PASS", "is empty"),
        ({"base_commit": "main"}, "base_commit", "git commit hash"),
        ({"repo": "no-slash"}, "repo", "owner/name"),
        ({"eval_type": "sometimes"}, "eval_type", "expected one of"),
        ({"version": [1]}, "version", "expected a string"),
    ],
)
def test_a_bad_field_is_named_with_its_line_and_instance(
    tmp_path: Path, changes: dict[str, Any], field: str, words: str
) -> None:
    path = _write(tmp_path / "set.jsonl", [_record(instance_id="ok-1"), _record(instance_id="bad-2", **changes)])
    with pytest.raises(SWEBenchInputError) as caught:
        load_instances(path)
    error = caught.value
    assert (error.line, error.field, error.instance_id) == (2, field, "bad-2")
    assert f"{path}:2: instance 'bad-2': field {field!r}:" in str(error) and words in str(error)


def test_repeated_ids_empty_files_and_missing_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(SWEBenchInputError, match="repeats an earlier instance id"):
        load_instances(_write(tmp_path / "dup.jsonl", [_record(), _record()]))
    with pytest.raises(SWEBenchInputError, match="holds no instances"):
        load_instances(_write(tmp_path / "none.jsonl", []))
    with pytest.raises(SWEBenchInputError, match="no such dataset file"):
        load_instances(tmp_path / "absent.jsonl")
    (tmp_path / "list.json").write_text('[1, {"a": 2}]')
    with pytest.raises(SWEBenchInputError, match=r"\(item 1\): expected a JSON object"):
        load_instances(tmp_path / "list.json")


def test_select_keeps_dataset_order_and_names_unknown_ids() -> None:
    instances = load_instances(DATASET)
    ids = [instances[2].instance_id, instances[0].instance_id]
    assert [i.instance_id for i in select_instances(instances, ids)] == [ids[1], ids[0]]
    assert select_instances(instances, None) == instances
    with pytest.raises(SWEBenchInputError, match=r"unknown instance id.*nope.*Known:"):
        select_instances(instances, ["nope"])
