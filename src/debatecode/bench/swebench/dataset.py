"""SWE-bench instances from a local JSON or JSONL file, validated field by field.

The format is SWE-bench's: each instance is an object with ``instance_id``,
``repo`` (``owner/name``), ``base_commit``, ``problem_statement``, ``patch``
(the gold fix), ``test_patch``, ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` (lists of
test ids, or JSON strings of such lists, as SWE-bench ships them), ``version``
and ``environment_setup_commit``. Other keys (``hints_text``, ``created_at``...)
are accepted; ``log_parser`` and ``eval_type``, which newer SWE-bench instances
carry, override the repository's registered grading spec.

A ``.jsonl`` file holds one instance per line (blank lines are skipped); any
other file holds a JSON list of instances. Errors name the file, the line (JSONL)
or item (JSON list), the instance and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from debatecode.bench.swebench.errors import SWEBenchInputError
from debatecode.input_files import MAX_DATASET_BYTES, InputFileError, read_input_file
from debatecode.safe_paths import UnsafeName, check_name

__all__ = [
    "REQUIRED_FIELDS",
    "SWEBenchInstance",
    "instances_from_records",
    "load_instances",
    "read_records",
    "record_error",
    "select_instances",
]

REQUIRED_FIELDS = (
    "instance_id",
    "repo",
    "base_commit",
    "problem_statement",
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "version",
    "environment_setup_commit",
)
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")
_REPO = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*/(?!\.\.?$)[A-Za-z0-9_.-]+$")  # no ``..``: it names folders
_EVAL_TYPES = ("pass_and_fail", "fail_only")


class SWEBenchInstance(BaseModel):
    """One task: a repository at ``base_commit``, an issue, and the tests that decide it."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    repo: str
    """``owner/name``; its source is looked up in ``--repos-dir``."""
    base_commit: str
    problem_statement: str
    patch: str
    """The gold (reference) fix, a unified diff."""
    test_patch: str
    """The tests that check the fix, a unified diff; never shown to a solver."""
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    version: str
    environment_setup_commit: str
    """The commit whose requirements files define the environment image."""
    hints_text: str = ""
    log_parser: str | None = None
    """A parser name from swebench's ``PARSER_REGISTRY``; overrides the repository's spec."""
    eval_type: str | None = None
    """``pass_and_fail`` or ``fail_only``; overrides the repository's spec."""

    @property
    def tests(self) -> list[str]:
        """FAIL_TO_PASS then PASS_TO_PASS, without repeats: the tests a grading run executes."""
        return list(dict.fromkeys([*self.FAIL_TO_PASS, *self.PASS_TO_PASS]))


def read_records(path: Path, *, what: str) -> Iterator[tuple[dict[str, Any], int | None, int | None]]:
    """Objects of a JSON list or JSONL file, each with its line (JSONL) or item number (JSON).

    A JSON object at the top level is read as a mapping of records (SWE-bench accepts
    predictions keyed by instance id).

    Raises:
        SWEBenchInputError: the file is missing or unreadable, is not valid JSON or JSONL,
            or holds something other than objects.
    """
    try:
        text = read_input_file(path, max_bytes=MAX_DATASET_BYTES, what=f"{what} file").decode("utf-8")
    except InputFileError as exc:
        raise SWEBenchInputError(path, exc.reason) from exc
    except UnicodeDecodeError as exc:
        raise SWEBenchInputError(path, f"cannot read the {what} file: {exc}") from exc
    if path.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SWEBenchInputError(path, f"not valid JSON ({exc.msg}, column {exc.colno})", line=number) from exc
            if not isinstance(record, dict):
                raise SWEBenchInputError(path, f"expected a JSON object, got {type(record).__name__}", line=number)
            yield record, number, None
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SWEBenchInputError(path, f"not valid JSON ({exc.msg}, column {exc.colno})", line=exc.lineno) from exc
    items = list(data.values()) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise SWEBenchInputError(path, f"expected a JSON list of {what} objects (or a .jsonl file)")
    for index, record in enumerate(items, start=1):
        if not isinstance(record, dict):
            raise SWEBenchInputError(path, f"expected a JSON object, got {type(record).__name__}", item=index)
        yield record, None, index


FieldError = Callable[[str, str], SWEBenchInputError]
"""``(field, message)`` -> the error for that field of one record, placed at its line (or item) and instance."""


def record_error(source: Path | str, record: dict[str, Any], line: int | None, item: int | None) -> FieldError:
    """The ``FieldError`` of one record as ``read_records`` yields it (``source`` names the file or dataset)."""
    identifier = record.get("instance_id") if isinstance(record.get("instance_id"), str) else None

    def error(field: str, message: str) -> SWEBenchInputError:
        return SWEBenchInputError(source, message, line=line, item=item, field=field, instance_id=identifier)

    return error


