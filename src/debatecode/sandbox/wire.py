"""Host side of the runner protocol: the runner's source, the payload, the result line.

The runner (``runner.py``) travels into the sandbox as source text. Its input
is a JSON payload, passed either as base64 pieces in the environment
(``DC_PAYLOAD_0..N``, for fresh containers) or on stdin (for local processes).
Its output is one line on its stdout, ``@@DEBATECODE_RESULT@@{json}``; the last
such line wins.

Warm containers run ``runner.py`` + ``pool_server.py`` as one long-lived
server: one payload per line in, an ACK line and a result line out per job.

The test checker travels the same way: its parts (``CHECKER_PARTS``: the codec,
the candidate side, the checker side) are joined into one file,
``checker_source``, which ``verdict.checker_job`` writes into each job.
"""

from __future__ import annotations

import base64
import functools
import json
from importlib import resources
from typing import Any

from debatecode.sandbox.base import ExecJob, ExecResult

__all__ = [
    "ACK_MARKER",
    "CHECKER_PARTS",
    "ENV_CHUNK_CHARS",
    "MARKER",
    "MAX_ENV_PAYLOAD_CHARS",
    "OOM_COUNTERS",
    "PAYLOAD_ENV_PREFIX",
    "READY_MARKER",
    "RunnerProtocolError",
    "build_payload",
    "checker_source",
    "encode_payload",
    "max_result_bytes",
    "parse_runner_output",
    "payload_bytes",
    "request_line",
    "result_from_runner",
    "runner_source",
    "server_source",
]

MARKER = "@@DEBATECODE_RESULT@@"
READY_MARKER = "@@DEBATECODE_READY@@"
ACK_MARKER = "@@DEBATECODE_ACK@@"
OOM_COUNTERS = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")
"""Where a container sees its memory cgroup's ``oom_kill`` count (cgroup v1, then v2)."""
PAYLOAD_ENV_PREFIX = "DC_PAYLOAD_"
ENV_CHUNK_CHARS = 96_000
"""Each env piece stays under the kernel's MAX_ARG_STRLEN (128 KiB per string)."""
MAX_ENV_PAYLOAD_CHARS = 1_500_000
"""All pieces together must stay under ARG_MAX (2 MiB with the usual 8 MiB stack rlimit)."""
CHECKER_PARTS = ("codec.py", "candidate.py", "remote.py", "session.py", "modes.py", "checker.py")
"""The test checker's source files in ``_guest/``, in the order they are joined: each uses names of those before it."""
_FUTURE_IMPORT = "\nfrom __future__ import annotations\n"


class RunnerProtocolError(ValueError):
    """The runner's output held no valid result line, or it reported an internal error."""


@functools.cache
def runner_source() -> str:
    """The runner script's source text, to run as ``python3 -c <source>``."""
    return resources.files("debatecode.sandbox._guest").joinpath("runner.py").read_text(encoding="utf-8")


@functools.cache
def server_source() -> str:
    """The warm-container server's source (runner + server), to run as ``python3 -c <source> serve``."""
    server = resources.files("debatecode.sandbox._guest").joinpath("pool_server.py").read_text(encoding="utf-8")
    return runner_source() + "\n\n" + server


@functools.cache
def checker_source() -> str:
    """The test checker as one script (``CHECKER_PARTS`` joined), to write into a job and run.

    A ``from __future__`` import must open a file, so only the first part keeps its own;
    the others' docstrings and ``TYPE_CHECKING`` blocks stay, inert.
    """
    guest = resources.files("debatecode.sandbox._guest")
    first, *rest = (guest.joinpath(name).read_text(encoding="utf-8") for name in CHECKER_PARTS)
    return "\n\n".join([first, *(part.replace(_FUTURE_IMPORT, "\n", 1) for part in rest)])


