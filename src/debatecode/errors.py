"""The one exception tree of debatecode.

Every error the package raises on purpose derives from ``DebatecodeError``.
User mistakes (bad config, bad task file, unknown names) are kept apart from
run failures (model, sandbox, budget, storage), so the CLI can map them to
distinct exit codes and advice::

    DebatecodeError
    ├── UserError                 the user can fix it by changing input   (exit 2)
    │   ├── ConfigError           bad or unknown configuration key
    │   ├── TaskError             malformed or missing task file
    │   ├── UnknownModelError     model string no provider answers to
    │   ├── RecordNotFound        no stored episode or lesson with that id
    │   └── SessionNotFound       no stored session with that id
    └── RunError                  something failed while running           (exit 3)
        ├── ModelError            a model call failed for good
        │   ├── ModelUnreachable  connection refused, DNS, repeated timeouts
        │   ├── ModelAuthError    bad or missing credentials (never retried)
        │   ├── ModelRequestError the provider rejected the request (never retried)
        │   ├── ModelRequestsDisabled  network model refused under pytest
        │   ├── ModelTransientError  rate limit, 5xx, timeout: retried by the client
        │   └── ScriptExhausted   a scripted model has no reply left
        ├── BudgetExceeded        the session's token budget is spent
        ├── SandboxError          the sandbox could not run a job
        │   └── SandboxUnavailable  the chosen backend is not usable here
        ├── StoreError            the session store failed
        ├── SessionBusy           another process is running or resuming that session
        ├── DiskWriteError        the disk refused a write: full, over quota or read-only
        ├── VersionControlError   the git worktree could not be updated
        └── ClusterUnreachable    the Ray cluster of --ray-address does not answer

Errors carry context (model name, container id, file and line) as attributes
and say what to do in their message.

``ExitCode`` lists every status the ``debatecode`` command exits with; each
error class carries the one of its kind as ``exit_code``. Anything else that
escapes a command is a bug: the CLI's error boundary reports it in one line and
exits ``RUN_FAILED``.
"""

from __future__ import annotations

import errno
from enum import IntEnum
from pathlib import Path
from typing import Literal

TransientReason = Literal["rate_limit", "server_error", "timeout", "connection"]

__all__ = [
    "BudgetExceeded",
    "ClusterUnreachable",
    "ConfigError",
    "DebatecodeError",
    "DiskWriteError",
    "ExitCode",
    "ModelAuthError",
    "ModelError",
    "ModelRequestError",
    "ModelRequestsDisabled",
    "ModelTransientError",
    "ModelUnreachable",
    "RecordNotFound",
    "RunError",
    "SandboxError",
    "SandboxUnavailable",
    "ScriptExhausted",
    "SessionBusy",
    "SessionNotFound",
    "StoreError",
    "TaskError",
    "UnknownModelError",
    "UserError",
    "VersionControlError",
    "disk_write_failure",
]


class ExitCode(IntEnum):
    """The exit statuses of the ``debatecode`` command (documented in ``docs/cli.md``)."""

    OK = 0
    """Done; for ``solve``: the final code passes every visible test."""
    TESTS_FAILED = 1
    """``solve`` completed but the final code fails some test, or no agent produced code."""
    BAD_INPUT = 2
    """Bad input (file, flag, config, environment variable); the message names the fix."""
    RUN_FAILED = 3
    """The run failed (model, sandbox, budget, store) or an unexpected error occurred."""
    GATE_REJECTED = 4
    """A human rejected the debate at an approval gate (or the gate timed out as a rejection)."""
    ESCALATED = 5
    """``debate``: the debaters could not settle the question and nobody chose an option; the record says so."""
    PAUSED = 6
    """A checkpoint went unanswered past ``checkpoints.timeout_s``: the session paused; ``--resume`` continues it."""
    INTERRUPTED = 130
    """Interrupted (Ctrl-C)."""


class DebatecodeError(Exception):
    """Root of every error debatecode raises on purpose."""

    exit_code: int = ExitCode.RUN_FAILED


class UserError(DebatecodeError):
    """The input is wrong; changing it fixes the problem."""

    exit_code = ExitCode.BAD_INPUT


class RunError(DebatecodeError):
    """Something failed while running; the input may be fine."""

    exit_code = ExitCode.RUN_FAILED


