"""Host side of the two-process checker: build its job, and read its verdict as hostile input.

The checker (``_guest/checker.py`` and the parts joined before it, ``wire.checker_source``) runs the tests in a process the code under
test cannot touch and writes *verdict lines* to its own stdout, which the code
under test never holds:

    @@DC_VERDICT@@ <nonce> {"event": "result", "name": ..., "outcome": ..., ...}

The nonce is made here per job and reaches the checker through a file it reads
and deletes before any candidate code runs. Everything else the job leaves
behind (its exit code, stderr, files) proves nothing and is not read for the
verdict. Verdict lines are still parsed as untrusted input: each line is
size-capped and depth-checked, each record is type-checked, and a record that
does not fit is dropped with a note, never raised.
"""

from __future__ import annotations

import binascii
import functools
import json
import marshal
import re
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from debatecode.sandbox.base import ExecJob, Limits
from debatecode.sandbox.results import TestCaseResult, TestOutcome
from debatecode.sandbox.wire import checker_source

__all__ = [
    "CHECKER_FILE",
    "CheckerMode",
    "ParsedVerdict",
    "ProbeRecord",
    "ResultRecord",
    "checker_job",
    "checker_source",
    "parse_verdict",
]

MARK = "@@DC_VERDICT@@"
CHECKER_FILE = "_dc_check.py"
CODE_FILE = ".dc_check.code"
"""The checker, compiled here: ``cache_tag`` line, then base64 of its marshalled code object."""
LOADER = (
    "import binascii,marshal,os,sys\n"
    "t,_,b=open('.dc_check.code').read().partition('\\n')\n"
    "c=marshal.loads(binascii.a2b_base64(b)) if t==sys.implementation.cache_tag else "
    "compile(open('_dc_check.py').read(),'_dc_check.py','exec')\n"
    "exec(c,{'__name__':'__main__','__file__':os.path.abspath('_dc_check.py'),'__builtins__':__builtins__})\n"
)
"""``python3 -c LOADER``: runs the precompiled checker when this interpreter matches ours, else its source.

Compiling the checker's source costs about 15 ms per job; loading the marshalled code about 0.3 ms.
Interpreters of one minor version share a bytecode format, which ``cache_tag`` names."""
PLAN_FILE = ".dc_plan.json"
NONCE_FILE = ".dc_nonce"
CALLS_FILE = ".dc_calls.json"
TASK_FILE = "_dc_task.py"
"""The task's own definitions (the checker's ``TASK_FILE``)."""
LINE_CAP = 64 * 1024
"""A verdict line longer than this is dropped (the checker caps its messages well below it)."""
MAX_RECORDS = 10_000
MESSAGE_CAP = 4000

CheckerMode = Literal["light", "pytest", "probe"]


@functools.cache
def checker_code() -> str:
    """The checker compiled by this interpreter, as text: ``cache_tag``, a newline, base64 of the marshalled code."""
    code = compile(checker_source(), CHECKER_FILE, "exec", dont_inherit=True)
    encoded = binascii.b2a_base64(marshal.dumps(code), newline=False).decode("ascii")
    return f"{sys.implementation.cache_tag}\n{encoded}"


def checker_job(
    *,
    mode: CheckerMode,
    code: str,
    test_files: dict[str, str],
    limits: Limits,
    test_timeout_s: float,
    entry_point: str | None = None,
    calls: Sequence[str] = (),
    extra_files: dict[str, str] | None = None,
    task_code: str = "",
) -> tuple[ExecJob, str]:
    """A sandbox job that checks ``code`` against ``test_files``, and the nonce its verdict must carry.

    ``task_code`` holds definitions the tests take from the task rather than from the code under test
    (a HumanEval prompt's helpers and imports): the checker runs it in its own process, over the
    solution's names, so a redefinition in ``code`` never reaches a test.
    """
    nonce = secrets.token_hex(16)
    plan: dict[str, object] = {
        "mode": mode,
        "files": list(test_files),
        "entry_point": entry_point,
        "test_timeout_s": test_timeout_s,
        "nonce_file": NONCE_FILE,
    }
    files = {
        **(extra_files or {}),
        **test_files,
        "solution.py": code,
        CHECKER_FILE: checker_source(),
        CODE_FILE: checker_code(),
    }
    if task_code:
        plan["task_file"] = TASK_FILE
        files[TASK_FILE] = task_code
    if mode == "probe":
        plan["calls_file"] = CALLS_FILE
        files[CALLS_FILE] = json.dumps(list(calls))
    files[PLAN_FILE] = json.dumps(plan)
    files[NONCE_FILE] = nonce
    # -I: no work dir on sys.path, no PYTHON* variables; -S (not for pytest, which lives in site-packages):
    # no site import, a few milliseconds less per job. The checker adds the image's PYTHONPATH back.
    flags = ["-I", "-B"] if mode == "pytest" else ["-I", "-S", "-B"]
    job = ExecJob(files=files, argv=["python3", *flags, "-c", LOADER, PLAN_FILE], limits=limits)
    return job, nonce


