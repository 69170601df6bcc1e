"""Run the real ``debatecode`` console script in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXE = Path(sys.executable).with_name("debatecode")


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
