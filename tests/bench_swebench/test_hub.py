"""``--dataset`` as a Hugging Face name: loaded through ``datasets`` when allowed, a clear error offline."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from debatecode.bench.swebench import SWEBenchInputError, SWEBenchInstance
from debatecode.bench.swebench.hub import is_hub_name, load_dataset_source, load_hub_instances
from debatecode.cli.app import app

from .conftest import DATASET

VERIFIED = "princeton-nlp/SWE-bench_Verified"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The Hub switched off, however ``datasets`` and ``huggingface_hub`` were imported (no test reaches the network)."""
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    yield


def test_names_and_files_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_hub_name(VERIFIED) and is_hub_name("SWE-bench/SWE-bench_Lite")
    assert not is_hub_name(str(DATASET)), "an existing file"
    assert not is_hub_name("org/instances.jsonl") and not is_hub_name("org/set.json"), "a file name, even missing"
    assert not is_hub_name("instances") and not is_hub_name("a/b/c") and not is_hub_name("/abs/path")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "org" / "name").mkdir(parents=True)
    assert not is_hub_name("org/name"), "something exists at that path"


def test_offline_a_dataset_name_is_an_error_that_says_how_to_use_a_file(offline: None) -> None:
    with pytest.raises(SWEBenchInputError) as caught:
        load_dataset_source(VERIFIED)
    message = str(caught.value)
    assert message.startswith(f"{VERIFIED}:") and "HF_HUB_OFFLINE=1" in message
    assert f"load_dataset('{VERIFIED}', split='test')" in message
    assert "--dataset princeton-nlp__SWE-bench_Verified.jsonl" in message


def test_the_command_exits_2_offline_naming_the_dataset(offline: None, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["bench", "swebench", "--dataset", VERIFIED, "--split", "dev", "--predictions", "gold", "--out", str(tmp_path)],
    )
    output = result.output.replace("\n", "")
    assert result.exit_code == 2, result.output
    assert VERIFIED in output and "split 'dev'" in output and "JSONL" in output


def test_without_datasets_the_error_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(SWEBenchInputError, match=r"pip install 'debatecode\[bench\]'"):
        load_hub_instances(VERIFIED)


def _rows(local: list[SWEBenchInstance]) -> list[dict[str, Any]]:
    """The local instances as the Hub ships rows: test lists as JSON strings, extra columns."""
    rows = []
    for instance in local:
        row = instance.model_dump()
        row["FAIL_TO_PASS"] = json.dumps(row["FAIL_TO_PASS"])
        row["PASS_TO_PASS"] = json.dumps(row["PASS_TO_PASS"])
        row["difficulty"] = "<15 min fix"
        rows.append(row)
    return rows


def test_rows_from_the_hub_become_instances(local_instances: list[SWEBenchInstance]) -> None:
    asked: list[tuple[str, str]] = []

    def loader(name: str, split: str) -> list[Mapping[str, Any]]:
        asked.append((name, split))
        return list(_rows(local_instances))

    loaded = load_dataset_source(VERIFIED, split="test", loader=loader)
    assert asked == [(VERIFIED, "test")]
    assert loaded == local_instances


def test_a_malformed_row_names_the_dataset_row_and_field(local_instances: list[SWEBenchInstance]) -> None:
    rows = _rows(local_instances)
    del rows[1]["base_commit"]
    with pytest.raises(SWEBenchInputError) as caught:
        load_hub_instances(VERIFIED, loader=lambda name, split: rows)
    message = str(caught.value)
    assert message.startswith(f"{VERIFIED} (split test) (item 2)") and "field 'base_commit': missing" in message
