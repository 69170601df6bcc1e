"""List options that cannot mean anything are usage errors, not "no sessions yet" (issue 31, item 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.helpers import run_cli


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("sessions", "list", "--limit", "-1"), "Invalid value for '--limit'"),
        (("sessions", "list", "--limit", "0"), "Invalid value for '--limit'"),
        (("sessions", "list", "--status", "bogus"), "'bogus' is not a session status; use one of: pending, running"),
        (("memory", "list", "--limit", "-1"), "Invalid value for '--limit'"),
        (("memory", "lessons", "--limit", "-1"), "Invalid value for '--limit'"),
    ],
    ids=["sessions-limit-negative", "sessions-limit-zero", "sessions-status", "memory-limit", "lessons-limit"],
)
def test_a_meaningless_list_option_exits_2(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    proc = run_cli(*args, cwd=tmp_path, env={"DEBATECODE_MEMORY__EMBEDDER": "hashing"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert says in " ".join(proc.stderr.replace("│", " ").split())
    assert "no sessions yet" not in proc.stdout and "no episodes yet" not in proc.stdout
    assert not (tmp_path / ".debatecode").exists(), "refused before the store is opened"


def test_a_known_status_still_lists(tmp_path: Path) -> None:
    proc = run_cli("sessions", "list", "--status", "failed", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
