"""Rebuild the local SWE-bench instance set: repositories, bundles, instances and forged predictions.

    python benchmarks/swebench-local/make_instances.py [--out benchmarks/swebench-local]

Deterministic: every commit has a fixed author, committer and date, so the
commit hashes (``base_commit``, ``environment_setup_commit``) come out the same
on every machine and git version. For each instance it

1. builds the repository from ``_sources.py`` and writes ``repos/<owner>__<name>.bundle``;
2. takes the gold ``patch`` (non-test files) and the ``test_patch`` (files under
   ``tests/``) as ``git diff base fix``;
3. runs the test files of ``test_patch`` with this interpreter's pytest, at
   base + test_patch and at the fix: FAIL_TO_PASS are the tests that fail before
   and pass after, PASS_TO_PASS those that pass at both;
4. writes ``instances.jsonl`` (FAIL_TO_PASS / PASS_TO_PASS as JSON strings, as
   SWE-bench ships them) and ``predictions-forged.jsonl`` from ``_attacks.py``.

It needs git, pytest and python-dateutil (for the daterange tests) on the host.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _attacks import ATTACKS  # noqa: E402
from _sources import REPOS, LocalRepo  # noqa: E402

AUTHOR = ("debatecode bench", "bench@debatecode.local")
RESULT_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL) (\S+)")


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git with a fixed, user-independent configuration and return its stdout."""
    base = ["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    completed = subprocess.run(
        [*base, *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}:\n{completed.stderr}")
    return completed.stdout


def build_repo(spec: LocalRepo, where: Path) -> list[str]:
    """Create the repository in ``where`` and return its commit hashes, oldest first."""
    where.mkdir(parents=True)
    git(where, "init", "-q")
    hashes: list[str] = []
    for commit in spec.commits:
        for rel, content in commit.files.items():
            path = where / rel
            if content is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        git(where, "add", "-A")
        env = {
            "GIT_AUTHOR_NAME": AUTHOR[0],
            "GIT_AUTHOR_EMAIL": AUTHOR[1],
            "GIT_AUTHOR_DATE": commit.date,
            "GIT_COMMITTER_NAME": AUTHOR[0],
            "GIT_COMMITTER_EMAIL": AUTHOR[1],
            "GIT_COMMITTER_DATE": commit.date,
        }
        git(where, "commit", "-q", "--no-verify", "-m", commit.message, env=env)
        hashes.append(git(where, "rev-parse", "HEAD").strip())
    return hashes


def run_tests(repo: Path, commit: str, test_patch: str | None, files: list[str]) -> dict[str, str]:
    """Statuses of the tests in ``files`` at ``commit`` (+ ``test_patch``), from pytest's -rA summary."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        git(repo, "worktree", "add", "-q", "--detach", str(tree), commit)
        try:
            if test_patch:
                (Path(tmp) / "test.patch").write_text(test_patch)
                git(tree, "apply", str(Path(tmp) / "test.patch"))
            completed = subprocess.run(
                [sys.executable, "-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider", *files],
                cwd=tree,
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            git(repo, "worktree", "remove", "--force", str(tree))
    statuses: dict[str, str] = {}
    for line in completed.stdout.splitlines():
        match = RESULT_LINE.match(line)
        if match:
            statuses[match.group(2)] = match.group(1)
    if not statuses:
        raise SystemExit(f"no test results at {commit}:\n{completed.stdout}\n{completed.stderr}")
    return statuses


def diff(repo: Path, base: str, fix: str, *, tests: bool) -> str:
    """``git diff base fix`` restricted to test files (``tests/``) or to everything else."""
    pathspec = ["--", "tests"] if tests else ["--", ".", ":(exclude)tests"]
    return git(repo, "diff", "--no-color", "--no-ext-diff", base, fix, *pathspec)


def files_of(repo: Path, commit: str) -> dict[str, str]:
    """Every file of ``commit``, as text."""
    names = git(repo, "ls-tree", "-r", "--name-only", commit).split()
    return {name: git(repo, "show", f"{commit}:{name}") for name in names}


def attack_patch(repo: Path, base: str, changes: dict[str, str | None]) -> str:
    """A unified diff that turns ``base`` into ``base`` with ``changes`` applied."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        git(repo, "worktree", "add", "-q", "--detach", str(tree), base)
        try:
            for rel, content in changes.items():
                path = tree / rel
                if content is None:
                    path.unlink()
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(content)
            git(tree, "add", "-A")
            return git(tree, "diff", "--cached", "--no-color", "--no-ext-diff", base)
        finally:
            git(repo, "worktree", "remove", "--force", str(tree))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="Where to write repos/, instances.jsonl, ...")
    args = parser.parse_args()
    out: Path = args.out
    (out / "repos").mkdir(parents=True, exist_ok=True)
    instances: list[dict[str, str]] = []
    bases: dict[str, tuple[Path, str, list[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="swebench-local-") as tmp:
        for spec in REPOS:
            slug = spec.repo.replace("/", "__")
            repo = Path(tmp) / slug
            hashes = build_repo(spec, repo)
            bundle = out / "repos" / f"{slug}.bundle"
            bundle.unlink(missing_ok=True)
            git(repo, "bundle", "create", "-q", str(bundle), "main")
            for item in spec.instances:
                base, fix = hashes[item.base], hashes[item.fix]
                test_patch = diff(repo, base, fix, tests=True)
                test_files = sorted(set(re.findall(r"^\+\+\+ b/(\S+)$", test_patch, flags=re.M)))
                before = run_tests(repo, base, test_patch, test_files)
                after = run_tests(repo, fix, None, test_files)
                fail_to_pass = sorted(t for t, s in after.items() if s == "PASSED" and before.get(t) != "PASSED")
                pass_to_pass = sorted(t for t, s in after.items() if s == "PASSED" and before.get(t) == "PASSED")
                instance_id = f"{slug}-{item.number}"
                instances.append(
                    {
                        "instance_id": instance_id,
                        "repo": spec.repo,
                        "base_commit": base,
                        "problem_statement": item.problem_statement,
                        "hints_text": "",
                        "created_at": item.created_at,
                        "version": spec.version,
                        "environment_setup_commit": hashes[0],
                        "patch": diff(repo, base, fix, tests=False),
                        "test_patch": test_patch,
                        "FAIL_TO_PASS": json.dumps(fail_to_pass),
                        "PASS_TO_PASS": json.dumps(pass_to_pass),
                    }
                )
                bases[instance_id] = (repo, base, fail_to_pass + pass_to_pass)
                print(
                    f"{instance_id}: base {base[:12]}, {len(fail_to_pass)} FAIL_TO_PASS, {len(pass_to_pass)} PASS_TO_PASS"
                )
        forged = []
        for attack in ATTACKS:
            repo, base, tests = bases[attack.instance_id]
            patch = attack_patch(repo, base, attack.files(files_of(repo, base), tests))
            forged.append(
                {"instance_id": attack.instance_id, "model_name_or_path": f"forged/{attack.name}", "model_patch": patch}
            )
    (out / "instances.jsonl").write_text("".join(json.dumps(item) + "\n" for item in instances))
    (out / "predictions-forged.jsonl").write_text("".join(json.dumps(item) + "\n" for item in forged))
    print(f"wrote {len(instances)} instances and {len(forged)} forged predictions to {out}")


if __name__ == "__main__":
    main()
