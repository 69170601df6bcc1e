"""Reading a session back the way a script would: ``debatecode sessions show ID --json``, and the id a run printed."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from challenges._harness import Journey, expect

SUMMARY_ID = re.compile(r"debatecode · session ([0-9a-f]{12})")
RESUME_HINT = re.compile(r"--resume ([0-9a-f]{12})")


def session_id_in(proc: subprocess.CompletedProcess[str], pattern: re.Pattern[str] = SUMMARY_ID) -> str:
    """The session id a ``debatecode solve`` printed (its summary, or the ``--resume`` hint of a failed run)."""
    found = pattern.search(" ".join((proc.stdout + proc.stderr).split()))
    expect(found is not None, f"the output names no session ({pattern.pattern})", proc.stdout + proc.stderr)
    assert found is not None
    return found.group(1)


def shown(journey: Journey, session_id: str, *, config: Path | None = None) -> dict[str, Any]:
    """``sessions show ID --json``: ``{"session", "turns", "versions"}`` as the store has them."""
    args = ["sessions", "show", session_id, "--json", *(["--config", str(config)] if config else [])]
    proc = journey.cli(*args)
    expect(proc.returncode == 0, f"sessions show {session_id} exited {proc.returncode}", proc.stdout + proc.stderr)
    document: dict[str, Any] = json.loads(proc.stdout)
    return document


def model_turns(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The stored turns a model answered (not the sandbox's or the memory's tool turns)."""
    return [turn for turn in document["turns"] if turn["provider"] != "tool"]
