"""Each challenge (an end-to-end user journey, `challenges/`) holds against the real CLI and the services it needs.

One test per challenge, each running ``python -m challenges.run NAME`` as
``make challenges`` does. A challenge that needs Docker or PostgreSQL is
skipped without it on a plain local run, and fails instead in CI
(``DEBATECODE_REQUIRE_DOCKER=1`` / ``DEBATECODE_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys

import pytest
from challenges._harness import POSTGRES_URL_ENV
from challenges.run import CHALLENGES, postgres_problem
from tests.cli.helpers import REPO

CHALLENGE_TIMEOUT_S = 840
"""The slowest challenge takes about 75 s on a quiet 2-core machine; a loaded CI box may take several times that."""


def _param(name: str) -> object:
    module = importlib.import_module(f"challenges.{name}")
    marks = [pytest.mark.docker] if module.NEEDS_DOCKER else []
    return pytest.param(name, marks=marks, id=name)


def _require_postgres() -> None:
    problem = postgres_problem()
    if problem is None:
        return
    if os.environ.get("DEBATECODE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (DEBATECODE_REQUIRE_POSTGRES=1) but unusable: {problem}")
    pytest.skip(problem)


@pytest.mark.slow
@pytest.mark.timeout(CHALLENGE_TIMEOUT_S + 60)
@pytest.mark.parametrize("name", [_param(name) for name in CHALLENGES])
def test_the_challenge_holds(name: str, request: pytest.FixtureRequest) -> None:
    module = importlib.import_module(f"challenges.{name}")
    if module.NEEDS_DOCKER:
        request.getfixturevalue("requires_docker")
    if getattr(module, "NEEDS_POSTGRES", False):
        _require_postgres()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_") or k == POSTGRES_URL_ENV}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
    proc = subprocess.run(
        [sys.executable, "-m", "challenges.run", name],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CHALLENGE_TIMEOUT_S,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(rf"│ {name}\s+│ passed\s+│", proc.stdout), f"{name} did not pass:\n{proc.stdout}"
