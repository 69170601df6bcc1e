"""``bench swebench --executor ray``: each instance graded (and solved) as a Ray task; the driver writes its files.

A task is a top-level ``async def`` run by ``RayExecutor.call`` with plain data:
the instance and the prediction as dicts, the worker's harness settings
(``WorkerSettings``: the repos directory and the run id) and, to solve, the
config as ``config.model_dump(mode="json")``. The worker builds a harness of its
own (``make_worker_harness``: Docker client, image builder, repository mirror)
and grades into a temporary folder, because on a cluster its filesystem is not
the driver's. It returns everything the driver needs:

- ``grade_task``: ``{"report": <InstanceReport>, "files": {relative path: text or bytes}}``,
  the files being every one the grading wrote: ``<model>/<instance_id>/`` (ours:
  ``report.json``, ``test_output.txt``, ``junit.xml``, ``patch.diff``) and
  ``logs/run_evaluation/<run_id>/<model>/<instance_id>/`` (swebench's);
- ``solve_task``: the instance's ``SolveRecord``.

On the driver, ``RayGrading`` and ``RaySolving`` are the harness's ``grade_with``
and ``generate_predictions``' ``solve_with``: the driver's event loop alone writes
the files (``write_returned_files``), appends ``results.jsonl`` and
``predictions.jsonl`` and, at the end, writes the summaries, as the local path
does. A killed driver loses only the instances in flight.

What a task returns is untrusted input (another process, maybe another machine):
every path must be relative and inside the prediction's own two folders, the
content text or bytes, the report that of the instance, model and fingerprint
sent; otherwise ``TaskResultRefused`` and nothing of that result is written. A
prediction's two folders are replaced by what its task returned, so no file of an
earlier grading stays next to the new verdict.

Every worker needs what a local run needs: Docker with the sandbox image, the
swebench package, and the repository sources at the same ``--repos-dir`` path
(its ``repos.toml`` included); images are built on each node that grades.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.errors import TaskResultRefused
from debatecode.bench.swebench.harness import SWEBenchHarness
from debatecode.bench.swebench.predictions import Prediction
from debatecode.bench.swebench.report import InstanceReport
from debatecode.bench.swebench.swebench_logs import prediction_log_folder
from debatecode.config import DebateConfig
from debatecode.safe_paths import check_name

if TYPE_CHECKING:
    from debatecode.bench._ray import RayExecutor
    from debatecode.bench.swebench.solve import SolveOptions, SolveRecord

__all__ = [
    "RayGrading",
    "RaySolving",
    "WorkerSettings",
    "accept_grading",
    "connect_ray",
    "grade_task",
    "make_worker_harness",
    "prediction_folders",
    "solve_task",
    "write_returned_files",
]


@dataclass(frozen=True)
class WorkerSettings:
    """The harness settings a worker builds its harness from, as plain values."""

    repos_dir: str
    """The repository sources, as an absolute path that every node has."""
    run_id: str

    @classmethod
    def of(cls, harness: SWEBenchHarness) -> WorkerSettings:
        """The settings of the driver's ``harness`` (its repos directory made absolute)."""
        return cls(repos_dir=str(Path(harness.repos_dir).absolute()), run_id=harness.run_id)


def connect_ray(config: DebateConfig | None, *, jobs: int | None, address: str | None) -> RayExecutor:
    """Join (or start) Ray for a SWE-bench run: ``RayExecutor.connect`` with no store (grading and solving open none).

    ``config`` is solve mode's (its model is checked, and a ``local/...`` model gets a
    node per task); None to grade only.

    Raises:
        ConfigError: Ray is not installed (the message names the ``[ray]`` extra); ``jobs`` below 1.
        ClusterUnreachable: the address does not answer.
        UnknownModelError: the config's model no provider answers to.
    """
    from debatecode.bench._ray import RayExecutor

    return RayExecutor.connect([config] if config is not None else [], jobs=jobs, address=address, uses_store=False)


# -- the worker's side ---------------------------------------------------------------------------------


def make_worker_harness(
    instances: Sequence[SWEBenchInstance], *, repos_dir: Path, out: Path, run_id: str
) -> SWEBenchHarness:
    """The harness a task grades or solves with: the default builder and Docker sandbox of this node.

    Raises:
        ConfigError, SWEBenchInputError: as ``SWEBenchHarness``.
    """
    return SWEBenchHarness(instances, repos_dir=repos_dir, out=out, run_id=run_id)


