"""A small git repository and a SWE-bench instance of it, for the solve-mode tests.

The repository ``local/calc`` has a bug in ``calc/ops.py`` (``clamp`` ignores its
upper bound), existing tests that pass, and a README. The instance's gold
``patch``, ``test_patch``, FAIL_TO_PASS test and ``hints_text`` carry sentinel
strings that no prompt may ever contain.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatecode.bench.swebench.checking import CheckResult
from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.harness import SWEBenchHarness
from debatecode.config import DebateConfig
from debatecode.llm import ScriptedModel, register_scripted, unregister_scripted

OPS = '''"""Arithmetic helpers."""


def clamp(value: int, low: int, high: int) -> int:
    """Limit ``value`` to the range ``low``..``high``."""
    if value < low:
        return low
    return value


def double(value: int) -> int:
    """Twice ``value``."""
    return value * 2
'''

STRINGS = '''"""String helpers."""


def shout(text: str) -> str:
    """Upper-case ``text`` with an exclamation mark."""
    return text.upper() + "!"
'''

TESTS = """from calc.ops import clamp, double


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_double():
    assert double(3) == 6
"""

STATEMENT = """clamp() ignores the upper bound

`clamp(value, low, high)` from calc.ops should limit value to the range, but
`clamp(50, 0, 10)` returns 50 instead of 10.
"""

GOLD_SENTINEL = "GOLD_SENTINEL_7f3a"
TEST_SENTINEL = "test_hidden_sentinel_b21c"
HINT_SENTINEL = "HINT_SENTINEL_90de"

GOLD_PATCH = "".join(
    line + "\n"
    for line in [
        "diff --git a/calc/ops.py b/calc/ops.py",
        "--- a/calc/ops.py",
        "+++ b/calc/ops.py",
        "@@ -5,6 +5,8 @@ def clamp(value: int, low: int, high: int) -> int:",
        '     """Limit ``value`` to the range ``low``..``high``."""',
        "     if value < low:",
        "         return low",
        f"+    if value > high:  # {GOLD_SENTINEL}",
        "+        return high",
        "     return value",
        " ",
        " ",
    ]
)

TEST_PATCH = "".join(
    line + "\n"
    for line in [
        "diff --git a/tests/test_ops.py b/tests/test_ops.py",
        "--- a/tests/test_ops.py",
        "+++ b/tests/test_ops.py",
        "@@ -7,3 +7,7 @@ def test_clamp_low():",
        " ",
        " def test_double():",
        "     assert double(3) == 6",
        "+",
        "+",
        f"+def {TEST_SENTINEL}():",
        "+    assert clamp(50, 0, 10) == 10",
    ]
)

GOOD_EDIT = """The upper bound is never checked, so values above `high` pass through.

calc/ops.py
```python
<<<<<<< SEARCH
    if value < low:
        return low
    return value
=======
    if value < low:
        return low
    if value > high:
        return high
    return value
>>>>>>> REPLACE
```
"""

MIN_EDIT = """Using min/max is shorter.

calc/ops.py
<<<<<<< SEARCH
    if value < low:
        return low
    return value
=======
    return max(low, min(value, high))
>>>>>>> REPLACE
"""

BREAKING_EDIT = """Rewrite everything.

calc/ops.py
<<<<<<< SEARCH
    return value * 2
=======
    return value * 3
>>>>>>> REPLACE
calc/ops.py
<<<<<<< SEARCH
    return value
=======
    return min(value, high)
>>>>>>> REPLACE
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def make_repo(root: Path) -> tuple[Path, str]:
    """``root/local__calc``, a repository with one commit; returns it and the commit."""
    repo = root / "local__calc"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(
        repo,
        {
            "calc/__init__.py": "",
            "calc/ops.py": OPS,
            "calc/strings.py": STRINGS,
            "tests/test_ops.py": TESTS,
            "README.md": "# calc\n\nSmall helpers.\n",
            ".gitignore": "__pycache__/\n",
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    return repo, git(repo, "rev-parse", "HEAD")


def make_instance(commit: str) -> SWEBenchInstance:
    return SWEBenchInstance(
        instance_id="local__calc-1",
        repo="local/calc",
        base_commit=commit,
        problem_statement=STATEMENT,
        patch=GOLD_PATCH,
        test_patch=TEST_PATCH,
        FAIL_TO_PASS=[f"tests/test_ops.py::{TEST_SENTINEL}"],
        PASS_TO_PASS=["tests/test_ops.py::test_clamp_low", "tests/test_ops.py::test_double"],
        version="0.1",
        environment_setup_commit=commit,
        hints_text=HINT_SENTINEL,
    )


@dataclass
class CalcSetup:
    repos_dir: Path
    repo: Path
    instance: SWEBenchInstance
    harness: SWEBenchHarness
    out: Path


def build_calc(tmp_path: Path) -> CalcSetup:
    """The calc repository in a repos directory, its instance, and a harness over it (no Docker needed)."""
    repos_dir = tmp_path / "repos"
    repo, commit = make_repo(repos_dir)
    instance = make_instance(commit)
    out = tmp_path / "out"
    harness = SWEBenchHarness([instance], repos_dir=repos_dir, out=out)
    return CalcSetup(repos_dir=repos_dir, repo=repo, instance=instance, harness=harness, out=out)


Reply = Callable[..., str]


@contextmanager
def scripted(name: str, fn: Reply) -> Iterator[str]:
    """Register ``scripted/<name>`` answering with ``fn(messages, tags)``; yields the model string."""
    register_scripted(name, ScriptedModel(fn=fn))
    try:
        yield f"scripted/{name}"
    finally:
        unregister_scripted(name)


def config_for(model: str, tmp_path: Path, **overrides: Any) -> DebateConfig:
    return DebateConfig(model=model, store_url=f"sqlite:///{tmp_path / 'db.sqlite'}", **overrides)


PASSING = {"tests.test_ops::test_clamp_low": "PASSED", "tests.test_ops::test_double": "PASSED"}


class FakeChecker:
    """Existing tests without a sandbox: a patch that triples ``double`` breaks ``test_double``."""

    def __init__(self, error: Exception | None = None) -> None:
        self.patches: list[str] = []
        self.error = error

    async def check(self, instance: SWEBenchInstance, patch: str) -> CheckResult:
        self.patches.append(patch)
        if self.error is not None:
            raise self.error
        tests = dict(PASSING)
        if "value * 3" in patch:
            tests["tests.test_ops::test_double"] = "FAILED"
        return CheckResult(status="failed" if "FAILED" in tests.values() else "passed", tests=tests)
