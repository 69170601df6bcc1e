"""Reading edits out of replies, applying them to a worktree, and diffing the result."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.bench_swebench.solve_fixtures import GOOD_EDIT, OPS, git, make_repo

from debatecode.bench.swebench.edits import (
    DiffEdit,
    EditApplyError,
    EditError,
    NoEditError,
    SearchReplaceEdit,
    apply_edits,
    parse_edits,
    worktree_diff,
)
from debatecode.errors import RunError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    repo, _ = make_repo(tmp_path)
    return repo


def test_search_replace_in_a_fence_with_its_path_line(tree: Path) -> None:
    edits = parse_edits(GOOD_EDIT)
    assert edits == [
        SearchReplaceEdit(
            path="calc/ops.py",
            search="    if value < low:\n        return low\n    return value\n",
            replace="    if value < low:\n        return low\n    if value > high:\n        return high\n    return value\n",
        )
    ]
    apply_edits(tree, edits)
    diff = worktree_diff(tree)
    assert diff.startswith("diff --git a/calc/ops.py b/calc/ops.py")
    assert "+    if value > high:" in diff
    # The diff applies to a clean tree: it is a usable model_patch.
    git(tree, "checkout", "--", ".")
    (tree.parent / "p.diff").write_text(diff)
    git(tree, "apply", "--check", str(tree.parent / "p.diff"))


def test_blocks_without_a_path_line_edit_the_previous_file(tree: Path) -> None:
    reply = (
        "**calc/ops.py**\n<<<<<<< SEARCH\n    return value * 2\n=======\n    return 2 * value\n>>>>>>> REPLACE\n"
        "\n<<<<<<< SEARCH\n        return low\n=======\n        return int(low)\n>>>>>>> REPLACE\n"
    )
    edits = parse_edits(reply)
    assert [edit.path for edit in edits if isinstance(edit, SearchReplaceEdit)] == ["calc/ops.py", "calc/ops.py"]
    apply_edits(tree, edits)
    text = (tree / "calc/ops.py").read_text()
    assert "return 2 * value" in text and "return int(low)" in text


def test_a_path_quoted_in_prose(tree: Path) -> None:
    reply = "The change to `calc/ops.py`:\n<<<<<<< SEARCH\n    return value * 2\n=======\n    return 2 * value\n>>>>>>> REPLACE\n"
    apply_edits(tree, parse_edits(reply))
    assert "return 2 * value" in (tree / "calc/ops.py").read_text()


def test_a_block_without_any_path_is_no_edit() -> None:
    with pytest.raises(NoEditError, match="no file path"):
        parse_edits("Here it is:\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n")


def test_search_ignores_trailing_whitespace_then_indentation(tree: Path) -> None:
    reply = "calc/ops.py\n<<<<<<< SEARCH\nreturn value * 2   \n=======\n    return value + value\n>>>>>>> REPLACE\n"
    apply_edits(tree, parse_edits(reply))
    assert "return value + value" in (tree / "calc/ops.py").read_text()


def test_empty_search_creates_a_file(tree: Path) -> None:
    reply = "calc/extra.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n"
    apply_edits(tree, parse_edits(reply))
    assert (tree / "calc/extra.py").read_text() == "X = 1\n"
    assert "+++ b/calc/extra.py" in worktree_diff(tree)


def test_fenced_unified_diff_with_wrong_hunk_counts(tree: Path) -> None:
    reply = (
        "Here is the patch:\n```diff\n--- a/calc/ops.py\n+++ b/calc/ops.py\n"
        "@@ -12,3 +12,3 @@ def double(value: int) -> int:\n"
        '     """Twice ``value``."""\n-    return value * 2\n+    return value << 1\n```\nDone.\n'
    )
    edits = parse_edits(reply)
    assert len(edits) == 1 and isinstance(edits[0], DiffEdit)
    apply_edits(tree, edits)
    assert "return value << 1" in (tree / "calc/ops.py").read_text()


def test_bare_git_diff_outside_a_fence(tree: Path) -> None:
    reply = (
        "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,1 +1,1 @@\n"
        '-"""Arithmetic helpers."""\n+"""Arithmetic helpers, fixed."""\n\nThat is all.\n'
    )
    apply_edits(tree, parse_edits(reply))
    assert (tree / "calc/ops.py").read_text().startswith('"""Arithmetic helpers, fixed."""')


def test_diff_with_drifted_context_falls_back_to_fuzz(tree: Path) -> None:
    reply = (
        "```diff\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -40,4 +40,4 @@\n"
        ' def double(value: int) -> int:\n     """Twice the value."""\n-    return value * 2\n+    return value * 2 + 0\n\n```\n'
    )
    apply_edits(tree, parse_edits(reply))
    assert "return value * 2 + 0" in (tree / "calc/ops.py").read_text()


@pytest.mark.parametrize(
    "reply",
    ["I think the bug is in clamp.", "```python\ndef clamp(v, lo, hi):\n    return v\n```", ""],
)
def test_a_reply_without_edits_is_a_typed_error(reply: str) -> None:
    with pytest.raises(NoEditError, match="no usable edit") as caught:
        parse_edits(reply)
    assert isinstance(caught.value, EditError) and isinstance(caught.value, RunError)


def test_an_unclosed_block_is_no_edit() -> None:
    with pytest.raises(NoEditError, match="not closed"):
        parse_edits("calc/ops.py\n<<<<<<< SEARCH\nreturn value\n=======\nreturn 1\n")


def test_search_text_not_in_the_file(tree: Path) -> None:
    reply = "calc/ops.py\n<<<<<<< SEARCH\n    return nothing\n=======\n    return 1\n>>>>>>> REPLACE\n"
    with pytest.raises(EditApplyError, match="is not in the file") as caught:
        apply_edits(tree, parse_edits(reply))
    assert caught.value.path == "calc/ops.py"
    assert (tree / "calc/ops.py").read_text() == OPS


def test_a_diff_that_does_not_apply(tree: Path) -> None:
    reply = "```diff\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,2 +1,2 @@\n-no such line\n-nor this\n+x\n+y\n```\n"
    with pytest.raises(EditApplyError, match=r"calc/ops\.py"):
        apply_edits(tree, parse_edits(reply))
    assert (tree / "calc/ops.py").read_text() == OPS


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd.py", ".git/config.py", "calc/../../x.py"])
def test_unsafe_paths_are_refused(tree: Path, path: str) -> None:
    reply = f"{path}\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n"
    with pytest.raises(EditApplyError, match=r"relative|\.git"):
        apply_edits(tree, parse_edits(reply))
    assert not (tree.parent / "outside.py").exists()


def test_unsafe_diff_paths_are_refused(tree: Path) -> None:
    reply = "```diff\n--- /dev/null\n+++ b/../escape.py\n@@ -0,0 +1 @@\n+X = 1\n```\n"
    with pytest.raises(EditApplyError):
        apply_edits(tree, parse_edits(reply))
    assert not (tree.parent / "escape.py").exists()


def test_worktree_diff_leaves_ignored_files_out(tree: Path) -> None:
    (tree / "calc/__pycache__").mkdir()
    (tree / "calc/__pycache__/ops.cpython-311.pyc").write_bytes(b"\0junk")
    assert worktree_diff(tree) == ""
