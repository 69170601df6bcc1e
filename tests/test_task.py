"""The task.md parser: valid files parse; malformed ones name the file, the line and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.errors import TaskError
from debatecode.task import load_task, parse_task

REPO = Path(__file__).resolve().parents[1]

GOOD = """---
title: Add
entry_point: add
signature: "def add(a: int, b: int) -> int:"
time_limit: 500ms
memory_limit: 1GB
---
Return the sum.

## Notes
Kept in the description.

## Examples
>>> add(1, 2)
3

## Tests
```python
def test_zero():
    assert add(0, 0) == 0
```
"""


def test_parses_front_matter_sections_and_limits() -> None:
    task = parse_task(GOOD, "good.md")
    assert task.title == "Add"
    assert task.entry_point == "add"
    assert task.signature == "def add(a: int, b: int) -> int:"
    assert task.time_limit_s == 0.5
    assert task.memory_limit_mb == 1024
    assert "Return the sum." in task.description and "Kept in the description." in task.description
    assert [(e.source, e.want, e.line) for e in task.examples] == [("add(1, 2)\n", "3\n", 14)]
    assert task.tests[0].test_names == ["test_zero"]
    assert task.test_names == ["test_example_1", "test_zero"]
    assert len(task.text_hash) == 64


@pytest.mark.parametrize("name", ["add.md", "fizzbuzz.md", "merge_intervals.md"])
def test_shipped_examples_parse(name: str) -> None:
    task = load_task(REPO / "examples" / "tasks" / name)
    assert task.examples and task.tests


def test_missing_file_is_a_task_error(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="task file not found") as info:
        load_task(tmp_path / "nope.md")
    assert info.value.path == tmp_path / "nope.md"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("title: x\n", 1, "missing YAML front matter"),
        ("---\ntitle: x\nentry_point: f\n", 1, "not closed"),
        (
            "---\ntitle: [unclosed\nentry_point: f\n---\nbody\n## Tests\n```python\ndef test_a(): pass\n```\n",
            3,
            "not valid YAML",
        ),
        ("---\ntitle: x\n---\nbody\n", 1, "required key 'entry_point'"),
        ("---\ntitle: x\nentry_point: f\nlanguge: python\n---\nbody\n", 4, "unknown front matter key 'languge'"),
        ("---\ntitle: x\nentry_point: f\nlanguage: rust\n---\nbody\n", 4, "not supported"),
        ("---\ntitle: x\nentry_point: 2f\n---\nbody\n", 3, "not a Python identifier"),
        ("---\ntitle: x\nentry_point: f\n---\nbody\n", 5, "no checks"),
        ("---\ntitle: x\nentry_point: f\n---\nbody\n## Tests\n```python\ndef test_a(:\n```\n", 8, "not valid Python"),
        ("---\ntitle: x\nentry_point: f\n---\nbody\n## Tests\n```python\ndef test_a():\n    pass\n", 7, "not closed"),
        (
            "---\ntitle: x\nentry_point: f\n---\n\n## Tests\n```python\ndef test_a():\n    pass\n```\n",
            5,
            "no description",
        ),
        ("---\ntitle: x\nentry_point: f\ntags: notalist\n---\nbody\n", 4, "tags must be a list, not 'notalist'"),
        ("---\ntitle: x\ntags: {a: 1}\nentry_point: f\n---\nbody\n", 3, "tags must be a list"),
        ("---\ntitle: x\nentry_point: f\ntags: [ok, [nested]]\n---\nbody\n", 4, "each tag must be a word"),
    ],
)
def test_malformed_files_name_the_line_and_a_fix(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = tmp_path / "bad.md"
    path.write_text(text)
    with pytest.raises(TaskError) as info:
        load_task(path)
    err = info.value
    assert words in str(err)
    assert err.line == line, str(err)
    assert str(path) in str(err)
    assert err.fix, "every task error says how to fix it"


def test_tags_are_a_list_of_words() -> None:
    text = GOOD.replace("title: Add\n", "title: Add\ntags: [strings, 3]\n")
    assert parse_task(text, "good.md").tags == ["strings", "3"]
    assert parse_task(GOOD.replace("title: Add\n", "title: Add\ntags:\n"), "good.md").tags == []


def test_a_utf8_byte_order_mark_is_not_part_of_the_file(tmp_path: Path) -> None:
    """Windows editors save UTF-8 with a BOM: it used to give "missing YAML front matter"."""
    path = tmp_path / "bom.md"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    task = load_task(path)
    assert task.title == "Add" and task.test_names == ["test_example_1", "test_zero"]
    assert parse_task("\ufeff" + GOOD, "bom.md").title == "Add"


def test_bad_limits_are_rejected() -> None:
    base = "---\ntitle: x\nentry_point: f\n{extra}\n---\nbody\n## Examples\n>>> f()\n1\n"
    with pytest.raises(TaskError, match="time_limit"):
        parse_task(base.format(extra="time_limit: soon"))
    with pytest.raises(TaskError, match="memory_limit"):
        parse_task(base.format(extra="memory_limit: 4KB"))
    with pytest.raises(TaskError, match="signature does not define"):
        parse_task(base.format(extra='signature: "def g(x):"'))


def test_duplicate_test_names_are_rejected() -> None:
    text = "---\ntitle: x\nentry_point: f\n---\nbody\n## Tests\n```python\ndef test_a():\n    pass\n```\n```python\ndef test_a():\n    pass\n```\n"
    with pytest.raises(TaskError, match="defined twice"):
        parse_task(text)


def test_headings_inside_code_blocks_do_not_split_sections() -> None:
    text = "---\ntitle: x\nentry_point: f\n---\nbody\n## Tests\n```python\n## Examples\ndef test_a():\n    assert True\n```\n"
    task = parse_task(text)
    assert task.examples == []
    assert task.tests[0].test_names == ["test_a"]
