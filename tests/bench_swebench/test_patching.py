"""Applying a model's patch with fallbacks: git apply, git apply --3way, patch --fuzz, on real git repositories."""

from __future__ import annotations

from pathlib import Path

from debatecode.bench.swebench.patching import apply_with_fallbacks, patch_paths

from .conftest import git

LINES = [f"line {n}\n" for n in range(1, 21)]


def _commit(repo: Path, lines: list[str], message: str) -> str:
    (repo / "f.txt").write_text("".join(lines))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _edit(lines: list[str], number: int, text: str) -> list[str]:
    changed = list(lines)
    changed[number - 1] = text
    return changed


def _status(repo: Path) -> str:
    return git(repo, "status", "--porcelain")


def test_a_clean_patch_applies_with_git_apply(repo: Path) -> None:
    base = _commit(repo, LINES, "base")
    _commit(repo, _edit(LINES, 10, "line ten\n"), "fix")
    patch = git(repo, "diff", base, "HEAD")
    git(repo, "checkout", "-q", base)
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == "git apply" and not outcome.empty
    assert (repo / "f.txt").read_text().splitlines()[9] == "line ten"


def test_a_patch_made_on_a_nearby_commit_falls_back_to_three_way(repo: Path) -> None:
    base = _commit(repo, LINES, "base")
    nearby = _commit(repo, _edit(LINES, 8, "line eight, edited upstream\n"), "upstream edit in the context")
    _commit(repo, _edit(_edit(LINES, 8, "line eight, edited upstream\n"), 11, "line eleven fixed\n"), "fix")
    patch = git(repo, "diff", nearby, "HEAD")
    git(repo, "checkout", "-q", base)
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == "git apply --3way"
    assert [a.ok for a in outcome.attempts] == [False, True]
    text = (repo / "f.txt").read_text().splitlines()
    assert text[10] == "line eleven fixed" and text[7] == "line 8", "the merge keeps the base's own line 8"
    assert "f.txt" in _status(repo) and "M " not in _status(repo)[:2], "--3way's staging is undone"


def test_a_patch_without_blob_ids_and_stale_context_falls_back_to_patch_fuzz(repo: Path) -> None:
    base = _commit(repo, LINES, "base")
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -9,5 +9,5 @@\n"
        " line 9 (stale context)\n line 10\n-line 11\n+line eleven fixed\n line 12\n line 13\n"
    )
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == "patch --fuzz", outcome.attempts
    assert [a.method for a in outcome.attempts] == ["git apply", "git apply --3way", "patch --fuzz"]
    assert (repo / "f.txt").read_text().splitlines()[10] == "line eleven fixed"
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert not list(repo.glob("*.orig")) and not list(repo.glob("*.rej"))


def test_a_patch_that_applies_nowhere_leaves_the_tree_clean(repo: Path) -> None:
    _commit(repo, LINES, "base")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n nothing\n-like\n+this\n here\n"
    outcome = apply_with_fallbacks(repo, patch)
    assert not outcome.applied and outcome.method is None and len(outcome.attempts) == 3
    assert not any(attempt.ok for attempt in outcome.attempts)
    assert _status(repo) == "" and (repo / "f.txt").read_text() == "".join(LINES)


def test_an_empty_patch_is_recorded_as_empty(repo: Path) -> None:
    _commit(repo, LINES, "base")
    for patch in (None, "", "  \n"):
        outcome = apply_with_fallbacks(repo, patch)
        assert outcome.empty and not outcome.applied and outcome.attempts == []


def test_a_new_file_patch_without_trailing_newline_applies(repo: Path) -> None:
    _commit(repo, LINES, "base")
    patch = "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1"
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and (repo / "new.py").read_text() == "x = 1\n"


def test_patch_paths_reads_git_and_plain_headers_but_not_removed_dash_lines() -> None:
    patch = (
        "diff --git a/src/x.py b/src/y.py\nrename from src/x.py\nrename to src/y.py\n"
        "--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n"
        "--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+import pytest\n"
    )
    assert patch_paths(patch) == {"src/x.py", "src/y.py", "tests/test_a.py", "conftest.py"}
