"""Protected files: what a model's patch may not change about how tests are collected or reported.

After the model's patch is applied, every protected path is compared with the
*reference tree* (``base_commit`` + ``test_patch``) and put back as it is there:
rewritten when the patch changed it, deleted when the patch added it. Protected:

- anywhere in the tree: ``conftest.py``, ``pytest.ini``, ``.pytest.ini``,
  ``pytest.toml``, ``.pytest.toml``, ``sitecustomize.py``, ``usercustomize.py``
  and every ``*.pth`` file;
- ``tox.ini`` and ``setup.cfg`` when their ``[pytest]`` / ``[tool:pytest]``
  sections differ, and ``pyproject.toml`` when its ``[tool.pytest...]`` tables
  differ (the whole file is restored then; other edits to these files are kept);
- every file ``test_patch`` touches, which is how ``test_patch`` is applied: its
  files take their reference content whatever the model's patch did to them (as
  SWE-bench's harness checks them out at ``base_commit`` and applies ``test_patch``);
  and every file that holds a FAIL_TO_PASS or PASS_TO_PASS test (``workspace``
  passes both as ``test_paths``).
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

__all__ = ["PROTECTED_NAMES", "SECTION_FILES", "RestoredFile", "is_protected", "restore_protected"]

PROTECTED_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "sitecustomize.py",
        "usercustomize.py",
    }
)
"""File names protected wherever they are."""
SECTION_FILES = frozenset({"tox.ini", "setup.cfg", "pyproject.toml"})
"""Files protected for their pytest configuration only."""
_INI_SECTIONS = ("pytest", "tool:pytest")


class RestoredFile(BaseModel):
    """A protected path the model's patch had changed, and what was done about it."""

    path: str
    action: Literal["restored", "removed"]
    """``restored``: rewritten with the reference content; ``removed``: the patch had added it."""
    reason: str


def is_protected(relpath: str) -> bool:
    """Whether a path is protected by its name alone (``test_patch`` files aside)."""
    name = relpath.rsplit("/", 1)[-1]
    return name in PROTECTED_NAMES or name.endswith(".pth") or name in SECTION_FILES


def _content(path: Path) -> bytes | None:
    """A file's bytes, a symlink's target (prefixed), or None when there is nothing."""
    if path.is_symlink():
        return b"symlink:" + os.readlink(path).encode("utf-8", "surrogateescape")
    if path.is_file():
        return path.read_bytes()
    return None


def _pytest_config(name: str, data: bytes) -> str:
    """The pytest-relevant part of a shared config file, as comparable text (a unique marker if unreadable)."""
    try:
        text = data.decode("utf-8")
        if name == "pyproject.toml":
            table = tomllib.loads(text).get("tool", {})
            return json.dumps(table.get("pytest") if isinstance(table, dict) else table, sort_keys=True, default=str)
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        parser.read_string(text)
        sections = {s: dict(parser.items(s)) for s in _INI_SECTIONS if parser.has_section(s)}
        return json.dumps(sections, sort_keys=True)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, configparser.Error) as exc:
        return f"<unreadable: {exc}>"


def _walk(root: Path) -> Iterable[str]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != ".git"]
        base = Path(directory).relative_to(root)
        for name in files + [d for d in subdirs if (Path(directory) / d).is_symlink()]:
            relpath = (base / name).as_posix()
            if relpath != ".git":
                yield relpath


def _write(path: Path, data: bytes) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if data.startswith(b"symlink:"):
        os.symlink(data[len(b"symlink:") :].decode("utf-8", "surrogateescape"), path)
    else:
        path.write_bytes(data)


def restore_protected(
    tree: Path, reference: Path, test_paths: Iterable[str], *, by_name: bool = True
) -> list[RestoredFile]:
    """Make every protected path of ``tree`` equal to ``reference``; return what changed, sorted by path.

    ``test_paths`` (the files of ``test_patch``) are always protected; ``by_name``
    adds the names and config sections listed in the module docstring.
    """
    candidates = set(test_paths)
    if by_name:
        candidates.update(p for p in _walk(tree) if is_protected(p))
        candidates.update(p for p in _walk(reference) if is_protected(p))
    tests = set(test_paths)
    restored: list[RestoredFile] = []
    for relpath in sorted(candidates):
        if relpath.startswith(".git/") or relpath == ".git":
            continue
        mine, theirs = _content(tree / relpath), _content(reference / relpath)
        if mine == theirs:
            continue
        name = relpath.rsplit("/", 1)[-1]
        if relpath in tests:
            reason = "a file of test_patch"
        elif name in SECTION_FILES:
            if mine is not None and theirs is not None and _pytest_config(name, mine) == _pytest_config(name, theirs):
                continue
            reason = "its pytest configuration changed"
        else:
            reason = "a file that controls test collection or start-up"
        if theirs is None:
            (tree / relpath).unlink()
            restored.append(RestoredFile(path=relpath, action="removed", reason=reason))
        else:
            _write(tree / relpath, theirs)
            restored.append(RestoredFile(path=relpath, action="restored", reason=reason))
    return restored
