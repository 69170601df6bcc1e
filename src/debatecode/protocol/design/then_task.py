"""From decision to task: a ``task.md`` skeleton that ``debatecode solve`` accepts.

The skeleton quotes the decision, turns its risks and caveats into
constraints and its open questions into TODO notes, and carries one real
check: the entry point must exist with the agreed signature. That check fails
until the function is written; the user is told to replace or extend it with
tests that pin the behaviour the decision asks for.
"""

from __future__ import annotations

import ast
import keyword
from pathlib import Path

import yaml

from debatecode.errors import TaskError
from debatecode.protocol.design.adr import confidence_label, markdown_block, markdown_inline, slugify
from debatecode.protocol.design.files import write_text_atomic
from debatecode.protocol.design.records import DecisionRecord

__all__ = ["default_entry_point", "task_skeleton", "write_task_skeleton"]

_MAX_ENTRY_POINT = 40


def default_entry_point(record: DecisionRecord) -> str:
    """A Python identifier from the record's slug (or title): ``use-postgres-for-caching`` → ``use_postgres_for_caching``."""
    slug = slugify(record.slug or record.title, max_len=_MAX_ENTRY_POINT)
    name = slug.replace("-", "_")
    if name[0].isdigit():
        name = f"decision_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def _parameters(signature: str, entry_point: str) -> list[str]:
    """The parameter names of ``signature``.

    Raises:
        TaskError: the signature is not a valid ``def`` line for ``entry_point``.
    """
    try:
        tree = ast.parse(signature.rstrip().rstrip(":") + ":\n    ...\n")
    except SyntaxError as exc:
        raise TaskError(
            "<skeleton>", f"signature is not valid Python: {exc.msg}", fix="write it as 'def name(args) -> ret:'"
        ) from exc
    func = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) or func.name != entry_point:
        raise TaskError("<skeleton>", f"signature does not define {entry_point!r}", fix="make the two names match")
    args = func.args
    every = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []), *args.kwonlyargs]
    return [arg.arg for arg in every] + ([args.kwarg.arg] if args.kwarg else [])


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in markdown_block(text).splitlines()]


def _description(record: DecisionRecord, entry_point: str) -> list[str]:
    rec = record.recommendation
    adr = f"ADR {record.number:04d}" if record.number else "a design debate"
    lines = [
        f"Implement `{entry_point}` as decided in {adr} "
        f"(debate {markdown_inline(record.debate_id)}, {markdown_inline(record.date)}).",
        "",
        "Question debated:",
        "",
        *_quote(record.question),
        "",
        "Decision:",
        "",
        *_quote(rec.text),
        "",
        f"Confidence: {confidence_label(rec)}"
        + (f" — {markdown_inline(rec.confidence_reason)}" if rec.confidence_reason else ""),
        "",
        "## Constraints",
        "",
    ]
    constraints = [f"- Caveat: {markdown_inline(caveat)}" for caveat in rec.caveats]
    for risk in record.risks:
        mitigation = f"; mitigate by {markdown_inline(risk.mitigation)}" if risk.mitigation else ""
        constraints.append(f"- Risk ({risk.likelihood}/{risk.impact}): {markdown_inline(risk.risk)}{mitigation}")
    constraints += [f"- Not this: {markdown_inline(alt.option)}" for alt in record.rejected]
    lines += constraints or ["- None recorded."]
    lines += ["", "## Open questions", ""]
    todos = [f"- TODO: {markdown_inline(q)} (answer it here, or state the assumption)" for q in record.open_questions]
    lines += todos or ["- None recorded."]
    lines += [
        "",
        "## About the tests",
        "",
        f"The test below only checks that `{entry_point}` exists with the agreed signature, so it fails until the "
        "function is written. Replace or extend it with tests that pin the behaviour the decision asks for: "
        "the tests are what settle a `debatecode solve` debate.",
    ]
    return lines


def _tests(entry_point: str, parameters: list[str]) -> list[str]:
    return [
        "## Tests",
        "",
        "```python",
        "import inspect",
        "",
        "import solution",
        "",
        "",
        f"def test_{entry_point}_is_defined():",
        f'    assert callable(getattr(solution, "{entry_point}", None)), "solution.py must define {entry_point}"',
        "",
        "",
        f"def test_{entry_point}_has_the_agreed_signature():",
        f"    assert list(inspect.signature(solution.{entry_point}).parameters) == {parameters!r}",
        "```",
    ]


def task_skeleton(record: DecisionRecord, *, entry_point: str | None = None, signature: str | None = None) -> str:
    """A ``task.md`` for ``debatecode solve`` that implements the decision.

    ``entry_point`` defaults to ``default_entry_point(record)``; ``signature``
    to ``def <entry_point>(spec: dict[str, object]) -> dict[str, object]:``,
    a placeholder the user is expected to change.

    Raises:
        TaskError: ``entry_point`` is not a Python identifier, or ``signature`` does not define it.
    """
    name = entry_point or default_entry_point(record)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise TaskError(
            "<skeleton>", f"entry point {name!r} is not a Python identifier", fix="name the function, e.g. 'cache_get'"
        )
    header = signature or f"def {name}(spec: dict[str, object]) -> dict[str, object]:"
    parameters = _parameters(header, name)
    title = " ".join((record.title or record.question).split()) or "Implement the decision"
    front = yaml.safe_dump(
        {"title": title, "entry_point": name, "signature": header.rstrip()},
        sort_keys=False,
        allow_unicode=True,
        width=10**6,
    )
    lines = ["---", front.rstrip(), "---", *_description(record, name), "", *_tests(name, parameters)]
    return "\n".join(lines) + "\n"


def write_task_skeleton(path: Path, text: str) -> Path:
    """Write a task skeleton to ``path``, which must not exist yet.

    Raises:
        TaskError: the file already exists.
        OSError: the folder is missing or not writable.
    """
    path = Path(path)
    if not write_text_atomic(path, text, overwrite=False):
        raise TaskError(
            path, "the file already exists; the task skeleton is never written over it", fix="pass another path"
        )
    return path