def _collect(out: Path) -> dict[str, str | bytes]:
    """Every regular file under ``out``, by POSIX path relative to it: text when UTF-8, else bytes."""
    files: dict[str, str | bytes] = {}
    for path in sorted(out.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        try:
            files[path.relative_to(out).as_posix()] = data.decode("utf-8")
        except UnicodeDecodeError:
            files[path.relative_to(out).as_posix()] = data
    return files


async def grade_task(
    instance: Mapping[str, Any], prediction: Mapping[str, Any], settings: Mapping[str, Any], input_sha256: str
) -> dict[str, Any]:
    """Grade one prediction on this worker, into a temporary folder; return its report and every file written.

    Raises:
        SandboxUnavailable: the engine of this node does not answer.
        ConfigError, SWEBenchInputError, VersionControlError: the harness cannot be built here.
    """
    chosen = SWEBenchInstance.model_validate(dict(instance))
    graded = Prediction.model_validate(dict(prediction))
    worker = WorkerSettings(**settings)
    with tempfile.TemporaryDirectory(prefix="debatecode-swebench-task-") as tmp:
        out = Path(tmp)
        harness = make_worker_harness([chosen], repos_dir=Path(worker.repos_dir), out=out, run_id=worker.run_id)
        try:
            report = await harness.grade_prediction(graded, input_sha256)
        finally:
            await harness.aclose()
        return {"report": report.model_dump(mode="json"), "files": _collect(out)}


async def solve_task(
    instance: Mapping[str, Any],
    config: Mapping[str, Any],
    strategy: str,
    settings: Mapping[str, Any],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """Solve one instance on this worker (its own harness, checker and client); return its ``SolveRecord``.

    Raises:
        As solving in ``solve.generate_predictions``; ConfigError, SWEBenchInputError: the harness cannot be built here.
    """
    from debatecode.bench.swebench.checking import HarnessChecker
    from debatecode.bench.swebench.solve import SolveOptions
    from debatecode.bench.swebench.solve import _solve_one as solve_instance

    chosen = SWEBenchInstance.model_validate(dict(instance))
    settled = DebateConfig.model_validate(dict(config))
    worker = WorkerSettings(**settings)
    with tempfile.TemporaryDirectory(prefix="debatecode-swebench-task-") as tmp:
        harness = make_worker_harness([chosen], repos_dir=Path(worker.repos_dir), out=Path(tmp), run_id=worker.run_id)
        try:
            checker = HarnessChecker(harness) if strategy == "debate" else None
            record = await solve_instance(harness, chosen, settled, strategy, checker, None, SolveOptions(**options))
        finally:
            await harness.aclose()
    return record.model_dump(mode="json")


# -- the driver's side ---------------------------------------------------------------------------------


def prediction_folders(out: Path, run_id: str, prediction: Prediction) -> tuple[PurePosixPath, PurePosixPath]:
    """The two folders a prediction's grading writes, relative to ``out``: ours and swebench's."""
    from debatecode.bench.swebench.harness import model_dir_name

    instance_id = check_name(prediction.instance_id, "instance_id")  # never ``..``: these folders are emptied
    ours = PurePosixPath(model_dir_name(prediction.model_name_or_path), instance_id)
    theirs = prediction_log_folder(run_id, prediction.model_name_or_path, instance_id)
    return ours, PurePosixPath(theirs)


def _checked_path(label: str, name: object, folders: Sequence[PurePosixPath]) -> PurePosixPath:
    """``name`` as a relative path inside one of ``folders``, or ``TaskResultRefused``."""
    if not isinstance(name, str) or not name or "\x00" in name or "\\" in name:
        raise TaskResultRefused(label, f"{name!r} is not a file path")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise TaskResultRefused(label, f"the path {name!r} leaves its folder")
    if not any(path != folder and path.is_relative_to(folder) for folder in folders):
        allowed = " or ".join(f"{folder}/" for folder in folders)
        raise TaskResultRefused(label, f"the path {name!r} is outside the prediction's folders ({allowed})")
    return path


def write_returned_files(
    out: Path, files: object, folders: Sequence[PurePosixPath], *, label: str = "a task"
) -> list[Path]:
    """Replace ``folders`` (relative to ``out``) with ``files`` (relative path -> text or bytes); return the paths.

    Every path and content is checked before anything is touched: a path must be
    relative, without ``..``, and inside one of ``folders``; content text or bytes.
    Each folder is then emptied (an earlier grading's files go) and the files written.

    Raises:
        TaskResultRefused: ``files`` is not a mapping, or a path or a content is refused.
    """
    if not isinstance(files, Mapping):
        raise TaskResultRefused(label, f"its files are a {type(files).__name__}, not a mapping")
    checked: list[tuple[PurePosixPath, str | bytes]] = []
    for name, content in files.items():
        path = _checked_path(label, name, folders)
        if not isinstance(content, str | bytes):
            raise TaskResultRefused(label, f"the content of {name!r} is a {type(content).__name__}, not text")
        checked.append((path, content))
    root = out.resolve()
    for folder in folders:
        where = out / folder
        if where.is_symlink():
            where.unlink()
        elif where.is_dir():
            shutil.rmtree(where)
    written: list[Path] = []
    for path, content in checked:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        # ``out`` is the driver's; still, never follow a link out of it.
        if not os.path.realpath(target.parent).startswith(str(root) + os.sep):
            raise TaskResultRefused(label, f"the path {path} resolves outside {out}")
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)
        written.append(target)
    return written


def accept_grading(
    out: Path, run_id: str, prediction: Prediction, input_sha256: str, payload: object
) -> InstanceReport:
    """The report in ``payload`` (what ``grade_task`` returned), its files written under ``out``.

    Raises:
        TaskResultRefused: ``payload`` is malformed, its report is not of ``prediction`` (instance,
            model, fingerprint), or a file is refused (``write_returned_files``); nothing is written then.
    """
    label = f"{prediction.instance_id} ({prediction.model_name_or_path})"
    if not isinstance(payload, Mapping) or set(payload) != {"report", "files"}:
        raise TaskResultRefused(label, "it is not a {'report', 'files'} mapping")
    try:
        report = InstanceReport.model_validate(payload["report"])
    except ValidationError as exc:
        raise TaskResultRefused(label, f"its report is malformed: {exc.errors()[0]['msg']}") from exc
    sent = (prediction.instance_id, prediction.model_name_or_path, input_sha256)
    if (report.instance_id, report.model_name_or_path, report.input_sha256) != sent:
        raise TaskResultRefused(label, f"its report is of {report.instance_id} ({report.model_name_or_path})")
    write_returned_files(out, payload["files"], prediction_folders(out, run_id, prediction), label=label)
    return report


class RayGrading:
    """The harness's ``grade_with`` through Ray: each prediction a ``grade_task``, its files written here."""

    def __init__(self, executor: RayExecutor, harness: SWEBenchHarness) -> None:
        self.executor = executor
        self.harness = harness
        self.settings = WorkerSettings.of(harness)

    async def __call__(self, prediction: Prediction, input_sha256: str) -> InstanceReport:
        """Grade ``prediction`` in a Ray task; write what it returns under the harness's ``out``.

        Raises:
            TaskResultRefused: the task's result (see ``accept_grading``).
            SandboxUnavailable: a worker's engine does not answer.
            RunError: the task, its worker or its node failed.
        """
        instance = self.harness.instances[prediction.instance_id]
        arguments = {
            "instance": instance.model_dump(mode="json"),
            "prediction": prediction.model_dump(mode="json"),
            "settings": asdict(self.settings),
            "input_sha256": input_sha256,
        }
        label = f"{prediction.instance_id} ({prediction.model_name_or_path})"
        payload = await self.executor.call(grade_task, arguments, label=label)
        return accept_grading(self.harness.out, self.harness.run_id, prediction, input_sha256, payload)


class RaySolving:
    """``generate_predictions``' ``solve_with`` through Ray: each instance a ``solve_task``."""

    def __init__(
        self,
        executor: RayExecutor,
        harness: SWEBenchHarness,
        config: DebateConfig,
        strategy: str,
        options: SolveOptions | None = None,
    ) -> None:
        from debatecode.bench.swebench.solve import SolveOptions

        self.executor = executor
        self.settings = WorkerSettings.of(harness)
        self.config = config.model_dump(mode="json")
        self.strategy = strategy
        self.options = asdict(options or SolveOptions())

    async def __call__(self, instance: SWEBenchInstance) -> SolveRecord:
        """Solve ``instance`` in a Ray task; its record, checked to be that instance's.

        Raises:
            TaskResultRefused: the record is malformed or of another instance or strategy.
            UnknownModelError, ModelAuthError, ModelUnreachable, ModelRequestsDisabled, SandboxUnavailable:
                as ``solve.generate_predictions``, raised in the worker.
            RunError: the task, its worker or its node failed.
        """
        from debatecode.bench.swebench.solve import SolveRecord

        arguments = {
            "instance": instance.model_dump(mode="json"),
            "config": self.config,
            "strategy": self.strategy,
            "settings": asdict(self.settings),
            "options": self.options,
        }
        payload = await self.executor.call(solve_task, arguments, label=instance.instance_id)
        try:
            record = SolveRecord.model_validate(payload)
        except ValidationError as exc:
            raise TaskResultRefused(instance.instance_id, f"its record is malformed: {exc.errors()[0]['msg']}") from exc
        if (record.instance_id, record.strategy) != (instance.instance_id, self.strategy):
            raise TaskResultRefused(instance.instance_id, f"its record is of {record.instance_id} ({record.strategy})")
        return record
