"""Model edits: read them out of a reply, apply them to a worktree, and diff the result.

Two edit formats are accepted, in any mix and order within one reply:

- **unified diffs**, fenced (```` ```diff ```` or ```` ```patch ````) or bare
  (``diff --git`` / ``--- a/x`` + ``+++ b/x`` headers); hunk line counts may be
  wrong (``git apply --recount``), and drifted context falls back to
  ``patch --fuzz``;
- **SEARCH/REPLACE blocks**: a line with the file's path, then
  ``<<<<<<< SEARCH``, the exact current text, ``=======``, the new text and
  ``>>>>>>> REPLACE``. A block without its own path line edits the previous
  block's file; an empty SEARCH creates the file (or appends to it). SEARCH text
  is matched exactly, else line by line ignoring trailing whitespace, else
  ignoring indentation; the first match is replaced.

Paths are repository-relative: absolute paths, ``..`` and ``.git/`` are refused.
``worktree_diff`` turns the edited tree into the ``model_patch``.

::

    RunError
    └── EditError           a reply's edits cannot be used (the candidate is dropped or retried)
        ├── NoEditError     the reply holds no edit in either format
        └── EditApplyError  an edit does not apply (names the file and why)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from debatecode.bench.swebench._git import git, git_ok
from debatecode.errors import RunError

__all__ = [
    "DiffEdit",
    "Edit",
    "EditApplyError",
    "EditError",
    "NoEditError",
    "SearchReplaceEdit",
    "apply_edits",
    "parse_edits",
    "worktree_diff",
]

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+.-]*)[^\n]*$")
_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_DIFF_START = re.compile(r"^(diff --git |--- (a/|/dev/null|\S))")
_HUNK = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
_DIFF_LINE_STARTS = (" ", "+", "-", "@", "\\", "diff ", "index ", "new ", "old ", "deleted ", "similarity ", "rename ")
_PATH_LIKE = re.compile(r"^[\w./\\-]+$")
_QUOTED_PATH = re.compile(r"`([\w./-]+\.\w+)`")
_PATH_CLEAN = re.compile(r"^(?:#+\s*|[-*]\s+|(?:file(?:name)?|path)\s*:\s*)", re.I)


class EditError(RunError):
    """A reply's edits cannot be used; the pipeline drops or retries the candidate."""


class NoEditError(EditError):
    """The reply holds no unified diff and no SEARCH/REPLACE block."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "the reply holds no usable edit: expected a ```diff unified diff or a SEARCH/REPLACE block"
            + (f" ({detail})" if detail else "")
        )


class EditApplyError(EditError):
    """An edit does not apply to the tree."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"the edit of {path!r} does not apply: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class SearchReplaceEdit:
    """Replace ``search`` (empty: create or append) by ``replace`` in ``path``."""

    path: str
    search: str
    replace: str


@dataclass(frozen=True)
class DiffEdit:
    """A unified diff (one or more files)."""

    text: str


Edit = SearchReplaceEdit | DiffEdit


def _clean_path(line: str) -> str | None:
    """The file path a line names: the whole line (decorations stripped), else a quoted path in prose."""
    candidate = _PATH_CLEAN.sub("", line.strip()).strip().strip("`*'\":").strip()
    if _PATH_LIKE.match(candidate) and ("." in candidate or "/" in candidate):
        return candidate
    quoted = _QUOTED_PATH.findall(line)
    return quoted[-1] if quoted else None


def _safe_path(path: str) -> str:
    """``path`` as a clean repository-relative POSIX path.

    Raises:
        EditApplyError: absolute, escaping the repository, or inside ``.git``.
    """
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise EditApplyError(path, "paths must be relative to the repository root, without '..'")
    if pure.parts[0] == ".git":
        raise EditApplyError(path, "the .git directory cannot be edited")
    return str(pure)


def _search_replace_blocks(lines: list[str]) -> tuple[list[SearchReplaceEdit], set[int]]:
    edits: list[SearchReplaceEdit] = []
    used: set[int] = set()
    path: str | None = None
    index = 0
    while index < len(lines):
        if not _SEARCH.match(lines[index]):
            index += 1
            continue
        for back in range(index - 1, max(-1, index - 4), -1):
            text = lines[back].strip()
            if not text or _FENCE.match(text):
                continue
            found = _clean_path(text)
            if found is not None and not _REPLACE.match(text):
                path = found
            break
        divider = next((j for j in range(index + 1, len(lines)) if _DIVIDER.match(lines[j])), None)
        end = next((j for j in range(divider + 1, len(lines)) if _REPLACE.match(lines[j])), None) if divider else None
        if divider is None or end is None:
            raise NoEditError(f"a SEARCH block at line {index + 1} is not closed by ======= and >>>>>>> REPLACE")
        if path is None:
            raise NoEditError(f"the SEARCH block at line {index + 1} has no file path line before it")
        search = "".join(line + "\n" for line in lines[index + 1 : divider])
        replace = "".join(line + "\n" for line in lines[divider + 1 : end])
        edits.append(SearchReplaceEdit(path=path, search=search, replace=replace))
        used.update(range(index, end + 1))
        index = end + 1
    return edits, used


