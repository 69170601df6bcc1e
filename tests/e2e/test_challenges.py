"""The challenges (end-to-end user journeys, `challenges/`) all hold against the real CLI and Docker engine."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from challenges.run import CHALLENGES
from tests.cli.helpers import REPO


@pytest.mark.docker
@pytest.mark.slow
def test_every_challenge_holds(requires_docker: None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
    proc = subprocess.run(
        [sys.executable, "-m", "challenges.run"], cwd=REPO, capture_output=True, text=True, timeout=900, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in CHALLENGES:
        assert re.search(rf"│ {name}\s+│ passed\s+│", proc.stdout), f"{name} did not pass:\n{proc.stdout}"
