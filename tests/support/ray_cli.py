"""The ``--executor ray`` CLI's two failures, checked the same way for every command that has the flag."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.cli.helpers import run_cli

from debatecode.errors import ExitCode

__all__ = ["assert_exits_2_without_ray_and_3_when_the_address_does_not_answer", "closed_port"]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def assert_exits_2_without_ray_and_3_when_the_address_does_not_answer(args: list[str], cwd: Path) -> None:
    """Without Ray: exit 2 naming the extra to install. With an address that does not answer: exit 3 naming it."""
    no_ray = cwd / "no-ray"
    (no_ray / "ray").mkdir(parents=True)
    (no_ray / "ray" / "__init__.py").write_text("raise ImportError('ray is not installed here')\n")
    missing = run_cli(*args, cwd=cwd, env={"PYTHONPATH": str(no_ray)})
    assert missing.returncode == ExitCode.BAD_INPUT, missing.stderr
    assert "pip install 'debatecode[ray]'" in " ".join(missing.stderr.split())

    address = f"127.0.0.1:{closed_port()}"
    unreachable = run_cli(*args, "--ray-address", address, cwd=cwd, timeout=120)
    assert unreachable.returncode == ExitCode.RUN_FAILED, unreachable.stderr
    assert f"the Ray cluster at {address} does not answer" in " ".join(unreachable.stderr.split())
