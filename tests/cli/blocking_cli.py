"""``debatecode ARGS`` with one step made to block for a minute in C code that ignores signals.

Run as ``python blocking_cli.py worker|main MARKER ARGS...`` (``start_blocked`` does, and waits until
it is blocked). The first call of the step writes
``MARKER`` and then hashes for a minute with the GIL released (``hashlib.pbkdf2_hmac``), as a
tokenizer on a 20 MB task does:

- ``worker``: the hashing embedder of the memory, which the engine runs in a worker thread
  (``asyncio.run`` then waits for it on the way out);
- ``main``: the scripted model's choice of reply, which runs on the event loop in the main thread, where
  no Python signal handler can run until the call returns.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BLOCK_ITERATIONS = 120_000_000
"""About a minute of hashing."""
STARTUP_S = 90.0
"""The longest a run may take to reach its blocking step."""
REPO = Path(__file__).resolve().parents[2]


def start_blocked(folder: Path, where: str, args: Sequence[str], *, name: str = "run") -> subprocess.Popen[bytes]:
    """``debatecode ARGS`` in ``folder`` with one step blocked (see above), returned once it is blocked there.

    Its stderr goes to ``folder / f"{name}.stderr"``. Raises AssertionError when the run ends or takes
    ``STARTUP_S`` before it blocks.
    """
    marker = folder / f"{name}.blocked"
    stderr = folder / f"{name}.stderr"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": str(REPO), "DEBATECODE_MEMORY__EMBEDDER": "hashing"})
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, __file__, where, str(marker), *args],
            cwd=folder,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + STARTUP_S
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise AssertionError(f"the run never reached its blocking step: {stderr.read_text()}")
        time.sleep(0.05)
    time.sleep(0.3)  # inside the hashing now
    return proc


def blocking(original: Any, marker: Path) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not marker.exists():
            marker.write_text("blocked\n", encoding="utf-8")
            hashlib.pbkdf2_hmac("sha256", b"stop", b"me", BLOCK_ITERATIONS)
        return original(*args, **kwargs)

    return wrapper


def main() -> None:
    where, marker, args = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    if where == "worker":
        from debatecode.memory.embeddings import HashingEmbedder

        HashingEmbedder.embed = blocking(HashingEmbedder.embed, marker)  # type: ignore[method-assign]
    else:
        from debatecode.llm.scripted import ScriptedModel

        ScriptedModel.choose = blocking(ScriptedModel.choose, marker)  # type: ignore[method-assign]
    from debatecode.cli.app import main as debatecode

    sys.argv = ["debatecode", *args]
    debatecode()


if __name__ == "__main__":
    main()
