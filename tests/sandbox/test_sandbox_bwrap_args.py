"""bubblewrap arguments: an interpreter or checkout under /tmp must stay visible inside."""

from __future__ import annotations

import sys

from debatecode.sandbox._isolation import bwrap_command, python_roots
from debatecode.sandbox.base import Limits


def test_interpreter_binds_come_after_the_fresh_tmp() -> None:
    args = bwrap_command("bwrap", sys.executable, "/tmp/dc-job-1/work", Limits(), size_ok=True)
    tmpfs_at = args.index("--tmpfs")
    assert args[tmpfs_at + 1] == "/tmp"
    roots = python_roots(sys.executable)
    assert roots, "the test interpreter lives outside /usr"
    for root in roots:
        at = max(i for i in range(len(args) - 1) if args[i] == "--ro-bind" and args[i + 1] == root)
        assert at > tmpfs_at, f"{root} is bound before /tmp is replaced, so a venv under /tmp would vanish"
    work_at = max(
        i for i in range(1, len(args)) if args[i] == "/tmp/dc-job-1/work" and args[i - 1] in ("--tmpfs", "--bind")
    )
    assert work_at > tmpfs_at
