"""Shared git plumbing of the version history: environment, error translation, log parsing.

Every git call of ``debatecode.vcs`` runs with the environment from
``git_environment()`` and inside ``git_errors()``, so the user's git config
never changes what is recorded and git failures leave only as
``VersionControlError`` naming the path.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pygit2

from debatecode.errors import VersionControlError

try:
    import git
    import gitdb.exc
except ImportError as exc:  # GitPython refuses to import when no git executable works
    raise VersionControlError(f"git is not usable: {exc}. Install git 2.36 or newer and put it on PATH.") from exc

__all__ = [
    "AUTHOR_EMAIL",
    "AUTHOR_NAME",
    "BRANCH_PREFIX",
    "INITIAL_MESSAGE",
    "LOG_FORMAT",
    "MAIN_BRANCH",
    "REGULAR_FILE_MODE",
    "SESSION_TRAILER",
    "WORKTREES_DIR",
    "CommitInfo",
    "DirectWriteRefused",
    "blob_sha",
    "cleanup_message",
    "compose_message",
    "git",
    "git_environment",
    "git_errors",
    "parse_log",
    "reflog_message",
    "unified_diff",
]

AUTHOR_NAME = "debatecode"
AUTHOR_EMAIL = "debatecode@localhost"
MAIN_BRANCH = "main"
BRANCH_PREFIX = "debate/"
WORKTREES_DIR = ".worktrees"
INITIAL_MESSAGE = "debatecode: start version history"
SESSION_TRAILER = "Debate-Session"
REGULAR_FILE_MODE = 0o100644

_TRAILER_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_FIELD, _RECORD = "\x1f", "\x1e"
LOG_FORMAT = "%H%x1f%an%x1f%ae%x1f%cI%x1f%B%x1f%(trailers:only,unfold)%x1e"
_CONFIG_OVERRIDES = {
    "commit.gpgsign": "false",
    "core.hooksPath": os.devnull,  # no hook of the user's runs on our commits
    "core.autocrlf": "false",  # stored bytes are the content, exactly
    "log.showSignature": "false",  # keeps ``git log --format`` output parseable
}


class DirectWriteRefused(ValueError):
    """A write that ``debatecode.vcs`` makes in process cannot be made so here; git's own command must do it.

    Raised before anything of that write is recorded.
    """


def git_environment() -> dict[str, str]:
    """Environment for every git call: fixed identity and config overrides (git >= 2.31)."""
    env = {f"GIT_{role}_NAME": AUTHOR_NAME for role in ("AUTHOR", "COMMITTER")}
    env |= {f"GIT_{role}_EMAIL": AUTHOR_EMAIL for role in ("AUTHOR", "COMMITTER")}
    env |= {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": str(len(_CONFIG_OVERRIDES))}
    for index, (key, value) in enumerate(_CONFIG_OVERRIDES.items()):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _describe(exc: BaseException) -> str:
    if isinstance(exc, git.GitCommandError):
        stderr = str(exc.stderr).strip().removeprefix("stderr:").strip().strip("'").strip()
        return stderr or str(exc)
    return str(exc)


@contextmanager
def git_errors(path: Path, action: str) -> Iterator[None]:
    """Turn git, GitPython, libgit2 (pygit2) and file-system errors into ``VersionControlError``."""
    try:
        yield
    except (git.GitError, gitdb.exc.ODBError, pygit2.GitError, DirectWriteRefused, OSError) as exc:
        raise VersionControlError(f"cannot {action} in {path}: {_describe(exc)}") from exc


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """One commit of a version history, newest first in ``log()``."""

    sha: str
    summary: str
    message: str
    author_name: str
    author_email: str
    committed_at: datetime
    trailers: Mapping[str, str] = field(default_factory=dict)


def parse_log(output: str) -> list[CommitInfo]:
    commits = []
    for record in output.split(_RECORD):
        record = record.lstrip("\n")
        if not record:
            continue
        sha, name, email, date, message, trailer_text = record.split(_FIELD)
        pairs = (line.partition(":") for line in trailer_text.splitlines())
        trailers = {key.strip(): value.strip() for key, sep, value in pairs if sep}
        message = message.strip()
        summary = message.partition("\n")[0]
        commits.append(CommitInfo(sha, summary, message, name, email, datetime.fromisoformat(date), trailers))
    return commits


def compose_message(message: str, trailers: Mapping[str, str], path: Path) -> str:
    lines = []
    for key, value in trailers.items():
        if not _TRAILER_KEY.fullmatch(key):
            raise VersionControlError(f"cannot commit in {path}: trailer key {key!r} must be letters, digits and '-'")
        if "\n" in value or "\r" in value:
            raise VersionControlError(f"cannot commit in {path}: trailer {key!r} must be a single line")
        lines.append(f"{key}: {value.strip()}")
    return message.strip() + "\n\n" + "\n".join(lines) + "\n"


_GIT_SPACE = " \t\n\r"  # git's isspace()


def cleanup_message(message: str) -> str:
    """The message as ``git commit -m`` stores it (``--cleanup=whitespace``).

    Trailing whitespace is cut from every line, runs of empty lines become one,
    and leading and trailing empty lines go; every line ends with a newline.
    """
    lines: list[str] = []
    for line in message.split("\n"):
        line = line.rstrip(_GIT_SPACE)
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "".join(line + "\n" for line in lines)


def reflog_message(action: str, message: str) -> str:
    """The reflog message git writes for a commit: ``<action>: <subject>``, whitespace runs made one space."""
    subject = message.partition("\n")[0]
    return re.sub(r"[ \t\n\r]+", " ", f"{action}: {subject}").strip(_GIT_SPACE)


def blob_sha(data: bytes) -> str:
    """The sha git gives ``data`` stored as a blob, unfiltered (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def unified_diff(old: str | None, new: str, relpath: str) -> str:
    """A git-style unified diff; a file missing before is diffed against /dev/null."""
    before = re.findall(r"[^\n]*\n|[^\n]+", old or "")
    after = re.findall(r"[^\n]*\n|[^\n]+", new)
    fromfile = f"a/{relpath}" if old is not None else "/dev/null"
    lines = difflib.unified_diff(before, after, fromfile=fromfile, tofile=f"b/{relpath}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
