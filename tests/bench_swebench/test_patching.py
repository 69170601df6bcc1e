"""Applying a model's patch with swebench's own fallback chain (``GIT_APPLY_CMDS``), on real git repositories.

With swebench 5 the chain is ``git apply --verbose``, ``git apply --verbose --3way``,
``git apply --verbose --reject``, ``patch --batch --forward --fuzz=5 -p1 -i``, then a
``git apply --check --reverse`` of what the last command left.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from debatecode.bench.swebench.patching import (
    METHOD_ALREADY_APPLIED,
    apply_commands,
    apply_with_fallbacks,
    patch_paths,
)

from .conftest import git

LINES = [f"line {n}\n" for n in range(1, 21)]


def _commit(repo: Path, lines: list[str], message: str, name: str = "f.txt") -> str:
    (repo / name).write_text("".join(lines))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _edit(lines: list[str], number: int, text: str) -> list[str]:
    changed = list(lines)
    changed[number - 1] = text
    return changed


def _status(repo: Path) -> str:
    return git(repo, "status", "--porcelain")


def _hunk(name: str, old: str, new: str, start: int) -> str:
    """A plain unified diff (no blob ids, so --3way cannot merge) replacing line ``start`` of ``name``."""
    before = [f"line {n}" for n in range(start - 2, start)]
    after = [f"line {n}" for n in range(start + 1, start + 3)]
    body = [f" {line}" for line in before] + [f"-{old}", f"+{new}"] + [f" {line}" for line in after]
    return f"--- a/{name}\n+++ b/{name}\n@@ -{start - 2},5 +{start - 2},5 @@\n" + "\n".join(body) + "\n"


GIT_APPLY, THREE_WAY, REJECT, PATCH_FUZZ = (
    "git apply --verbose",
    "git apply --verbose --3way",
    "git apply --verbose --reject",
    "patch --batch --forward --fuzz=5 -p1 -i",
)


def test_the_chain_is_swebenchs_own() -> None:
    from swebench.harness.run_evaluation import GIT_APPLY_CMDS

    assert apply_commands() == tuple(GIT_APPLY_CMDS) == (GIT_APPLY, THREE_WAY, REJECT, PATCH_FUZZ)


def test_a_clean_patch_applies_with_git_apply(repo: Path) -> None:
    base = _commit(repo, LINES, "base")
    _commit(repo, _edit(LINES, 10, "line ten\n"), "fix")
    patch = git(repo, "diff", base, "HEAD")
    git(repo, "checkout", "-q", base)
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == GIT_APPLY and not outcome.empty
    assert [a.method for a in outcome.attempts] == [GIT_APPLY]
    assert (repo / "f.txt").read_text().splitlines()[9] == "line ten"


def test_a_patch_made_on_a_nearby_commit_falls_back_to_three_way(repo: Path) -> None:
    base = _commit(repo, LINES, "base")
    nearby = _commit(repo, _edit(LINES, 8, "line eight, edited upstream\n"), "upstream edit in the context")
    _commit(repo, _edit(_edit(LINES, 8, "line eight, edited upstream\n"), 11, "line eleven fixed\n"), "fix")
    patch = git(repo, "diff", nearby, "HEAD")
    git(repo, "checkout", "-q", base)
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == THREE_WAY
    assert [(a.method, a.ok) for a in outcome.attempts] == [(GIT_APPLY, False), (THREE_WAY, True)]
    text = (repo / "f.txt").read_text().splitlines()
    assert text[10] == "line eleven fixed" and text[7] == "line 8", "the merge keeps the base's own line 8"
    assert "f.txt" in _status(repo) and "M " not in _status(repo)[:2], "--3way's staging is undone"


def test_a_patch_with_stale_context_only_applies_with_patch_fuzz(repo: Path) -> None:
    base = _commit(repo, LINES, "base")
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -9,5 +9,5 @@\n"
        " line 9 (stale context)\n line 10\n-line 11\n+line eleven fixed\n line 12\n line 13\n"
    )
    (repo.parent / "stale.diff").write_text(patch)
    strict = subprocess.run(
        ["patch", "--batch", "--dry-run", "--fuzz=0", "-p1", "-i", str(repo.parent / "stale.diff")],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    assert strict.returncode != 0, "without fuzz the hunk does not apply"
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == PATCH_FUZZ, outcome.attempts
    assert [(a.method, a.ok) for a in outcome.attempts] == [
        (GIT_APPLY, False),
        (THREE_WAY, False),
        (REJECT, False),
        (PATCH_FUZZ, True),
    ]
    assert (repo / "f.txt").read_text().splitlines()[10] == "line eleven fixed"
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert not list(repo.glob("*.orig")) and not list(repo.glob("*.rej")), "no backups or rejects in the tree"


def test_reject_applies_what_fits_but_is_never_credited_and_its_partial_result_is_dropped(repo: Path) -> None:
    _commit(repo, LINES, "base")
    _commit(repo, LINES, "second file", name="g.txt")
    fits = _hunk("f.txt", "line 10", "line ten", 10)
    nowhere = "--- a/g.txt\n+++ b/g.txt\n@@ -1,3 +1,3 @@\n nothing\n-like\n+this\n here\n"
    outcome = apply_with_fallbacks(repo, fits + nowhere)
    assert not outcome.applied and outcome.method is None
    reject = next(a for a in outcome.attempts if a.method == REJECT)
    assert not reject.ok, "git apply --reject exits non-zero when it rejects a hunk, as swebench sees it"
    assert "Applied patch f.txt cleanly" in reject.output and "Rejected hunk" in reject.output
    assert [a.method for a in outcome.attempts] == [GIT_APPLY, THREE_WAY, REJECT, PATCH_FUZZ, METHOD_ALREADY_APPLIED]
    assert _status(repo) == "", "the hunk --reject applied is not kept, nor any .rej file"
    assert (repo / "f.txt").read_text() == "".join(LINES)


def test_a_patch_partly_in_place_already_counts_as_applied_through_the_reverse_check(repo: Path) -> None:
    _commit(repo, _edit(LINES, 10, "line ten\n"), "base: the change to f.txt is already there")
    _commit(repo, LINES, "second file", name="g.txt")
    patch = _hunk("f.txt", "line 10", "line ten", 10) + _hunk("g.txt", "line 15", "line fifteen", 15)
    outcome = apply_with_fallbacks(repo, patch)
    assert outcome.applied and outcome.method == METHOD_ALREADY_APPLIED, outcome.attempts
    assert [(a.method, a.ok) for a in outcome.attempts] == [
        (GIT_APPLY, False),
        (THREE_WAY, False),
        (REJECT, False),
        (PATCH_FUZZ, False),
        (METHOD_ALREADY_APPLIED, True),
    ]
    assert "Reversed (or previously applied) patch detected" in outcome.attempts[3].output
    assert (repo / "g.txt").read_text().splitlines()[14] == "line fifteen", "patch applied what was missing"
    assert (repo / "f.txt").read_text().splitlines()[9] == "line ten"
    assert not list(repo.glob("*.rej")) and not list(repo.glob("*.orig"))


def test_a_patch_that_applies_nowhere_leaves_the_tree_clean(repo: Path) -> None:
    _commit(repo, LINES, "base")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n nothing\n-like\n+this\n here\n"
    outcome = apply_with_fallbacks(repo, patch)
    assert not outcome.applied and outcome.method is None and len(outcome.attempts) == 5
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
