"""Bounded reads of the files users hand to debatecode.

Every file the CLI or the library reads on a user's say-so (a task, a config
file, a SWE-bench dataset or predictions file, an audit trail to replay, a
``scripted:`` model script, a question or context file) is read through
``read_input_file``, which:

- opens it without blocking (``O_NONBLOCK``), so a FIFO never hangs the process;
- refuses anything but a regular file (a directory, ``/dev/zero``, a FIFO, a socket),
  judged on the opened file, so the check and the read see the same file;
- refuses a file larger than its cap before reading a byte (a sparse file of
  any size costs nothing), and never reads more than the cap plus one byte
  (a file that grows while it is read is refused too).

Callers translate ``InputFileError`` into their own error (``TaskError``,
``ConfigError``...), keeping its ``reason`` and naming their fix.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from debatecode.errors import UserError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DATASET_BYTES",
    "MAX_SCRIPT_BYTES",
    "MAX_SOURCE_BYTES",
    "MAX_TRAIL_BYTES",
    "InputFileError",
    "format_size",
    "read_input_file",
]

MAX_CONFIG_BYTES = 1024 * 1024
"""Largest ``debatecode.toml`` (or ``--config`` file, or ``repos.toml``) read."""
MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""Largest ``scripted:<file.yaml>`` model script read."""
MAX_SOURCE_BYTES = 4 * 1024 * 1024
"""Largest source file ``sandbox exec`` sends into a sandbox."""
MAX_DATASET_BYTES = 512 * 1024 * 1024
"""Largest benchmark dataset or predictions file read (SWE-bench's full test set is about 100 MiB as JSON)."""
MAX_TRAIL_BYTES = 256 * 1024 * 1024
"""Largest audit trail ``sessions replay`` reads."""

Problem = Literal["missing", "not_a_file", "too_large", "unreadable"]

_CHUNK = 1024 * 1024


class InputFileError(UserError):
    """An input file is missing, not a regular file, too large or unreadable.

    ``problem`` says which; ``reason`` is the sentence without the path, for callers
    that wrap it in their own error.
    """

    def __init__(self, path: Path, problem: Problem, reason: str) -> None:
        self.path = path
        self.problem: Problem = problem
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def format_size(size: int) -> str:
    """``size`` bytes as ``N MiB``, ``N KiB`` or ``N bytes``, whichever is exact."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_input_file(path: Path | str, *, max_bytes: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    ``what`` names the file in messages (``"task file"``, ``"dataset file"``).

    Raises:
        InputFileError: the file does not exist, is not a regular file (directory,
            device, FIFO, socket), is larger than ``max_bytes``, or cannot be read.
        ValueError: ``max_bytes`` is negative.
    """
    if max_bytes < 0:
        raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
    file = Path(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(file, flags)
    except FileNotFoundError as exc:
        raise InputFileError(file, "missing", f"no such {what}") from exc
    except IsADirectoryError as exc:
        raise InputFileError(file, "not_a_file", f"the {what} is a directory, not a file") from exc
    except OSError as exc:
        raise InputFileError(file, "unreadable", f"cannot read the {what}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(
                file, "not_a_file", f"the {what} is {_kind(info.st_mode)}, not a regular file; give the path of a file"
            )
        too_large = f"the {what} is larger than {format_size(max_bytes)}"
        if info.st_size > max_bytes:
            raise InputFileError(file, "too_large", too_large)
        chunks: list[bytes] = []
        left = max_bytes + 1  # one byte more than allowed: a file that grew since fstat is refused, not cut
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InputFileError(file, "unreadable", f"cannot read the {what}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise InputFileError(file, "too_large", too_large)
    return data