_ADDRESS = re.compile(r"(?<= at )0x[0-9a-fA-F]{4,16}\b")
"""An object's address in a default repr (``<generator object f at 0x7f5d...>``): different in every run."""


def without_addresses(text: str) -> str:
    """``text`` with object addresses masked, so that the same failure reads the same in every run.

    The messages are shown to models; an address that changes per run would make
    a seeded, greedy session differ from its rerun.
    """
    return _ADDRESS.sub("0x…", text)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class ResultRecord(_Record):
    """One test's outcome as the checker reported it (a wire record; callers turn it into a ``TestCaseResult``)."""

    name: str = Field(max_length=500)
    outcome: TestOutcome
    duration_s: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    message: str = ""
    file: str = Field(default="", max_length=500)

    @field_validator("message")
    @classmethod
    def _stable_message(cls, value: str) -> str:
        return without_addresses(value)

    def case(self, suite: str = "visible") -> TestCaseResult:
        """This test's result, in ``suite``."""
        return TestCaseResult(
            name=self.name, outcome=self.outcome, message=self.message, duration_s=self.duration_s, suite=suite
        )


class ProbeRecord(_Record):
    """One evaluated call: ``value`` (its repr), ``raises`` (exception type) or ``timeout``."""

    call: str
    outcome: Literal["value", "raises", "timeout"]
    expected: str = ""
    message: str = ""

    @field_validator("expected", "message")
    @classmethod
    def _stable_text(cls, value: str) -> str:
        return without_addresses(value)


class _Collected(_Record):
    tests: list[str] = Field(max_length=MAX_RECORDS)
    files: list[str] = Field(default_factory=list, max_length=MAX_RECORDS)


class _Message(_Record):
    message: str = ""


@dataclass
class ParsedVerdict:
    """What the checker reported, or why nothing trustworthy arrived."""

    collected: list[str] | None = None
    results: list[ResultRecord] = field(default_factory=list)
    probes: list[ProbeRecord] = field(default_factory=list)
    load_error: str = ""
    checker_error: str = ""
    done: bool = False
    notes: list[str] = field(default_factory=list)
    """Why lines were dropped: forged nonces, oversized or malformed records."""

    @property
    def problem(self) -> str:
        """Why the verdict is incomplete ("" when the checker finished)."""
        if self.checker_error:
            return f"the checker failed: {self.checker_error[-500:]}"
        if not self.done:
            return "the checker did not finish (it was killed, or ran out of time or memory)"
        return ""


def parse_verdict(stdout: str, nonce: str) -> ParsedVerdict:
    """The verdict carried by ``stdout``'s lines that bear ``nonce``. Never raises."""
    verdict = ParsedVerdict()
    prefix = f"{MARK} {nonce} "
    forged = 0
    for line in stdout.splitlines():
        if not line.startswith(MARK):
            continue
        if not line.startswith(prefix):
            forged += 1
            continue
        if len(line) > LINE_CAP:
            verdict.notes.append(f"dropped a verdict line of {len(line)} characters")
            continue
        if len(verdict.results) + len(verdict.probes) >= MAX_RECORDS:
            verdict.notes.append("dropped verdict lines past the record limit")
            break
        _take(verdict, line[len(prefix) :])
    if forged:
        verdict.notes.append(f"ignored {forged} verdict line(s) without this job's nonce")
    return verdict


def _take(verdict: ParsedVerdict, text: str) -> None:
    try:
        record = json.loads(text)
    except (ValueError, RecursionError, MemoryError):
        verdict.notes.append("dropped a verdict line that is not valid JSON")
        return
    if not isinstance(record, dict):
        verdict.notes.append("dropped a verdict line that is not a record")
        return
    event = record.get("event")
    try:
        if event == "collected":
            collected = _Collected.model_validate(record)
            verdict.collected = collected.tests
        elif event == "result":
            result = ResultRecord.model_validate(record)
            verdict.results.append(result.model_copy(update={"message": result.message[-MESSAGE_CAP:]}))
        elif event == "probe":
            verdict.probes.append(ProbeRecord.model_validate(record))
        elif event == "load_error":
            verdict.load_error = _Message.model_validate(record).message[-MESSAGE_CAP:]
        elif event == "checker_error":
            verdict.checker_error = _Message.model_validate(record).message[-MESSAGE_CAP:]
        elif event == "done":
            verdict.done = True
        else:
            verdict.notes.append(f"dropped a verdict record with unknown event {str(event)[:40]!r}")
    except ValidationError as exc:
        verdict.notes.append(f"dropped a malformed {str(event)[:40]} record ({exc.error_count()} problem(s))")
