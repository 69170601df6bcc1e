"""Crash a real ``debatecode`` process: SIGKILL it in the middle of its work, as a power cut would."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.cli.helpers import EXE


def kill_when(args: Sequence[str], *, cwd: Path, ready: Callable[[], bool], timeout: float = 120) -> None:
    """Start ``debatecode ARGS`` in ``cwd`` and SIGKILL it as soon as ``ready()`` holds (or ``timeout`` s passed).

    The process runs without ``DEBATECODE_*`` variables and without output. Fails if it ends on its
    own before it is killed, or if it dies of anything but the SIGKILL.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")} | {"NO_COLOR": "1", "TERM": "dumb"}
    proc = subprocess.Popen([str(EXE), *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if ready():
                break
            assert proc.poll() is None, f"`debatecode {args[0]}` finished before it could be killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