def build_payload(
    job: ExecJob,
    *,
    reap_uid: bool = False,
    drop_uid: int | None = None,
    oom_counters: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The runner's input for ``job``.

    ``reap_uid`` lets the runner kill every process of its uid after the job;
    only set it when the runner owns a whole PID namespace. ``drop_uid`` makes a
    runner started as root switch to that uid (and gid) before anything else.
    ``oom_counters`` name files holding the memory cgroup's ``oom_kill`` count.
    """
    return {
        "oom_counters": list(oom_counters),
        "files": dict(job.files),
        "argv": list(job.argv),
        "timeout_s": job.limits.timeout_s,
        "output_bytes": job.limits.output_bytes,
        "collect": list(job.collect),
        "env": dict(job.env),
        "reap_uid": reap_uid,
        "drop_uid": drop_uid,
    }


def payload_bytes(job: ExecJob, *, reap_uid: bool = False, drop_uid: int | None = None) -> bytes:
    """The payload as UTF-8 JSON, for the runner's stdin."""
    payload = build_payload(job, reap_uid=reap_uid, drop_uid=drop_uid)
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def request_line(job: ExecJob) -> bytes:
    """The payload as one JSON line for a warm container's server.

    Raises:
        ValueError: the payload exceeds the size a fresh container could take
            (``MAX_ENV_PAYLOAD_CHARS`` once encoded), so both paths accept the same jobs.
    """
    payload = build_payload(job, reap_uid=True, oom_counters=OOM_COUNTERS)
    line = json.dumps(payload, ensure_ascii=True).encode("ascii")
    if (len(line) + 2) // 3 * 4 > MAX_ENV_PAYLOAD_CHARS:
        raise ValueError(_too_large(job, (len(line) + 2) // 3 * 4))
    return line + b"\n"


def _too_large(job: ExecJob, size: int) -> str:
    return (
        f"job payload is {size} bytes encoded, over the {MAX_ENV_PAYLOAD_CHARS}-byte limit "
        f"of a sandbox job ({len(job.files)} files); send fewer or smaller files"
    )


def encode_payload(job: ExecJob, *, reap_uid: bool = False, oom_counters: tuple[str, ...] = ()) -> dict[str, str]:
    """The payload as environment variables ``DC_PAYLOAD_0..N`` (pieces of one base64 string).

    Raises:
        ValueError: the encoded payload exceeds ``MAX_ENV_PAYLOAD_CHARS``.
    """
    payload = json.dumps(build_payload(job, reap_uid=reap_uid, oom_counters=oom_counters), ensure_ascii=False).encode(
        "utf-8"
    )
    encoded = base64.b64encode(payload).decode("ascii")
    if len(encoded) > MAX_ENV_PAYLOAD_CHARS:
        raise ValueError(_too_large(job, len(encoded)))
    return {
        f"{PAYLOAD_ENV_PREFIX}{index}": encoded[start : start + ENV_CHUNK_CHARS]
        for index, start in enumerate(range(0, len(encoded), ENV_CHUNK_CHARS))
    }


def max_result_bytes(job: ExecJob) -> int:
    """An upper bound on the runner's output for ``job`` (JSON escaping can grow text sixfold)."""
    captured = job.limits.output_bytes * (2 + len(job.collect))
    return 6 * captured + 64 * 1024


def parse_runner_output(text: str) -> dict[str, Any]:
    """The result dict from the runner's stdout (its last marker line).

    Raises:
        RunnerProtocolError: no marker line, invalid JSON, or a runner-internal error.
    """
    position = text.rfind(MARKER)
    while position > 0 and text[position - 1] != "\n":
        position = text.rfind(MARKER, 0, position)
    if position < 0:
        tail = text[-500:].strip()
        raise RunnerProtocolError(f"the runner printed no result line; its output ended with: {tail!r}")
    line = text[position + len(MARKER) :].split("\n", 1)[0]
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RunnerProtocolError(f"the runner's result line is not valid JSON: {exc!r:.200}") from exc
    if not isinstance(data, dict):
        raise RunnerProtocolError("the runner's result line is not a JSON object")
    if "internal_error" in data:
        raise RunnerProtocolError(f"the runner failed: {data['internal_error']}")
    return data


def result_from_runner(data: dict[str, Any], backend: str) -> ExecResult:
    """An ``ExecResult`` from a parsed runner result.

    Raises:
        RunnerProtocolError: the result does not have the expected fields.
    """
    try:
        return ExecResult(
            status=data["status"],
            exit_code=data.get("exit_code"),
            stdout=data.get("stdout", ""),
            stderr=data.get("stderr", ""),
            stdout_truncated=bool(data.get("stdout_truncated", False)),
            stderr_truncated=bool(data.get("stderr_truncated", False)),
            duration_s=float(data.get("duration_s", 0.0)),
            files=data.get("files") or {},
            backend=backend,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise RunnerProtocolError(f"the runner's result is malformed: {exc}") from exc
