"""A team installs the pre-commit hook: an `eval(input())` commit is blocked by bandit, a clean one goes through."""

from __future__ import annotations

from challenges._harness import Journey, expect

NEEDS_DOCKER = False
IDENTITY = ("-c", "user.name=challenger", "-c", "user.email=challenger@example.invalid")


def run(journey: Journey) -> str:
    repo = journey.workdir / "repo"
    repo.mkdir()
    journey.run("git", "init", "-q", cwd=repo)
    installed = journey.cli("hook", "install", cwd=repo)
    expect(installed.returncode == 0, "hook install failed", installed.stdout + installed.stderr)

    (repo / "bad.py").write_text("value = eval(input())\n")
    journey.run("git", "add", "bad.py", cwd=repo)
    blocked = journey.run("git", *IDENTITY, "commit", "-qm", "bad", cwd=repo)
    output = blocked.stdout + blocked.stderr
    expect(blocked.returncode != 0, "the eval(input()) commit went through", output)
    expect("B307" in output, "the block does not name bandit's B307 finding", output)

    journey.run("git", "rm", "-q", "--cached", "bad.py", cwd=repo)
    (repo / "bad.py").unlink()
    (repo / "good.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    journey.run("git", "add", "good.py", cwd=repo)
    clean = journey.run("git", *IDENTITY, "commit", "-qm", "good", cwd=repo)
    expect(clean.returncode == 0, "the clean commit was blocked", clean.stdout + clean.stderr)
    history = journey.run("git", "log", "--format=%s", cwd=repo).stdout.split()
    expect(history == ["good"], f"history is {history}, wanted only the clean commit")
    return "eval(input()) blocked (B307); clean commit landed"
