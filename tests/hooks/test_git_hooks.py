"""Git hooks for teams: `debatecode hook install`, then real `git commit` / `git push` runs through the hook."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.cli.helpers import REPO, run_cli

EVIL = "def ask():\n    return eval(input())\n"
CLEAN = '"""Adds."""\n\n\ndef add(a: int, b: int) -> int:\n    """Return a + b."""\n    return a + b\n'


@pytest.fixture
def git_env(tmp_path: Path) -> dict[str, str]:
    """An environment with an empty HOME (no user git config) and a fixed identity."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DEBATECODE_"))}
    env |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    return env


@pytest.fixture
def project(tmp_path: Path, git_env: dict[str, str]) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "--initial-branch=main", str(path)], check=True, env=git_env)
    return path


def git(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def commits(repo: Path, env: dict[str, str]) -> list[str]:
    result = git(repo, env, "log", "--format=%s")
    return result.stdout.split("\n")[:-1] if result.returncode == 0 else []


def test_installed_pre_commit_hook_blocks_eval_input_then_allows_a_clean_file(
    project: Path, git_env: dict[str, str]
) -> None:
    installed = run_cli("hook", "install", cwd=project, env=git_env)
    assert installed.returncode == 0, installed.stderr
    hook = project / ".git" / "hooks" / "pre-commit"
    assert hook.is_file() and os.access(hook, os.X_OK)
    (project / "ask.py").write_text(EVIL)
    git(project, git_env, "add", "ask.py")
    blocked = git(project, git_env, "commit", "-m", "add ask")
    assert blocked.returncode != 0
    output = blocked.stdout + blocked.stderr
    assert "B307" in output and "ask.py:2" in output and "blocked" in output
    assert commits(project, git_env) == []

    git(project, git_env, "rm", "-q", "--cached", "ask.py")
    (project / "ask.py").unlink()
    (project / "add.py").write_text(CLEAN)
    git(project, git_env, "add", "add.py")
    allowed = git(project, git_env, "commit", "-m", "add add")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "nothing blocking" in allowed.stdout + allowed.stderr
    assert commits(project, git_env) == ["add add"]


def test_the_staged_content_is_checked_not_the_working_copy(project: Path, git_env: dict[str, str]) -> None:
    assert run_cli("hook", "install", "--pre-commit", cwd=project, env=git_env).returncode == 0
    (project / "ask.py").write_text(EVIL)
    git(project, git_env, "add", "ask.py")
    (project / "ask.py").write_text(CLEAN)  # fixed on disk, but not staged
    assert git(project, git_env, "commit", "-m", "sneaky").returncode != 0
    git(project, git_env, "add", "ask.py")
    assert git(project, git_env, "commit", "-m", "fixed").returncode == 0


def test_nosec_is_honoured_in_a_teams_repository_by_default(project: Path, git_env: dict[str, str]) -> None:
    (project / "calc.py").write_text("def calc(text):\n    return eval(text)  # nosec B307 - trusted input\n")
    git(project, git_env, "add", "calc.py")
    result = run_cli("hook", "run", "--staged", cwd=project, env=git_env)
    assert result.returncode == 0, result.stdout
    assert "nothing blocking" in result.stdout


def test_a_foreign_hook_is_kept_unless_forced_and_then_backed_up(project: Path, git_env: dict[str, str]) -> None:
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho team hook\n")
    refused = run_cli("hook", "install", cwd=project, env=git_env)
    assert refused.returncode == 2
    assert "already exists" in refused.stderr and "--force" in refused.stderr
    assert hook.read_text() == "#!/bin/sh\necho team hook\n"
    forced = run_cli("hook", "install", "--force", cwd=project, env=git_env)
    assert forced.returncode == 0, forced.stderr
    backup = project / ".git" / "hooks" / "pre-commit.debatecode-backup"
    assert backup.read_text() == "#!/bin/sh\necho team hook\n"
    assert str(backup) in forced.stdout
    again = run_cli("hook", "install", cwd=project, env=git_env)  # our own hook is replaced quietly
    assert again.returncode == 0 and "moved" not in again.stdout


def test_install_follows_core_hooks_path_and_repo_option(
    project: Path, git_env: dict[str, str], tmp_path: Path
) -> None:
    git(project, git_env, "config", "core.hooksPath", ".githooks")
    result = run_cli("hook", "install", "--pre-push", "--repo", str(project), cwd=tmp_path, env=git_env)
    assert result.returncode == 0, result.stderr
    script = (project / ".githooks" / "pre-push").read_text()
    assert script.startswith("#!/bin/sh\n# debatecode-hook: pre-push\n")
    assert "-m debatecode.cli.app hook run --pre-push" in script
    assert not (project / ".git" / "hooks" / "pre-push").exists()


def test_pre_push_hook_blocks_a_push_that_adds_eval(project: Path, git_env: dict[str, str], tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, env=git_env)
    git(project, git_env, "remote", "add", "origin", str(remote))
    assert run_cli("hook", "install", "--pre-push", cwd=project, env=git_env).returncode == 0
    (project / "add.py").write_text(CLEAN)
    git(project, git_env, "add", "add.py")
    git(project, git_env, "commit", "-q", "-m", "clean")
    first = git(project, git_env, "push", "-q", "origin", "main")
    assert first.returncode == 0, first.stdout + first.stderr
    (project / "ask.py").write_text(EVIL)
    git(project, git_env, "add", "ask.py")
    git(project, git_env, "commit", "-q", "-m", "evil")
    pushed = git(project, git_env, "push", "origin", "main")
    assert pushed.returncode != 0
    assert "B307" in pushed.stdout + pushed.stderr
    remote_log = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=remote, env=git_env, capture_output=True, text=True
    )
    assert remote_log.stdout.split() == ["clean"]


