"""Chunked model weights: assembled once from installed packages, verified by size and sha256, never half-written."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from debatecode.llm.weights import ChunkedWeights, WeightsError, assemble

PARTS = [b"GGUF" + bytes(range(256)) * 40, bytes(reversed(range(256))) * 33 + b"end"]


@pytest.fixture
def chunk_packages(tmp_path: Path) -> Iterator[ChunkedWeights]:
    root = tmp_path / "site"
    names = []
    for index, data in enumerate(PARTS, start=1):
        name = f"dc_test_chunks_part{index}_{tmp_path.name[-6:].replace('-', '_')}"
        (root / name / "data").mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
        (root / name / "data" / f"part{index:02d}.bin").write_bytes(data)
        names.append(name)
    sys.path.insert(0, str(root))
    whole = b"".join(PARTS)
    yield ChunkedWeights(
        filename="model.gguf",
        modules=tuple(names),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        packages="the test chunks",
    )
    sys.path.remove(str(root))
    for name in names:
        sys.modules.pop(name, None)


def test_the_parts_are_concatenated_in_order_and_verified(chunk_packages: ChunkedWeights, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    path = assemble(chunk_packages, cache=tmp_path / "cache", progress=lambda done, total: seen.append((done, total)))
    assert path.read_bytes() == b"".join(PARTS)
    assert seen[-1] == (chunk_packages.size, chunk_packages.size)
    assert (tmp_path / "cache" / "model.gguf.sha256").read_text().strip() == chunk_packages.sha256


def test_a_verified_file_is_reused_without_reading_the_parts_again(
    chunk_packages: ChunkedWeights, tmp_path: Path
) -> None:
    first = assemble(chunk_packages, cache=tmp_path / "cache")
    broken = ChunkedWeights(**{**chunk_packages.__dict__, "modules": ("dc_no_such_chunk_package",)})
    assert assemble(broken, cache=tmp_path / "cache") == first, "the cached, verified file is enough"


def test_a_wrong_digest_leaves_no_file_that_looks_complete(chunk_packages: ChunkedWeights, tmp_path: Path) -> None:
    wrong = ChunkedWeights(**{**chunk_packages.__dict__, "sha256": "0" * 64})
    with pytest.raises(WeightsError, match=r"expected .* bytes with sha256 0000"):
        assemble(wrong, cache=tmp_path / "cache")
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == []


def test_a_missing_chunk_package_says_what_to_install(tmp_path: Path) -> None:
    weights = ChunkedWeights(
        filename="m.gguf", modules=("dc_no_such_chunk_package",), size=1, sha256="0" * 64, packages="pkg-part1"
    )
    with pytest.raises(WeightsError, match="dc_no_such_chunk_package is not installed; install pkg-part1"):
        assemble(weights, cache=tmp_path / "cache")
