"""The SWE-bench bridge's errors, placed in debatecode's one exception tree.

::

    UserError
    ├── SWEBenchInputError      a dataset, predictions or repos file (or directory) is wrong
    └── InstanceSetupError      one instance cannot be graded as given (test_patch does not apply)
    RunError
    ├── SandboxError
    │   └── ImageBuildError     an image layer (base, env, instance) could not be built
    └── TaskResultRefused       a Ray task returned what the driver will not write (``remote``)

A failing patch is a *result* (``patch_failed``), never an exception.
"""

from __future__ import annotations

from pathlib import Path

from debatecode.errors import RunError, SandboxError, UserError

__all__ = ["ImageBuildError", "InstanceSetupError", "SWEBenchInputError", "TaskResultRefused"]


class SWEBenchInputError(UserError):
    """Bad input: names the file, the line (or item) and the field, and says what is expected."""

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        line: int | None = None,
        item: int | None = None,
        field: str | None = None,
        instance_id: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.line = line
        self.item = item
        self.field = field
        self.instance_id = instance_id
        where = str(self.path)
        if line is not None:
            where += f":{line}"
        elif item is not None:
            where += f" (item {item})"
        parts = [where]
        if instance_id:
            parts.append(f"instance {instance_id!r}")
        if field:
            parts.append(f"field {field!r}")
        super().__init__(": ".join(parts) + f": {message}")
        self.reason = message


class ImageBuildError(SandboxError):
    """A base, env or instance image could not be built (the message carries the build log's tail)."""

    def __init__(self, layer: str, message: str) -> None:
        super().__init__(f"building the SWE-bench {layer} image failed: {message}", backend="docker")
        self.layer = layer


class InstanceSetupError(UserError):
    """One instance cannot be graded as given (its ``test_patch`` does not apply, its patched files are too big)."""

    def __init__(self, instance_id: str, message: str) -> None:
        super().__init__(f"instance {instance_id!r}: {message}")
        self.instance_id = instance_id


class TaskResultRefused(RunError):
    """What a grading or solving task returned is refused: nothing of it is written.

    A task runs in another process, maybe on another machine, so its result is
    untrusted input: a file path outside the prediction's own folders (``../../x``,
    an absolute path), content that is neither text nor bytes, or a report of
    another instance than the one sent.
    """

    def __init__(self, label: str, message: str) -> None:
        super().__init__(f"{label}: the task's result is refused: {message}")
        self.label = label
