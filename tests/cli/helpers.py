"""Run the real ``debatecode`` console script in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXE = Path(sys.executable).with_name("debatecode")

HASHING_MEMORY: dict[str, str] = {"DEBATECODE_MEMORY__EMBEDDER": "hashing"}
"""Env for a run whose subject is not memory: the hashing embedder instead of loading torch and MiniLM (~10 s a run).

The default embedder (``auto``, sentence-transformers here) stays covered through the console script by
``tests/memory/test_memory_cli.py``, ``tests/e2e/test_local_model.py`` (the Qwen run) and the challenges
(``tests/e2e/test_challenges.py``), and in process by ``tests/memory`` and ``tests/protocol``.
"""


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``debatecode ARGS`` in ``cwd`` with a clean, test-safe environment."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DEBATECODE_") or k in ("DEBATECODE_ALLOW_MODEL_REQUESTS",)
    }
    full_env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
    full_env.update(env or {})
    return subprocess.run([str(EXE), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


@dataclass(frozen=True)
class SolvedAdd:
    """A finished ``debatecode solve ADD --model scripted:REPLIES --sandbox local --out out`` run."""

    folder: Path
    """Where it ran: ``.debatecode/debatecode.db`` and ``out/`` (the solution, the report, the git history)."""
    session_id: str
    proc: subprocess.CompletedProcess[str]

    def copy_to(self, dest: Path) -> Path:
        """A private copy of ``folder`` (store and git history) at ``dest``, for a test that changes them."""
        shutil.copytree(self.folder, dest, symlinks=True)
        return dest