class ConfigError(UserError):
    """A configuration file, variable or flag is invalid or unknown."""

    def __init__(self, message: str, *, source: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.key = key


class TaskError(UserError):
    """A task file is missing or malformed.

    The message names the file, the line (when known) and the fix.
    """

    def __init__(self, path: Path | str, message: str, *, line: int | None = None, fix: str | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.fix = fix
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        text = f"{where}: {message}"
        if fix:
            text += f"\n  fix: {fix}"
        super().__init__(text)
        self.reason = message


class UnknownModelError(UserError):
    """No provider answers to the model string."""

    def __init__(self, model: str, known_prefixes: list[str], detail: str | None = None) -> None:
        self.model = model
        self.known_prefixes = known_prefixes
        text = f"unknown model {model!r}"
        if detail:
            text += f" ({detail})"
        text += ". Known prefixes: " + ", ".join(known_prefixes)
        super().__init__(text)


class SessionNotFound(UserError):
    """No stored session matches the given id."""

    def __init__(self, session_id: str, detail: str | None = None) -> None:
        self.session_id = session_id
        text = f"no session matches {session_id!r}"
        if detail:
            text += f": {detail}"
        super().__init__(text + ". List sessions with `debatecode sessions list`.")


class SessionBusy(RunError):
    """Another process runs (or resumes) the session: one at a time may write its turns.

    A run failure (exit 3), not bad input: the same command succeeds once that process has ended.

    ``pid`` and ``host`` name that process; ``resuming`` says whether it is a resume.
    """

    def __init__(self, session_id: str, *, pid: int, host: str, resuming: bool, here: bool) -> None:
        self.session_id = session_id
        self.pid = pid
        self.host = host
        doing = "resumed" if resuming else "run"
        where = f"pid {pid}" if here else f"pid {pid} on host {host}"
        stop = f"with `kill {pid}`" if here else f"on {host}"
        super().__init__(
            f"this session ({session_id}) is already being {doing} ({where}); wait for it to end, "
            f"or stop it {stop}, then run --resume {session_id} again"
        )


class RecordNotFound(UserError):
    """No stored record (an episode, a lesson) matches the given id, or its prefix matches several.

    The message names the id and the command that lists the records.
    """


class ModelError(RunError):
    """A model call failed and will not be retried further."""

    def __init__(self, message: str, *, model: str | None = None) -> None:
        super().__init__(message)
        self.model = model


class ModelUnreachable(ModelError):
    """The model's server could not be reached (after retries)."""


class ModelAuthError(ModelError):
    """The provider rejected the credentials. Never retried."""


class ModelRequestError(ModelError):
    """The provider rejected the request as malformed. Never retried."""


class ModelRequestsDisabled(ModelError):
    """A network model was called while model requests are disabled (under pytest)."""


class ModelTransientError(ModelError):
    """A failure worth retrying: rate limit, server error (5xx), timeout or lost connection.

    Transports raise it; ``LLMClient`` retries it with backoff and, once the
    retries are spent, raises ``ModelUnreachable`` (timeouts, connections) or
    a plain ``ModelError`` (rate limits, server errors) instead.
    """

    def __init__(self, message: str, *, model: str | None = None, reason: TransientReason = "server_error") -> None:
        super().__init__(message, model=model)
        self.reason: TransientReason = reason


class ScriptExhausted(ModelError):
    """A scripted model was asked for a reply it does not have."""


class BudgetExceeded(RunError):
    """The session's token budget is spent; partial results are saved."""

    def __init__(self, used: int, budget: int) -> None:
        self.used = used
        self.budget = budget
        super().__init__(
            f"token budget exhausted: {used} of {budget} tokens used. "
            "Raise `token_budget` in debatecode.toml or pass --token-budget."
        )


class SandboxError(RunError):
    """The sandbox could not run a job (not: the job's code failed)."""

    def __init__(self, message: str, *, backend: str | None = None, container_id: str | None = None) -> None:
        super().__init__(message)
        self.backend = backend
        self.container_id = container_id


class SandboxUnavailable(SandboxError):
    """The requested sandbox backend cannot be used on this machine."""


class StoreError(RunError):
    """The session store could not be read or written."""


DISK_ERRNOS = {
    errno.ENOSPC: ("no space left on the device", "free space on that disk"),
    errno.EDQUOT: ("the disk quota is exceeded", "free space within your quota (or have it raised)"),
    errno.EROFS: ("the file system is read-only", "make it writable"),
}
"""The ``OSError`` codes that mean the disk, not debatecode, refused a write: what each means, and its fix."""


def disk_write_failure(exc: BaseException) -> OSError | None:
    """The ``OSError`` in ``exc``'s chain saying the disk refused a write (``DISK_ERRNOS``), or None."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, OSError) and link.errno in DISK_ERRNOS:
            return link
        link = link.__cause__ or link.__context__
    return None


class DiskWriteError(RunError):
    """The disk refused a write: it is full (ENOSPC), over its quota (EDQUOT) or read-only (EROFS).

    ``path`` is the file being written (None when the OS did not say), ``code`` the errno's name.
    The message says what happened and where, then ``kept`` (what is safe), the fix, and ``then``
    (how to go on).
    """

    def __init__(self, cause: OSError, *, kept: str, then: str) -> None:
        self.path = cause.filename
        self.code = errno.errorcode.get(cause.errno or 0, str(cause.errno))
        what, fix = DISK_ERRNOS.get(cause.errno or 0, (cause.strerror or "the write failed", "fix the disk"))
        where = f" while writing {cause.filename}" if cause.filename else ""
        super().__init__(f"{what} ({self.code}){where}. {kept} {fix[0].upper()}{fix[1:]}, then {then}.")


class VersionControlError(RunError):
    """The per-session git worktree could not be created or updated."""


class ClusterUnreachable(RunError):
    """The Ray cluster at ``--ray-address`` (or ``RAY_ADDRESS``) does not answer; ``address`` names it."""

    def __init__(self, address: str, detail: str) -> None:
        super().__init__(
            f"the Ray cluster at {address} does not answer ({detail}). Start it (`ray start --head` on its head "
            "node), check the address and that its port is open from here, or drop --ray-address to run on a "
            "Ray instance of this machine."
        )
        self.address = address