def test_hook_run_checks_a_range_of_commits(project: Path, git_env: dict[str, str]) -> None:
    for name, code in (("README.py", '"""Readme."""\n'), ("add.py", CLEAN), ("ask.py", EVIL)):
        (project / name).write_text(code)
        git(project, git_env, "add", name)
        git(project, git_env, "commit", "-q", "--no-verify", "-m", name)
    evil = run_cli("hook", "run", "--pushed", "HEAD~1..HEAD", cwd=project, env=git_env)
    assert evil.returncode == 1 and "ask.py:2" in evil.stdout
    clean = run_cli("hook", "run", "--pushed", "HEAD~2..HEAD~1", cwd=project, env=git_env)
    assert clean.returncode == 0 and "add.py" in clean.stdout and "ask.py" not in clean.stdout
    bad = run_cli("hook", "run", "--pushed", "not-a-range", cwd=project, env=git_env)
    assert bad.returncode == 2 and "BASE..TIP" in bad.stderr
    missing = run_cli("hook", "run", "--pushed", "nope..HEAD", cwd=project, env=git_env)
    assert missing.returncode == 2 and "'nope'" in missing.stderr


def test_the_pre_commit_framework_entry_checks_the_files_it_is_given(project: Path, git_env: dict[str, str]) -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (entry,) = [h for h in hooks if h["id"] == "debatecode"]
    assert entry["language"] == "python" and entry["types"] == ["python"]
    argv = shlex.split(entry["entry"])
    assert argv[0] == "debatecode"
    (project / "ask.py").write_text(EVIL)
    (project / "add.py").write_text(CLEAN)
    blocked = run_cli(*argv[1:], "add.py", "ask.py", cwd=project, env=git_env)
    assert blocked.returncode == 1 and "ask.py:2" in blocked.stdout
    assert run_cli(*argv[1:], "add.py", cwd=project, env=git_env).returncode == 0
    (project / "debatecode.toml").write_text("[hooks.git]\nblocking = []\n")
    warned = run_cli(*argv[1:], "ask.py", cwd=project, env=git_env)
    assert warned.returncode == 0 and "B307" in warned.stdout


def test_hook_run_outside_a_repository_is_an_input_error(tmp_path: Path, git_env: dict[str, str]) -> None:
    result = run_cli("hook", "run", "--staged", cwd=tmp_path, env=git_env)
    assert result.returncode == 2
    assert "not inside a git repository" in result.stderr