def _diff_chunks(lines: list[str], skip: set[int]) -> list[str]:
    """Unified diffs: fenced diff/patch blocks, else bare diffs outside SEARCH/REPLACE blocks."""
    chunks: list[str] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence and index not in skip:
            close = next(
                (j for j in range(index + 1, len(lines)) if lines[j].strip().startswith(fence.group(1))), len(lines)
            )
            body = lines[index + 1 : close]
            is_diff = fence.group(2).lower() in ("diff", "patch", "udiff") or (
                bool(body) and _DIFF_START.match(body[0]) is not None
            )
            if is_diff and any(_HUNK.match(line) for line in body) and not set(range(index, close)) & skip:
                chunks.append("".join(line + "\n" for line in body))
                skip = skip | set(range(index, close + 1))
            index = close + 1
            continue
        index += 1
    # Bare diffs: a header followed by hunks, outside everything taken already.
    index = 0
    while index < len(lines):
        line = lines[index]
        header = index not in skip and (
            line.startswith("diff --git ")
            or (line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "))
        )
        if not header:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and end not in skip and not _FENCE.match(lines[end]):
            if lines[end] and not lines[end].startswith(_DIFF_LINE_STARTS):
                break
            end += 1
        body = lines[index:end]
        if any(_HUNK.match(item) for item in body):
            chunks.append("".join(item + "\n" for item in body))
        index = end
    return chunks


def parse_edits(reply: str) -> list[Edit]:
    """Every edit in ``reply``: SEARCH/REPLACE blocks first, then unified diffs.

    Raises:
        NoEditError: the reply holds no edit, or a SEARCH block is malformed.
    """
    lines = reply.replace("\r\n", "\n").split("\n")
    blocks, used = _search_replace_blocks(lines)
    diffs = [DiffEdit(text) for text in _diff_chunks(lines, used)]
    edits: list[Edit] = [*blocks, *diffs]
    if not edits:
        raise NoEditError()
    return edits


def _find(text: str, search: str) -> tuple[int, int] | None:
    """Where ``search`` occurs in ``text``: exactly, else ignoring trailing whitespace, else indentation."""
    at = text.find(search)
    if at >= 0:
        return at, at + len(search)
    lines = text.splitlines(keepends=True)
    wanted = search.splitlines()
    for normalise in (str.rstrip, str.strip):
        target = [normalise(line) for line in wanted]
        while target and not target[-1]:
            target.pop()
        if not target:
            return None
        for start in range(len(lines) - len(target) + 1):
            if all(normalise(lines[start + k]) == target[k] for k in range(len(target))):
                begin = sum(len(line) for line in lines[:start])
                return begin, begin + sum(len(line) for line in lines[start : start + len(target)])
    return None


def _apply_search_replace(tree: Path, edit: SearchReplaceEdit) -> None:
    relpath = _safe_path(edit.path)
    path = tree / relpath
    if path.is_symlink():
        raise EditApplyError(edit.path, "symbolic links are not edited")
    if not path.exists():
        if edit.search.strip():
            raise EditApplyError(edit.path, "no such file (use an empty SEARCH section to create one)")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit.replace, encoding="utf-8")
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EditApplyError(edit.path, f"cannot read it as UTF-8 text: {exc}") from exc
    if not edit.search.strip():
        path.write_text(text + ("" if text.endswith("\n") or not text else "\n") + edit.replace, encoding="utf-8")
        return
    span = _find(text, edit.search)
    if span is None:
        first = edit.search.strip().splitlines()[0][:80]
        raise EditApplyError(edit.path, f"the SEARCH text (starting {first!r}) is not in the file")
    path.write_text(text[: span[0]] + edit.replace + text[span[1] :], encoding="utf-8")


def _apply_diff(tree: Path, edit: DiffEdit) -> None:
    from debatecode.bench.swebench.patching import patch_paths

    for relpath in patch_paths(edit.text):
        _safe_path(relpath)
    with tempfile.TemporaryDirectory(prefix="debatecode-edit-") as tmp:
        patch_file = Path(tmp) / "edit.patch"
        patch_file.write_text(edit.text, encoding="utf-8")
        ok, output = git_ok("apply", "--recount", "--whitespace=nowarn", str(patch_file), cwd=tree)
        if ok:
            return
        executable = shutil.which("patch")
        if executable is not None:
            argv = [executable, "--batch", "--forward", "--fuzz=3", "-p1", "--no-backup-if-mismatch", "-r", "-"]
            for dry_run in (True, False):
                completed = subprocess.run(
                    [*argv, *(["--dry-run"] if dry_run else []), "-i", str(patch_file)],
                    cwd=tree,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    check=False,
                )
                if completed.returncode != 0:
                    break
            else:
                return
        paths = ", ".join(sorted(patch_paths(edit.text))) or "the diff"
        raise EditApplyError(paths, output.strip()[-400:] or "git apply refused it")


def apply_edits(tree: Path, edits: list[Edit]) -> None:
    """Apply ``edits`` in order to the worktree ``tree``.

    Raises:
        EditApplyError: an edit does not apply or names an unsafe path (edits before it stay applied).
        VersionControlError: git is missing or timed out.
    """
    for edit in edits:
        if isinstance(edit, SearchReplaceEdit):
            _apply_search_replace(tree, edit)
        else:
            _apply_diff(tree, edit)


def worktree_diff(tree: Path) -> str:
    """The worktree's changes against ``HEAD`` as a unified diff (new files included, ignored ones not).

    Raises:
        VersionControlError: git failed.
    """
    git("add", "--all", ".", cwd=tree)
    try:
        diff = git("diff", "--cached", "--no-color", "--no-ext-diff", "--no-renames", "--binary", "HEAD", cwd=tree)
    finally:
        git_ok("reset", "--quiet", cwd=tree)
    return diff.decode("utf-8", "surrogateescape")
