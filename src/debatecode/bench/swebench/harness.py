"""Grading predictions end to end: repositories, images, patched trees, test runs, reports.

``SWEBenchHarness.grade(predictions, jobs=N)`` checks its inputs first (every
repository source exists and has the instances' commits; every log parser is
known), then grades up to N predictions at once (``run_bounded``, all on the
caller's event loop) and writes, per prediction, ``<out>/<model>/<instance_id>/``:
``report.json``, ``test_output.txt`` (the log swebench parsed), ``patch.diff`` and
``junit.xml``, plus the same prediction in swebench's own layout
(``swebench_logs``), and one line of ``<out>/results.jsonl``; at the end,
``summary.json``, ``summary.md`` and swebench's ``<model>.<run_id>.json`` in
``<out>``. A run into a folder that has ``results.jsonl`` skips the predictions
already graded there (``results``). One prediction's failure to set up (a
test_patch that does not apply, an image that does not build) is reported as
``error`` for that prediction; an engine that does not answer stops the run.

Which predictions run at once changes only *when* each is graded: the reports,
``results.jsonl`` (up to line order), the summaries and swebench's files hold the
same verdicts whatever ``jobs`` is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.execution import SandboxFactory, TestRun, docker_sandbox, run_tests
from debatecode.bench.swebench.grading import grade_run
from debatecode.bench.swebench.images import ImageBuilder, ImageSet
from debatecode.bench.swebench.predictions import Prediction
from debatecode.bench.swebench.report import InstanceReport, RunSummary, summarize, write_summary
from debatecode.bench.swebench.repos import RepoMirror, RepoRegistry, RepoSpec, find_repo_source
from debatecode.bench.swebench.results import RESULTS_FILE, append_result, fingerprint, read_results, reusable
from debatecode.bench.swebench.swebench_logs import (
    DEFAULT_RUN_ID,
    check_run_id,
    write_instance_logs,
    write_run_reports,
)
from debatecode.bench.swebench.workspace import Overlay, PreparedTree, prepare_tree
from debatecode.errors import RunError, SandboxUnavailable, UserError
from debatecode.safe_paths import check_name, model_folder, path_under

__all__ = [
    "GradeOne",
    "HarnessEvent",
    "InstanceContext",
    "InstanceReport",
    "SWEBenchHarness",
    "default_grading_jobs",
    "default_repos_dir",
    "model_dir_name",
]

logger = logging.getLogger(__name__)

GradeOne = Callable[[Prediction, str], Awaitable[InstanceReport]]
"""Grades one prediction (given its ``input_sha256``), writes its files under ``out`` and returns its report."""


@dataclass(frozen=True)
class HarnessEvent:
    """Progress for a live display: ``start`` and ``done`` per prediction, ``step`` in between.

    With several predictions graded at once, their events interleave. A prediction an
    earlier run already graded gets only ``done``, with the message ``resumed``.
    """

    kind: Literal["start", "step", "done"]
    instance_id: str
    model: str
    message: str = ""
    report: InstanceReport | None = None


@dataclass(frozen=True)
class InstanceContext:
    """What grading and solving one instance need: its repository mirror, spec and images."""

    instance: SWEBenchInstance
    mirror: RepoMirror
    spec: RepoSpec
    images: ImageSet


def default_repos_dir(dataset: Path) -> Path:
    """The repos directory used when ``--repos-dir`` is not given: ``repos/`` next to the dataset file."""
    return dataset.resolve().parent / "repos"


def default_grading_jobs(jobs: int | None = None) -> int:
    """Predictions graded at once: ``jobs`` when given, else ``min(CPUs, MAX_DEFAULT_JOBS)``.

    No model runs while grading, so the default is the one ``bench._jobs`` gives API
    models: each prediction waits on git, image builds and one test container.

    Raises:
        ConfigError: ``jobs`` below 1.
    """
    from debatecode.bench._jobs import MAX_DEFAULT_JOBS
    from debatecode.errors import ConfigError

    if jobs is None:
        return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_JOBS))
    if jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    return jobs


def model_dir_name(model: str) -> str:
    """A directory name for a model string (``/`` becomes ``__``, ``:`` becomes ``_``).

    Raises:
        UnsafeName: ``model`` does not match ``MODEL_NAME_PATTERN`` (``..``, ``""``, say).
    """
    return model_folder(model).replace(":", "_")


class SWEBenchHarness:
    """Grades SWE-bench predictions against locally built instance images.

    Args:
        instances: the dataset (or the selected part of it).
        repos_dir: where the repository sources are (see ``repos``).
        out: the run's output directory.
        registry: repository specs; by default read from ``<repos_dir>/repos.toml``.
        builder: the image builder; made (and closed) by the harness when omitted.
        sandbox_factory: makes the sandbox of an instance image (Docker by default).
        listener: receives ``HarnessEvent``s.
        run_id: names swebench's log folder and run reports (``swebench_logs``).

    Raises:
        ConfigError: swebench is not installed, or ``run_id`` cannot name a folder.
        SWEBenchInputError: ``<repos_dir>/repos.toml`` is malformed.
    """

    def __init__(
        self,
        instances: Sequence[SWEBenchInstance],
        *,
        repos_dir: Path,
        out: Path,
        registry: RepoRegistry | None = None,
        builder: ImageBuilder | None = None,
        sandbox_factory: SandboxFactory = docker_sandbox,
        listener: Callable[[HarnessEvent], None] | None = None,
        run_id: str = DEFAULT_RUN_ID,
    ) -> None:
        from debatecode.bench.swebench.repos import REPOS_FILE, require_swebench

        require_swebench()
        self.run_id = check_run_id(run_id)
        self.instances = {instance.instance_id: instance for instance in instances}
        self.repos_dir = repos_dir
        self.out = out
        self.registry = registry if registry is not None else RepoRegistry.from_toml(repos_dir / REPOS_FILE)
        self._owns_builder = builder is None
        self.builder = builder or ImageBuilder(sandbox_factory=sandbox_factory)
        self.sandbox_factory = sandbox_factory
        self.listener = listener
        self._tmp = tempfile.TemporaryDirectory(prefix="debatecode-swebench-")
        self._mirrors: dict[str, RepoMirror] = {}

    def _emit(self, event: HarnessEvent) -> None:
        if self.listener is not None:
            self.listener(event)

    def mirror(self, repo: str) -> RepoMirror:
        """The run's bare mirror of ``repo``, cloned on first use.

        Raises:
            SWEBenchInputError: no source for ``repo`` in the repos directory.
            VersionControlError: the source cannot be cloned.
        """
        if repo not in self._mirrors:
            source = find_repo_source(self.repos_dir, repo)
            self._mirrors[repo] = RepoMirror(repo, source, Path(self._tmp.name) / "mirrors" / model_dir_name(repo))
        return self._mirrors[repo]

    def check_inputs(self, instance_ids: Sequence[str]) -> None:
        """Fail early on bad input: sources, commits and log parsers of the instances to grade.

        Raises:
            SWEBenchInputError: a repository source or commit is missing, or a log parser is unknown.
            VersionControlError: a source cannot be cloned.
        """
        for instance_id in dict.fromkeys(instance_ids):
            instance = self.instances[instance_id]
            mirror = self.mirror(instance.repo)
            mirror.require_commit(instance.base_commit, field="base_commit", instance_id=instance_id)
            mirror.require_commit(
                instance.environment_setup_commit, field="environment_setup_commit", instance_id=instance_id
            )
            self.registry.spec_for(instance)

    async def context(self, instance: SWEBenchInstance) -> InstanceContext:
        """The mirror, spec and (built or reused) images of ``instance``.

        Raises:
            SWEBenchInputError, VersionControlError: as for ``mirror``.
            SandboxUnavailable: the engine does not answer or the base image is missing.
            ImageBuildError: an image could not be built.
        """
        mirror = self.mirror(instance.repo)
        spec = self.registry.spec_for(instance)
        images = await self.builder.ensure(mirror, instance, spec)
        return InstanceContext(instance=instance, mirror=mirror, spec=spec, images=images)

    async def prepare(
        self, context: InstanceContext, model_patch: str | None, *, apply_test_patch: bool = True
    ) -> PreparedTree:
        """Apply ``model_patch`` at the instance's base commit (with fallbacks) and make the result safe.

        Protected files (conftest.py, pytest configuration, ``sitecustomize.py``, ``*.pth``,
        the files of ``test_patch``) are put back as in the reference tree: ``base_commit``
        plus ``test_patch``, or ``base_commit`` alone with ``apply_test_patch=False`` (solve
        mode, where the hidden tests must stay hidden). ``overlay`` is None when the patch
        does not apply.

        Raises:
            InstanceSetupError: ``test_patch`` does not apply, or the patched files are too big.
            VersionControlError: git failed.
        """

        def work() -> PreparedTree:
            with tempfile.TemporaryDirectory(dir=self._tmp.name) as tmp:
                return prepare_tree(
                    context.mirror, context.instance, model_patch, Path(tmp), apply_test_patch=apply_test_patch
                )

        return await asyncio.to_thread(work)

    async def run_patch(
        self,
        context: InstanceContext,
        model_patch: str | None,
        tests: Sequence[str] = (),
        *,
        apply_test_patch: bool = False,
    ) -> tuple[PreparedTree, TestRun | None]:
        """``prepare`` then ``run_overlay``: run ``tests`` on the instance patched with ``model_patch``.

        The default (``apply_test_patch=False``, no tests named) runs the repository's own
        tests at ``base_commit`` plus the patch, which is what a solver may see. The run is
        None when the patch does not apply (``PreparedTree.patch`` says why).

        Raises:
            InstanceSetupError, VersionControlError: as for ``prepare``.
            SandboxUnavailable, SandboxError: the sandbox failed (not the tests).
        """
        prepared = await self.prepare(context, model_patch, apply_test_patch=apply_test_patch)
        if prepared.overlay is None:
            return prepared, None
        return prepared, await self.run_overlay(context, prepared.overlay, tests)

    async def run_overlay(self, context: InstanceContext, overlay: Overlay, tests: Sequence[str]) -> TestRun:
        """Run ``tests`` (pytest node ids; all collected tests when empty) on ``overlay`` in a fresh hardened container.

        The container starts from the instance image (repository at ``base_commit``),
        copies the repository to a tmpfs, applies ``overlay`` and runs pytest with the
        grader plugin; the exit status and junit XML are read from outside the test process.

        Raises:
            SandboxUnavailable, SandboxError: the sandbox failed.
        """
        sandbox = self.sandbox_factory(context.images.instance.tag, 0)
        try:
            return await run_tests(sandbox, overlay, tests, context.spec)
        finally:
            await sandbox.aclose()

    def prediction_dir(self, prediction: Prediction) -> Path:
        """``<out>/<model>/<instance_id>``.

        Raises:
            UnsafeName: the model or the instance id cannot name a folder.
            PathOutsideRoot: the folder resolves outside ``out``.
        """
        model = model_dir_name(prediction.model_name_or_path)
        return path_under(self.out, model, check_name(prediction.instance_id, "instance_id"), what="prediction")

    async def grade_prediction(self, prediction: Prediction, input_sha256: str = "") -> InstanceReport:
        """Grade one prediction and write its files (ours and swebench's).

        ``input_sha256`` is recorded in the report (``results.fingerprint``).

        Raises:
            SandboxUnavailable: the engine does not answer (every later prediction would fail too).
        """
        instance = self.instances[prediction.instance_id]
        where = self.prediction_dir(prediction)
        where.mkdir(parents=True, exist_ok=True)
        (where / "patch.diff").write_text(prediction.model_patch or "", encoding="utf-8")
        model = prediction.model_name_or_path
        started = time.perf_counter()
        durations: dict[str, float] = {}
        report: InstanceReport
        try:
            self._emit(HarnessEvent("step", instance.instance_id, model, "images"))
            context = await self.context(instance)
            durations["images"] = time.perf_counter() - started
            mark = time.perf_counter()
            prepared = await self.prepare(context, prediction.model_patch)
            durations["prepare"] = time.perf_counter() - mark
            if prepared.overlay is None:
                report = InstanceReport(
                    instance_id=instance.instance_id,
                    model_name_or_path=model,
                    repo=instance.repo,
                    status="patch_failed",
                    patch=prepared.patch,
                    images=context.images,
                    reasons=["no command of swebench's chain applies the patch (see patch.attempts)"],
                )
            else:
                self._emit(HarnessEvent("step", instance.instance_id, model, "tests"))
                mark = time.perf_counter()
                run = await self.run_overlay(context, prepared.overlay, instance.tests)
                durations["tests"] = time.perf_counter() - mark
                if run.junit_xml:
                    (where / "junit.xml").write_text(run.junit_xml, encoding="utf-8")
                grade = grade_run(instance, context.spec, run, where / "test_output.txt")
                report = InstanceReport(
                    instance_id=instance.instance_id,
                    model_name_or_path=model,
                    repo=instance.repo,
                    status="resolved" if grade.resolved else "unresolved",
                    resolved=grade.resolved,
                    resolution=grade.resolution,
                    patch=prepared.patch,
                    protected_restored=prepared.restored,
                    test_patch_files=prepared.test_patch_files,
                    tests=grade.tests,
                    tests_status=grade.report,
                    exit_code=run.exit_code,
                    run_status=run.status,
                    log_accepted=grade.log_accepted,
                    junit_found=grade.junit_found,
                    ledger_found=grade.ledger_found,
                    tampering=grade.tampering,
                    reasons=grade.reasons,
                    images=context.images,
                )
        except SandboxUnavailable:
            raise
        except (UserError, RunError) as exc:
            logger.warning("%s (%s): %s", instance.instance_id, model, exc)
            report = InstanceReport(
                instance_id=instance.instance_id,
                model_name_or_path=model,
                repo=instance.repo,
                status="error",
                error=str(exc),
                reasons=[str(exc)],
            )
        durations["total"] = time.perf_counter() - started
        report.durations = {key: round(value, 3) for key, value in durations.items()}
        report.input_sha256 = input_sha256
        (where / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
        self._write_swebench_logs(prediction, report)
        return report

    def _write_swebench_logs(self, prediction: Prediction, report: InstanceReport) -> None:
        test_output = self.prediction_dir(prediction) / "test_output.txt"
        write_instance_logs(
            self.out,
            self.run_id,
            prediction,
            report,
            test_output if report.status in ("resolved", "unresolved") else None,
        )

    async def grade(
        self,
        predictions: Sequence[Prediction],
        *,
        source: str = "",
        jobs: int = 1,
        grade_with: GradeOne | None = None,
    ) -> RunSummary:
        """Grade every prediction, ``jobs`` at once, then write the summaries (ours and swebench's).

        Predictions start in the order given. ``<out>/results.jsonl`` gets a line as each
        one finishes; one that an earlier run into ``out`` graded (same model, instance
        and patch, not an ``error``) is not graded again. The summary lists the
        predictions in the order given, whatever order they finished in.

        ``grade_with(prediction, input_sha256)`` grades one prediction and writes its
        files in place of ``grade_prediction`` (``remote.RayGrading``: a Ray task, whose
        files the driver writes); the results file and the summaries are written here
        either way.

        Raises:
            SWEBenchInputError: a prediction's instance is not in the harness's instances, or
                ``check_inputs`` refused the input.
            ConfigError: ``jobs`` below 1.
            VersionControlError: a repository source cannot be cloned.
            SandboxUnavailable: the engine does not answer or the base image is missing
                (the predictions graded so far stay in ``results.jsonl``).
        """
        from debatecode.bench._jobs import run_bounded
        from debatecode.bench.swebench.errors import SWEBenchInputError

        unknown = sorted({p.instance_id for p in predictions if p.instance_id not in self.instances})
        if unknown:
            raise SWEBenchInputError(source or "predictions", f"no such instances: {', '.join(unknown)}")
        self.check_inputs([p.instance_id for p in predictions])
        self.out.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        results_path = self.out / RESULTS_FILE
        earlier = read_results(results_path)
        keys = [fingerprint(p, self.instances[p.instance_id]) for p in predictions]
        reports: dict[int, InstanceReport] = {}
        for index, (prediction, key) in enumerate(zip(predictions, keys, strict=True)):
            previous = earlier.get(key)
            if previous is not None and reusable(previous):
                reports[index] = previous
                self._write_swebench_logs(prediction, previous)
                self._emit(
                    HarnessEvent(
                        "done", prediction.instance_id, prediction.model_name_or_path, "resumed", report=previous
                    )
                )
        resumed = len(reports)
        if resumed:
            logger.info("%d of %d predictions already graded in %s", resumed, len(predictions), results_path)

        async def grade_one(index: int) -> None:
            prediction = predictions[index]
            self._emit(HarnessEvent("start", prediction.instance_id, prediction.model_name_or_path))
            report = await (grade_with or self.grade_prediction)(prediction, keys[index])
            append_result(results_path, report)
            reports[index] = report
            self._emit(HarnessEvent("done", prediction.instance_id, prediction.model_name_or_path, report=report))

        todo = [index for index in range(len(predictions)) if index not in reports]
        await run_bounded(todo, jobs, grade_one)
        ordered = [reports[index] for index in range(len(predictions))]
        summary = summarize(ordered, source=source, duration_s=time.perf_counter() - started, resumed=resumed)
        write_summary(self.out, summary)
        write_run_reports(self.out, self.run_id, predictions, list(self.instances))
        return summary

    async def aclose(self) -> None:
        """Remove the run's mirrors and worktrees, and close a builder the harness made."""
        if self._owns_builder:
            self.builder.close()
        self._tmp.cleanup()
