"""Embedders: unit vectors, stable hashing, sensible similarity, and choice by name."""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

from debatecode.errors import ConfigError
from debatecode.memory import HashingEmbedder, MemorySettings, create_embedder
from debatecode.memory import embeddings as embeddings_module
from debatecode.memory.embeddings import Embedder, SentenceTransformerEmbedder, embedder_names

PHRASES = ["off by one error in range loop", "loop bound wrong by one", "json parsing failure"]


@pytest.fixture(autouse=True)
def _fresh_announcements(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees ``auto``'s choice as if this process had not logged it yet."""
    monkeypatch.setattr(embeddings_module, "_announced", set())


def cosine(embedder: Embedder, a: str, b: str) -> float:
    vectors = embedder.embed([a, b])
    return float(vectors[0] @ vectors[1])


def test_hashing_rows_are_float32_unit_vectors_and_blank_text_is_zero() -> None:
    embedder = HashingEmbedder(128)
    vectors = embedder.embed([*PHRASES, "", "   "])
    assert vectors.dtype == np.float32
    assert vectors.shape == (5, 128)
    np.testing.assert_allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, rtol=1e-5)
    assert not vectors[3].any()
    assert not vectors[4].any()


def test_hashing_finds_the_shared_meaning_of_off_by_one_phrases() -> None:
    embedder = HashingEmbedder(512)
    related = cosine(embedder, PHRASES[0], PHRASES[1])
    unrelated = cosine(embedder, PHRASES[0], PHRASES[2])
    assert related > unrelated + 0.2
    assert cosine(embedder, "JSON parsing error", "failed to parse json") > cosine(
        embedder, "JSON parsing error", "loop bound wrong by one"
    )


def test_hashing_is_identical_in_another_process() -> None:
    code = (
        "from debatecode.memory import HashingEmbedder\n"
        f"print(HashingEmbedder(64).embed([{PHRASES[0]!r}])[0].tobytes().hex())\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": "12345"}
    )
    assert other.stdout.strip() == HashingEmbedder(64).embed([PHRASES[0]])[0].tobytes().hex()


def test_hashing_rejects_tiny_dimensions_and_non_strings() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        HashingEmbedder(4)
    with pytest.raises(TypeError, match="strings"):
        HashingEmbedder(32).embed([b"bytes"])  # type: ignore[list-item]


def test_sentence_transformer_ranks_off_by_one_phrases_together(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.embed(PHRASES)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > 0.5 > 0.3 > vectors[0] @ vectors[2]
    assert minilm.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.embed([]).shape == (0, 384)


def test_sentence_transformer_knows_its_dimension_without_importing_torch() -> None:
    code = (
        "import sys\n"
        "from debatecode.memory.embeddings import SentenceTransformerEmbedder\n"
        "embedder = SentenceTransformerEmbedder()\n"
        "print(embedder.dim, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["384", "False", "False"]


def test_create_embedder_by_name() -> None:
    settings = MemorySettings(hashing_dim=96)
    hashing = create_embedder("hashing", settings)
    assert isinstance(hashing, HashingEmbedder)
    assert hashing.dim == 96
    assert isinstance(create_embedder("sentence-transformers", settings), SentenceTransformerEmbedder)
    assert embedder_names() == ["auto", "sentence-transformers", "hashing"]


def test_unknown_embedder_names_the_known_ones_and_the_extra() -> None:
    with pytest.raises(ConfigError) as caught:
        create_embedder("word2vec", MemorySettings())
    message = str(caught.value)
    assert "'word2vec'" in message
    assert "auto, sentence-transformers, hashing" in message
    assert "pip install 'debatecode[embeddings]'" in message
    assert caught.value.key == "memory.embedder"


def test_auto_takes_sentence_transformers_when_installed_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="debatecode.memory.embeddings"):
        embedder = create_embedder("auto", MemorySettings())
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert "sentence-transformers (auto: it is installed)" in caplog.text


def test_auto_logs_its_choice_at_info_once_per_process_then_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="debatecode.memory.embeddings"):
        for _ in range(3):
            create_embedder("auto", MemorySettings())
    choices = [r for r in caplog.records if "auto: it is installed" in r.getMessage()]
    assert [r.levelno for r in choices] == [logging.INFO, logging.DEBUG, logging.DEBUG]


def test_without_sentence_transformers_auto_falls_back_to_hashing_and_explicit_choice_explains(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_find_spec = embeddings_module.importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "sentence_transformers" else real_find_spec(name)

    monkeypatch.setattr(embeddings_module.importlib.util, "find_spec", find_spec)
    with caplog.at_level(logging.INFO, logger="debatecode.memory.embeddings"):
        embedder = create_embedder("auto", MemorySettings(hashing_dim=64))
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dim == 64
    assert "hashing (auto: sentence-transformers unavailable, sentence_transformers not installed" in caplog.text
    with pytest.raises(ConfigError, match=r"pip install 'debatecode\[embeddings\]'.*embedder = \"hashing\""):
        create_embedder("sentence-transformers", MemorySettings())
