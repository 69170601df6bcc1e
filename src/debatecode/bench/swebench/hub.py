"""SWE-bench datasets by Hugging Face name (``princeton-nlp/SWE-bench_Verified``), or from a local file.

``--dataset`` takes either. An existing path, or a name ending in ``.json`` or
``.jsonl``, is a local file (``dataset.load_instances``). Anything else of the form
``org/name`` is a Hugging Face dataset, loaded with the ``datasets`` package
(installed with the ``bench`` extra, as a dependency of ``swebench``) when the
network allows it, or from ``datasets``' cache when it has the dataset already.
Offline (``HF_HUB_OFFLINE=1``, or no network), a dataset that is not in the cache
is an error that names it and says how to export it to a JSONL file once, while
online, and use that instead.

Rows are validated like a file's records; errors name the dataset and the row.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from debatecode.bench.swebench.dataset import SWEBenchInstance, instances_from_records, load_instances
from debatecode.bench.swebench.errors import SWEBenchInputError

__all__ = ["DEFAULT_SPLIT", "HubLoader", "is_hub_name", "load_dataset_source", "load_hub_instances"]

DEFAULT_SPLIT = "test"
_HUB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_LOCAL_SUFFIXES = (".json", ".jsonl")

HubLoader = Callable[[str, str], Iterable[Mapping[str, Any]]]
"""``loader(name, split)``: the rows of a Hugging Face dataset split."""


def is_hub_name(source: str) -> bool:
    """Whether ``source`` names a Hugging Face dataset rather than a local file.

    True for ``org/name`` when nothing exists at that path and the name does not end
    in ``.json`` or ``.jsonl``.
    """
    return bool(_HUB_NAME.match(source)) and not source.lower().endswith(_LOCAL_SUFFIXES) and not Path(source).exists()


def _offline() -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    return os.environ.get("HF_DATASETS_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _export_hint(name: str, split: str) -> str:
    stem = name.replace("/", "__")
    return (
        "Use a local file instead: while online, export it once with "
        f"`python -c \"from datasets import load_dataset; load_dataset('{name}', split='{split}')"
        f".to_json('{stem}.jsonl')\"`, then pass --dataset {stem}.jsonl (JSON or JSONL in SWE-bench's format)."
    )


def _datasets_loader(name: str, split: str) -> Iterable[Mapping[str, Any]]:
    """The rows of ``name``'s ``split`` through ``datasets.load_dataset``.

    Raises:
        SWEBenchInputError: ``datasets`` is missing, the Hub cannot be reached (offline),
            or the dataset or split does not exist.
    """
    try:
        import datasets
    except ImportError as exc:
        raise SWEBenchInputError(
            name,
            "reading a Hugging Face dataset needs the `datasets` package, which is not installed: "
            "pip install 'debatecode[bench]' (swebench brings it) or pip install datasets. "
            + _export_hint(name, split),
        ) from exc
    try:
        rows: Iterable[Mapping[str, Any]] = datasets.load_dataset(name, split=split)
    except ConnectionError as exc:
        why = "the Hugging Face Hub is switched off here (HF_HUB_OFFLINE=1)" if _offline() else "no network"
        raise SWEBenchInputError(
            name,
            f"cannot load the Hugging Face dataset (split {split!r}): {why}, and it is not in the local cache "
            f"({exc}). " + _export_hint(name, split),
        ) from exc
    # datasets reports a missing dataset as FileNotFoundError, a missing split as ValueError,
    # and build or download failures as DatasetsError.
    except (OSError, ValueError, datasets.exceptions.DatasetsError) as exc:
        offline = " (and HF_HUB_OFFLINE=1 keeps the Hub switched off)" if _offline() else ""
        raise SWEBenchInputError(
            name,
            f"cannot load the Hugging Face dataset (split {split!r}){offline}: {exc}. " + _export_hint(name, split),
        ) from exc
    return rows


def _records(rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple[dict[str, Any], int | None, int | None]]:
    for index, row in enumerate(rows, start=1):
        yield dict(row), None, index


def load_hub_instances(
    name: str, split: str = DEFAULT_SPLIT, *, loader: HubLoader | None = None
) -> list[SWEBenchInstance]:
    """The instances of the Hugging Face dataset ``name`` (its ``split``), validated.

    ``loader`` fetches the rows (``datasets.load_dataset`` by default).

    Raises:
        SWEBenchInputError: the dataset cannot be loaded (the message says why, and how to
            use a local file instead), or a row is malformed (it names the row and field).
    """
    rows = (loader or _datasets_loader)(name, split)
    return instances_from_records(_records(rows), f"{name} (split {split})")


def load_dataset_source(
    source: str, *, split: str = DEFAULT_SPLIT, loader: HubLoader | None = None
) -> list[SWEBenchInstance]:
    """The instances of ``--dataset``: a local JSON/JSONL file, or a Hugging Face dataset name.

    Raises:
        SWEBenchInputError: as ``load_instances`` or ``load_hub_instances``.
    """
    if is_hub_name(source):
        return load_hub_instances(source, split, loader=loader)
    return load_instances(Path(source))
