"""The git border: one way to run git, and its failures as ``VersionControlError``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from debatecode.errors import VersionControlError

__all__ = ["GIT_CONFIG", "git", "git_ok"]

GIT_CONFIG = (
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "protocol.file.allow=always",
)
"""Settings that make git behave the same whatever the user's configuration."""

_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "debatecode",
    "GIT_AUTHOR_EMAIL": "bench@debatecode.local",
    "GIT_COMMITTER_NAME": "debatecode",
    "GIT_COMMITTER_EMAIL": "bench@debatecode.local",
}


def _run(
    args: Sequence[str], cwd: Path | None, stdin: bytes | None, timeout_s: float
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *GIT_CONFIG, *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env={**os.environ, **_ENV},
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError as exc:
        raise VersionControlError("git is not installed (the SWE-bench bridge needs the `git` command)") from exc
    except subprocess.TimeoutExpired as exc:
        raise VersionControlError(f"`git {' '.join(args)}` did not finish within {timeout_s:.0f}s") from exc


def git(*args: str, cwd: Path | None = None, stdin: bytes | None = None, timeout_s: float = 300.0) -> bytes:
    """Run ``git ARGS`` and return its stdout.

    Raises:
        VersionControlError: git is missing, timed out or failed (the message has its stderr).
    """
    completed = _run(args, cwd, stdin, timeout_s)
    if completed.returncode != 0:
        detail = completed.stderr.decode("utf-8", "replace").strip()[-2000:]
        where = f" in {cwd}" if cwd else ""
        raise VersionControlError(f"`git {' '.join(args)}` failed{where}: {detail}")
    return completed.stdout


def git_ok(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> tuple[bool, str]:
    """Run ``git ARGS``; whether it succeeded and its combined output (for checks and patch attempts).

    Raises:
        VersionControlError: git is missing or timed out.
    """
    completed = _run(args, cwd, stdin, 300.0)
    output = (completed.stdout + completed.stderr).decode("utf-8", "replace")
    return completed.returncode == 0, output