def _test_list(value: object) -> list[str] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value):
        return [str(item) for item in value]
    return None


def _instance(record: dict[str, Any], error: FieldError) -> SWEBenchInstance:
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        raise error(missing[0], "missing" + (f" (also missing: {', '.join(missing[1:])})" if missing[1:] else ""))
    values: dict[str, Any] = {}
    for name in ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch"):
        value = record[name]
        if not isinstance(value, str):
            raise error(name, f"expected a string, got {type(value).__name__}")
        values[name] = value
    for name in ("instance_id", "problem_statement"):
        if not values[name].strip():
            raise error(name, "must not be empty")
    try:  # it names the instance's folders: ``../x`` or ``/tmp/x`` would write outside --out
        check_name(values["instance_id"], "instance_id")
    except UnsafeName as exc:
        raise error("instance_id", exc.reason) from exc
    if not _REPO.match(values["repo"]):
        raise error("repo", f"expected 'owner/name', got {values['repo']!r}")
    for name in ("base_commit", "environment_setup_commit"):
        value = record[name]
        if not isinstance(value, str) or not _COMMIT.match(value):
            raise error(name, f"expected a git commit hash (7 to 64 lower-case hex digits), got {value!r}")
        values[name] = value
    version = record["version"]
    if isinstance(version, bool) or not isinstance(version, str | int | float):
        raise error("version", f"expected a string, got {type(version).__name__}")
    values["version"] = str(version)
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        tests = _test_list(record[name])
        if tests is None:
            raise error(name, "expected a list of test ids, or a JSON string of one (as SWE-bench ships it)")
        values[name] = tests
    if not values["FAIL_TO_PASS"]:
        raise error("FAIL_TO_PASS", "is empty: an instance needs at least one test that the fix makes pass")
    for name in ("hints_text", "log_parser", "eval_type"):
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            raise error(name, f"expected a string, got {type(value).__name__}")
        if value:
            values[name] = value
    if values.get("eval_type") not in (None, *_EVAL_TYPES):
        raise error("eval_type", f"expected one of {', '.join(_EVAL_TYPES)}, got {values['eval_type']!r}")
    return SWEBenchInstance(**values)


def load_instances(path: Path | str) -> list[SWEBenchInstance]:
    """Every instance of a SWE-bench JSON or JSONL file, validated.

    Raises:
        SWEBenchInputError: the file is unreadable, not a regular file, larger than
            ``MAX_DATASET_BYTES`` or malformed, a field is missing or has the wrong type, an
            ``instance_id`` cannot name a folder (``NAME_PATTERN``) or repeats (the message names
            the file, the line or item, the instance and the field). Every instance is checked
            before any is returned, so a bad one refuses the whole dataset before anything runs.
    """
    path = Path(path)
    return instances_from_records(read_records(path, what="dataset"), path)


def instances_from_records(
    records: Iterable[tuple[dict[str, Any], int | None, int | None]], source: Path | str
) -> list[SWEBenchInstance]:
    """Validate ``(record, line, item)`` triples (as ``read_records`` yields them) into instances.

    ``source`` names where they come from in error messages (a file, or a dataset name).

    Raises:
        SWEBenchInputError: no records, a field is missing or has the wrong type, or an
            ``instance_id`` repeats.
    """
    instances: list[SWEBenchInstance] = []
    seen: set[str] = set()
    for record, line, item in records:
        error = record_error(source, record, line, item)
        instance = _instance(record, error)
        if instance.instance_id in seen:
            raise error("instance_id", "repeats an earlier instance id")
        seen.add(instance.instance_id)
        instances.append(instance)
    if not instances:
        raise SWEBenchInputError(source, "holds no instances")
    return instances


def select_instances(instances: Sequence[SWEBenchInstance], ids: Sequence[str] | None) -> list[SWEBenchInstance]:
    """The instances named in ``ids`` (in dataset order), or all of them when ``ids`` is empty.

    Raises:
        SWEBenchInputError: an id names no instance (the message lists a few known ids).
    """
    if not ids:
        return list(instances)
    known = {instance.instance_id for instance in instances}
    unknown = [identifier for identifier in ids if identifier not in known]
    if unknown:
        sample = ", ".join(sorted(known)[:5]) + (", ..." if len(known) > 5 else "")
        raise SWEBenchInputError(
            "--instances", f"unknown instance id(s): {', '.join(unknown)}. Known: {sample}", field="instance_id"
        )
    wanted = set(ids)
    return [instance for instance in instances if instance.instance_id in wanted]
