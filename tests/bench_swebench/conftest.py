"""Fixtures of the SWE-bench bridge tests: the local instance set, git repositories, and one graded run per source.

The Docker fixtures grade ``gold``, ``empty`` and the forged predictions once per
session (the image layers are built on first use and reused by tag afterwards),
so each Docker test only reads reports.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.bench_swebench.solve_fixtures import CalcSetup, build_calc

from debatecode.bench.swebench import (
    ImageBuilder,
    RunSummary,
    SWEBenchHarness,
    SWEBenchInstance,
    load_instances,
    load_predictions,
)

LOCAL = Path(__file__).resolve().parents[2] / "benchmarks" / "swebench-local"
DATASET = LOCAL / "instances.jsonl"
FORGED = LOCAL / "predictions-forged.jsonl"
REPOS = LOCAL / "repos"


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity; return stdout."""
    completed = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout


@pytest.fixture(scope="session")
def local_instances() -> list[SWEBenchInstance]:
    return load_instances(DATASET)


@pytest.fixture
async def calc(tmp_path: Path) -> AsyncIterator[CalcSetup]:
    """The calc repository and its instance (``solve_fixtures.build_calc``), for the solve-mode tests."""
    setup = build_calc(tmp_path)
    yield setup
    await setup.harness.aclose()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository with ``git init`` done."""
    where = tmp_path / "repo"
    where.mkdir()
    git(where, "init", "-q", "-b", "main")
    return where


def _docker_gate(problem: str | None) -> None:
    if problem is None:
        return
    if os.environ.get("DEBATECODE_REQUIRE_DOCKER") == "1":
        pytest.fail(f"Docker is required (DEBATECODE_REQUIRE_DOCKER=1) but unusable: {problem}")
    pytest.skip(f"Docker sandbox unusable: {problem}")


@pytest.fixture(scope="session")
def graded(
    docker_problem: str | None, local_instances: list[SWEBenchInstance], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[RunSummary, Path]]]:
    """``gold``, ``empty`` and ``forged`` graded once: source -> (summary, output directory)."""
    _docker_gate(docker_problem)
    out = tmp_path_factory.mktemp("swebench-graded")
    sources = {"gold": "gold", "empty": "empty", "forged": str(FORGED)}

    async def grade_all() -> dict[str, tuple[RunSummary, Path]]:
        builder = ImageBuilder()
        results: dict[str, tuple[RunSummary, Path]] = {}
        try:
            for name, source in sources.items():
                harness = SWEBenchHarness(local_instances, repos_dir=REPOS, out=out / name, builder=builder)
                try:
                    predictions = load_predictions(source, local_instances)
                    results[name] = (await harness.grade(predictions, source=source), out / name)
                finally:
                    await harness.aclose()
        finally:
            builder.close()
        return results

    yield asyncio.run(grade_all())
