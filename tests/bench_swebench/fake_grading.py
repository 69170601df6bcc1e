"""Grading without Docker: the calc repository as several instances, a stand-in image builder and a test sandbox.

``FakeTestSandbox`` runs no pytest. It reads the overlay the harness sends (the
patched ``calc/ops.py``) and answers as pytest with the grader plugin would: the
hidden FAIL_TO_PASS test passes when ``clamp`` checks its upper bound, and the
existing tests pass unless ``double`` is broken. Its log, junit XML and ledger
agree (``mode="honest"``), unless the log claims passes the other records deny
(``"forge"``), all three report passes because a patch swallowed every failure and
the ledger saw pytest tampered with (``"swallow"``), or pytest collected nothing
and wrote no records (``"crash"``).
Each run waits a little, longer for lower instance numbers, so predictions
started in order finish out of order when several run at once.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tests.bench_swebench.solve_fixtures import GOLD_PATCH, make_instance, make_repo

from debatecode.bench.swebench import ImageBuilder, ImageSet, SWEBenchHarness, SWEBenchInstance
from debatecode.bench.swebench.grading import junit_key
from debatecode.bench.swebench.images import LayerImage
from debatecode.bench.swebench.repos import RepoMirror, RepoSpec
from debatecode.sandbox.base import ExecJob, ExecResult, Sandbox

Mode = Literal["honest", "forge", "swallow", "crash"]

PHASES = {
    "PASSED": {"setup": "ok", "call": "ok", "teardown": "ok"},
    "FAILED": {"setup": "ok", "call": "raised", "teardown": "ok"},
}

BROKEN_PATCH = GOLD_PATCH.replace("+        return high", "+        return low")
"""Applies, but clamps to the wrong bound: the hidden test fails."""
FOREIGN_PATCH = "--- a/calc/missing.py\n+++ b/calc/missing.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
"""Applies nowhere: ``calc/missing.py`` does not exist."""


@dataclass
class RunLog:
    """What the fake sandbox saw: runs per image, and how many ran at once at most."""

    images: list[str] = field(default_factory=list)
    running: int = 0
    most_at_once: int = 0


class FakeBuilder(ImageBuilder):
    """Images that need no engine: one base and env, one instance tag per instance."""

    def __init__(self) -> None:
        super().__init__(base_image="fake/sandbox")

    async def ensure(self, mirror: RepoMirror, instance: SWEBenchInstance, spec: RepoSpec) -> ImageSet:
        return ImageSet(
            base=LayerImage(tag="fake/base:1"),
            env=LayerImage(tag="fake/env:1"),
            instance=LayerImage(tag=f"fake/instance:{instance.instance_id}"),
        )


class FakeTestSandbox(Sandbox):
    """Answers one grading job as pytest would on the patched calc repository."""

    name = "fake-tests"

    def __init__(self, image: str, log: RunLog, *, mode: Mode = "honest") -> None:
        self.image = image
        self.log = log
        self.mode = mode

    async def run(self, job: ExecJob) -> ExecResult:
        spec = json.loads(job.files["_swebench/job.json"])
        ops = next(
            (base64.b64decode(e["data"]).decode() for e in spec["overlay"] if e["path"] == "calc/ops.py"),
            "",
        )
        self.log.images.append(self.image)
        self.log.running += 1
        self.log.most_at_once = max(self.log.most_at_once, self.log.running)
        try:
            number = int(self.image.rsplit("-", 1)[-1])
            await asyncio.sleep(0.15 * (5 - number))
        finally:
            self.log.running -= 1
        if self.mode == "crash":
            stdout = (
                "collected 0 items\n\n============================ no tests ran in 0.01s ============================\n"
            )
            return ExecResult(status="error", exit_code=5, stdout=stdout, duration_s=0.01, backend=self.name)
        statuses = {test: "PASSED" for test in spec["tests"]}
        for test in spec["tests"]:
            if "sentinel" in test and "return high" not in ops:
                statuses[test] = "FAILED"
        if self.mode == "swallow":  # as a patched ``Function.runtest`` that swallows every exception
            statuses = {test: "PASSED" for test in statuses}
        forge = self.mode == "forge"
        logged = {test: "PASSED" for test in statuses} if forge else statuses
        # A forgery prints passes and exits 0 (as ``os._exit(0)`` at exit would); junit and ledger still see failures.
        failed = "FAILED" in statuses.values() and not forge
        stdout = "=== short test summary info ===\n" + "".join(f"{s} {t}\n" for t, s in logged.items())
        cases = "".join(
            f'<testcase classname="{junit_key(t)[0]}" name="{junit_key(t)[1]}" time="0.01">'
            + ('<failure message="boom">boom</failure>' if s == "FAILED" else "")
            + "</testcase>"
            for t, s in statuses.items()
        )
        tampered = ["_pytest.python.Function.runtest changed"] if self.mode == "swallow" else []
        ledger = {"tests": {t: PHASES[s] for t, s in statuses.items()}, "tampered": tampered, "exitstatus": int(failed)}
        return ExecResult(
            status="error" if failed else "ok",
            exit_code=1 if failed else 0,
            stdout=stdout,
            files={
                spec[
                    "junit"
                ]: f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>',
                spec["ledger"]: json.dumps(ledger),
            },
            duration_s=0.01,
            backend=self.name,
        )


@dataclass
class CalcBench:
    """Four instances of the calc repository (same commit, ids ``local__calc-1`` to ``-4``) and their repos dir."""

    repos_dir: Path
    instances: list[SWEBenchInstance]
    log: RunLog

    def harness(self, out: Path, *, mode: Mode = "honest", run_id: str = "debatecode") -> SWEBenchHarness:
        """A harness over the four instances, grading with the fake builder and sandbox."""
        return SWEBenchHarness(
            self.instances,
            repos_dir=self.repos_dir,
            out=out,
            builder=FakeBuilder(),
            sandbox_factory=lambda image, pool_size: FakeTestSandbox(image, self.log, mode=mode),
            run_id=run_id,
        )


def build_bench(tmp_path: Path) -> CalcBench:
    """The calc repository under ``tmp_path/repos`` and four instances of it."""
    repos_dir = tmp_path / "repos"
    _, commit = make_repo(repos_dir)
    base = make_instance(commit)
    instances = [base.model_copy(update={"instance_id": f"local__calc-{n}"}) for n in range(1, 5)]
    return CalcBench(repos_dir=repos_dir, instances=instances, log=RunLog())
