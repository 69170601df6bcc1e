"""Identifiers that become file and folder names, checked before they touch the disk.

Instance ids, run ids, session ids and model names come from datasets,
predictions files, flags and API callers: untrusted text. Each one that names
a file or folder is checked twice:

1. ``check_name`` (one path component) or ``check_model_name`` (``/``-separated,
   mapped to one component by ``model_folder``) against a strict pattern, so
   ``..``, ``/tmp/x``, a NUL byte or an empty name is a ``UnsafeName`` error
   (a user error, exit 2) that names the identifier and the pattern;
2. ``path_under`` joins the checked parts to their root and refuses a result
   that resolves outside it (a symlink planted inside the root, say).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from debatecode.errors import UserError

__all__ = [
    "MODEL_NAME_PATTERN",
    "NAME_PATTERN",
    "PathOutsideRoot",
    "UnsafeName",
    "check_model_name",
    "check_name",
    "is_name",
    "model_folder",
    "path_under",
]

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
"""One file or folder name: a letter or digit, then letters, digits, ``.``, ``_`` or ``-``; 1 to 128 characters."""
MODEL_NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9._:+@=/-]{0,119}"
"""A model name (``openai/gpt-4o``, ``ollama/qwen2.5-coder:7b``); ``model_folder`` makes one folder name of it."""

_NAME = re.compile(NAME_PATTERN)
_MODEL_NAME = re.compile(MODEL_NAME_PATTERN)
_NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters"
_MODEL_RULE = "letters, digits and . _ : + @ = / -, starting with a letter, digit or '_', at most 120 characters"


class UnsafeName(UserError, ValueError):
    """An identifier that would name a file or folder does not match its pattern.

    ``what`` names the identifier (``instance_id``, ``--run-id``), ``value`` is what was given;
    ``reason`` is the message without ``what``. A ``ValueError`` too, so pydantic validators
    and callers that caught the older ``ValueError`` keep working.
    """

    def __init__(self, what: str, value: object, pattern: str, rule: str) -> None:
        self.what = what
        self.value = value
        self.pattern = pattern
        self.reason = f"{value!r} is not a plain folder name: it must match {pattern} ({rule})"
        super().__init__(f"{what} {self.reason}")


class PathOutsideRoot(UserError):
    """A path built from checked names resolves outside its root (through a symlink, say)."""

    def __init__(self, what: str, path: Path, root: Path) -> None:
        self.path = path
        self.root = root
        super().__init__(
            f"the {what} path {path} resolves outside {root}; remove the link or file that leads out of {root}"
        )


def check_name(value: object, what: str) -> str:
    """``value`` when it is a safe single file or folder name (``NAME_PATTERN``).

    Raises:
        UnsafeName: ``value`` is not a string or does not match (``..``, ``a/b``, ``""``, ``x\\0``).
    """
    if not is_name(value):
        raise UnsafeName(what, value, NAME_PATTERN, _NAME_RULE)
    assert isinstance(value, str)
    return value


def is_name(value: object) -> bool:
    """Whether ``check_name`` accepts ``value``."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def check_model_name(value: object, what: str = "model_name_or_path") -> str:
    """``value`` when it is a model name ``model_folder`` can turn into a safe folder name.

    Raises:
        UnsafeName: ``value`` is not a string or does not match ``MODEL_NAME_PATTERN``.
    """
    if not isinstance(value, str) or not _MODEL_NAME.fullmatch(value):
        raise UnsafeName(what, value, MODEL_NAME_PATTERN, _MODEL_RULE)
    return value


def model_folder(model: str, *, what: str = "model_name_or_path") -> str:
    """The folder name of a model, as SWE-bench names it: ``/`` becomes ``__`` (``openai/gpt-4o`` -> ``openai__gpt-4o``).

    Raises:
        UnsafeName: ``model`` does not match ``MODEL_NAME_PATTERN``.
    """
    return check_model_name(model, what).replace("/", "__")


def path_under(root: Path, *parts: str, what: str) -> Path:
    """``root / parts...``, refused when it resolves outside ``root``.

    Each part may hold ``/`` (an already checked relative path); the check is on
    the resolved result, so ``..`` and symlinks that lead out of ``root`` are
    both caught. The returned path is the plain join (not resolved).

    Raises:
        PathOutsideRoot: the joined path resolves outside ``root`` (or is ``root`` itself).
    """
    path = root.joinpath(*parts)
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real == real_root or not real.is_relative_to(real_root):
        raise PathOutsideRoot(what, path, root)
    return path
