"""Tasks: the ``task.md`` format and its parser.

A task file is YAML front matter followed by markdown::

    ---
    title: Add two numbers
    language: python
    entry_point: add
    signature: "def add(a: int, b: int) -> int:"   # optional, recommended
    time_limit: 2s                                  # optional, per test
    memory_limit: 256MB                             # optional, per run
    ---
    Return the sum of ``a`` and ``b``.

    ## Examples
    >>> add(1, 2)
    3

    ## Tests
    ```python
    def test_negative():
        assert add(-1, 1) == 0
    ```

Everything before the first ``## Examples`` or ``## Tests`` heading (and any
other ``##`` section) is the description. See ``docs/task-format.md``.
"""

from __future__ import annotations

import ast
import difflib
import doctest
import hashlib
import re
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from markdown_it import MarkdownIt
from markdown_it.token import Token
from pydantic import BaseModel, ConfigDict, Field

from debatecode.errors import TaskError
from debatecode.examples import example_key, find_examples, parameter_names
from debatecode.input_files import InputFileError, read_input_file
from debatecode.sandbox.settings import MAX_TIMEOUT_S

__all__ = ["MAX_TASK_BYTES", "Example", "Task", "TestBlock", "load_task", "parse_task"]

MAX_TASK_BYTES = 256 * 1024
"""Largest task file ``load_task`` reads by default (``task_max_bytes`` in ``debatecode.toml``)."""

_BOM = "\ufeff"
_REQUIRED = ("title", "entry_point")
_OPTIONAL = ("language", "signature", "time_limit", "memory_limit", "difficulty", "tags")
_LANGUAGES = ("python",)
_FRONT_MATTER = YAMLHandler()
"""python-frontmatter's YAML format: its ``---`` boundary lines, and YAML read with the safe loader."""
_MARKDOWN = MarkdownIt("commonmark")
"""The task body's structure: ``##`` headings and fenced code blocks, as CommonMark reads them."""
_PYTHON_INFO = ("", "python", "py", "python3", "pytest")
_DURATION = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|sec|seconds?)?\s*$", re.IGNORECASE)
_SIZE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>k|kb|kib|m|mb|mib|g|gb|gib)?\s*$", re.IGNORECASE)


class Example(BaseModel):
    """One doctest-style example: ``>>> source`` and the output it must print."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    want: str
    line: int
    """Line in the task file where the example starts."""


class TestBlock(BaseModel):
    """One fenced pytest code block from ``## Tests``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    __test__ = False

    code: str
    line: int
    """Line in the task file of the block's first code line."""
    test_names: list[str]
    """Names of the ``test_*`` functions the block defines."""


class Task(BaseModel):
    """A parsed task: what to build and how it is checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    language: str = "python"
    entry_point: str
    signature: str | None = None
    """The function header, e.g. ``def add(a: int, b: int) -> int:``."""
    time_limit_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Per-test time limit in seconds (at most one day); ``None`` uses the sandbox default."""
    memory_limit_mb: int | None = None
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    description: str
    examples: list[Example] = Field(default_factory=list)
    tests: list[TestBlock] = Field(default_factory=list)
    path: str = "<string>"
    text_hash: str = ""
    """sha256 of the task file's text."""
    code_prompt: str | None = None
    """Code the solution must continue (imports, helpers, the signature and its docstring), as benchmark
    prompts such as HumanEval's give it. Completion prompts end with it verbatim; chat prompts show it."""

    @property
    def test_names(self) -> list[str]:
        names = [f"test_example_{i}" for i in range(1, len(self.examples) + 1)]
        for block in self.tests:
            names.extend(block.test_names)
        return names

    @property
    def header(self) -> str:
        """The function header prompts end with (``def entry_point(`` when no signature is given)."""
        return self.code_prompt or self.signature or f"def {self.entry_point}("

    def with_prompt_context(self, code: str) -> str:
        """``code`` with the imports and helpers of ``code_prompt`` it lacks put in front (chat replies often drop them)."""
        if not self.code_prompt:
            return code
        head = self.code_prompt.split(f"def {self.entry_point}(", 1)[0]
        missing = [line for line in head.splitlines() if line.startswith(("import ", "from ")) and line not in code]
        helpers = head if "def " in head and any(f"def {name}" not in code for name in _defined(head)) else ""
        prefix = helpers or "\n".join(missing)
        return f"{prefix.rstrip()}\n\n\n{code}" if prefix.strip() else code


def _defined(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def load_task(path: Path | str, *, max_bytes: int = MAX_TASK_BYTES) -> Task:
    """Read and parse a task file of at most ``max_bytes`` bytes.

    Raises:
        TaskError: the file is missing, unreadable, too large or malformed (naming the line and the fix).
    """
    file = Path(path)
    try:
        raw = read_input_file(file, max_bytes=max_bytes, what="task file")
    except InputFileError as exc:
        if exc.problem == "missing":
            raise TaskError(
                file, "task file not found", fix="check the path; example tasks live in examples/tasks/"
            ) from exc
        if exc.problem == "too_large":
            raise TaskError(
                file,
                exc.reason,
                fix="shorten the task (a task states a function, not its data), "
                "or raise `task_max_bytes` in debatecode.toml",
            ) from exc
        raise TaskError(file, exc.reason) from exc  # the reason says what to do
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(
            file, f"not valid UTF-8 ({exc.reason} at byte {exc.start})", fix="save the file as UTF-8"
        ) from exc
    return parse_task(text, file)


def parse_task(text: str, path: Path | str = "<string>") -> Task:
    """Parse the text of a task file.

    Raises:
        TaskError: malformed front matter, sections, examples or test code.
    """
    file = Path(path)
    text = text.removeprefix(_BOM)  # editors on Windows save UTF-8 with a byte order mark
    lines = text.splitlines()
    meta, body_start = _front_matter(lines, file)
    body = lines[body_start:]
    description_lines, sections = _split_sections(body, body_start + 1)
    description = "\n".join(line for _, line in description_lines).strip()
    if not description:
        raise TaskError(
            file,
            "the task has no description",
            line=body_start + 1,
            fix="write what the function must do after the front matter",
        )

    entry = str(meta["entry_point"])
    params = parameter_names(str(meta.get("signature") or ""), entry)
    examples = _parse_examples(sections.get("examples"), file, entry, params)
    examples = _unique([*examples, *_written_examples(description_lines, entry, params)])
    tests = _parse_tests(sections.get("tests"), file)
    if not examples and not tests:
        raise TaskError(
            file,
            "the task has no checks: no examples (## Examples or the description) and no ## Tests",
            line=body_start + 1,
            fix="add a '## Examples' section with '>>> ' lines (or lines such as 'f(1) == 2'; "
            "docs/task-format.md lists every form) or a '## Tests' section with a ```python block",
        )
    seen: dict[str, int] = {}
    for block in tests:
        for name in block.test_names:
            if name in seen:
                raise TaskError(
                    file,
                    f"test {name!r} is defined twice (first at line {seen[name]})",
                    line=block.line,
                    fix="rename one of the tests",
                )
            seen[name] = block.line

    return Task(
        title=str(meta["title"]).strip(),
        language=str(meta.get("language", "python")),
        entry_point=str(meta["entry_point"]),
        signature=_signature(meta, file),
        time_limit_s=_duration(meta.get("time_limit"), file),
        memory_limit_mb=_size_mb(meta.get("memory_limit"), file),
        difficulty=str(meta["difficulty"]) if meta.get("difficulty") is not None else None,
        tags=[str(t) for t in meta.get("tags") or []],
        description=description,
        examples=examples,
        tests=tests,
        path=str(file),
        text_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def _front_matter(lines: list[str], file: Path) -> tuple[dict[str, Any], int]:
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise TaskError(
            file,
            "the file is empty",
            line=1,
            fix="start with YAML front matter between '---' lines (see docs/task-format.md)",
        )
    boundary = _FRONT_MATTER.FM_BOUNDARY
    if not boundary.match(lines[first]):
        raise TaskError(
            file,
            "missing YAML front matter",
            line=first + 1,
            fix="start the file with a '---' line, then title/entry_point keys, then another '---' line",
        )
    end = next((i for i in range(first + 1, len(lines)) if boundary.match(lines[i])), None)
    if end is None:
        raise TaskError(
            file, "front matter is not closed", line=first + 1, fix="add a '---' line after the last front matter key"
        )
    raw = "\n".join(lines[first + 1 : end])
    try:
        meta = _FRONT_MATTER.load(raw) if raw.strip() else {}
    except RecursionError as exc:
        raise TaskError(
            file, "front matter is nested too deeply", line=first + 2, fix="use flat 'key: value' lines"
        ) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first + 2 + mark.line if mark is not None else first + 1
        problem = getattr(exc, "problem", None) or str(exc)
        if "nesting depth" in problem:  # libyaml's loader reports depth itself instead of a RecursionError
            raise TaskError(
                file, "front matter is nested too deeply", line=first + 2, fix="use flat 'key: value' lines"
            ) from exc
        raise TaskError(
            file,
            f"front matter is not valid YAML: {problem}",
            line=line,
            fix="use 'key: value' lines; quote values that contain ':' or '#'",
        ) from exc
    if not isinstance(meta, dict):
        raise TaskError(
            file, "front matter must be a mapping of keys to values", line=first + 2, fix="use 'key: value' lines"
        )

    def key_line(key: str) -> int:
        for i in range(first + 1, end):
            if re.match(rf"^\s*{re.escape(key)}\s*:", lines[i]):
                return i + 1
        return first + 1

    for key in meta:
        if key not in _REQUIRED + _OPTIONAL:
            close = difflib.get_close_matches(str(key), _REQUIRED + _OPTIONAL, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(_REQUIRED + _OPTIONAL)
            raise TaskError(file, f"unknown front matter key {key!r}", line=key_line(str(key)), fix=hint)
    for key in _REQUIRED:
        if meta.get(key) in (None, ""):
            raise TaskError(
                file,
                f"front matter lacks required key {key!r}",
                line=first + 1,
                fix=f"add a line '{key}: ...' to the front matter",
            )
    language = str(meta.get("language", "python")).lower()
    if language not in _LANGUAGES:
        raise TaskError(
            file, f"language {language!r} is not supported", line=key_line("language"), fix="use 'language: python'"
        )
    meta["language"] = language
    meta["tags"] = _tags(meta.get("tags"), file, key_line("tags"))
    entry = str(meta["entry_point"])
    if not entry.isidentifier():
        raise TaskError(
            file,
            f"entry_point {entry!r} is not a Python identifier",
            line=key_line("entry_point"),
            fix="name the function, e.g. 'entry_point: add'",
        )
    return meta, end + 1


def _tags(raw: Any, file: Path, line: int) -> list[str]:
    """``tags:`` as a list of strings; a single word or a nested value is refused (never split into letters)."""
    if raw is None:
        return []
    fix = "write a YAML list, e.g. 'tags: [strings, easy]'"
    if not isinstance(raw, list):
        raise TaskError(file, f"tags must be a list, not {raw!r}", line=line, fix=fix)
    for tag in raw:
        if isinstance(tag, list | dict) or tag is None:
            raise TaskError(file, f"each tag must be a word or a number, not {tag!r}", line=line, fix=fix)
    return [str(tag) for tag in raw]


def _signature(meta: dict[str, Any], file: Path) -> str | None:
    raw = meta.get("signature")
    if raw is None:
        return None
    sig = str(raw).strip()
    if not sig.endswith(":"):
        sig += ":"
    if not sig.startswith(("def ", "async def ")):
        raise TaskError(
            file,
            f"signature {sig!r} must start with 'def '",
            fix=f'e.g. signature: "def {meta["entry_point"]}(x: int) -> int:"',
        )
    try:
        ast.parse(sig + "\n    ...\n")
    except SyntaxError as exc:
        raise TaskError(
            file,
            f"signature is not valid Python: {exc.msg}",
            fix="write it as the first line of the function, ending with ':'",
        ) from exc
    if f"def {meta['entry_point']}(" not in sig:
        raise TaskError(
            file, f"signature does not define entry_point {meta['entry_point']!r}", fix="make the two names match"
        )
    return sig


def _duration(raw: Any, file: Path) -> float | None:
    if raw is None:
        return None
    match = _DURATION.match(str(raw))
    if not match or float(match["num"]) <= 0:
        raise TaskError(
            file,
            f"time_limit {raw!r} is not a positive duration",
            fix="write e.g. 'time_limit: 2s' or 'time_limit: 500ms'",
        )
    value = float(match["num"])
    seconds = value / 1000 if (match["unit"] or "").lower() == "ms" else value
    if seconds > MAX_TIMEOUT_S:
        raise TaskError(
            file,
            f"time_limit {raw!r} is longer than the longest limit a sandbox takes ({MAX_TIMEOUT_S:g} s, one day)",
            fix="write a per-test limit of seconds or minutes, e.g. 'time_limit: 2s'",
        )
    return seconds


def _size_mb(raw: Any, file: Path) -> int | None:
    if raw is None:
        return None
    match = _SIZE.match(str(raw))
    if not match or float(match["num"]) <= 0:
        raise TaskError(
            file,
            f"memory_limit {raw!r} is not a positive size",
            fix="write e.g. 'memory_limit: 256MB' or 'memory_limit: 1GB'",
        )
    unit = (match["unit"] or "m").lower()[0]
    value = float(match["num"]) * {"k": 1 / 1024, "m": 1, "g": 1024}[unit]
    if value < 32:
        raise TaskError(file, f"memory_limit {raw!r} is below the 32 MB minimum", fix="allow at least 32MB")
    return int(value)


def _split_sections(
    body: list[str], first_line_no: int
) -> tuple[list[tuple[int, str]], dict[str, list[tuple[int, str]]]]:
    """Split the body at its ``##`` headings (code fences hide them, as in any markdown reader).

    Returns the numbered description lines and, for ``examples`` and ``tests``,
    their numbered lines. Other ``##`` sections stay in the description.
    """
    tokens = _MARKDOWN.parse("\n".join(body))
    headings: dict[int, str | None] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.markup == "##" and token.level == 0 and token.map:
            name = tokens[index + 1].content.strip().lower()
            key = "examples" if name in ("examples", "example") else "tests" if name in ("tests", "test") else None
            headings[token.map[0]] = key
    description: list[tuple[int, str]] = []
    sections: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for offset, line in enumerate(body):
        number = first_line_no + offset
        if offset in headings:
            key = headings[offset]
            if key is not None:
                current = sections.setdefault(key, [])
                continue
            current = None
        if current is None:
            description.append((number, line))
        else:
            current.append((number, line))
    return description, sections


def _fences(numbered: list[tuple[int, str]]) -> list[Token]:
    """The fenced code blocks of these lines (``token.map`` indexes ``numbered``)."""
    return [token for token in _MARKDOWN.parse("\n".join(line for _, line in numbered)) if token.type == "fence"]


def _fence_closed(token: Token, numbered: list[tuple[int, str]]) -> bool:
    """Whether a fence has its closing line (an open one runs to the end of the text)."""
    assert token.map is not None
    last = token.map[1] - 1
    closing = numbered[last][1].strip()
    return last > token.map[0] and len(closing) >= len(token.markup) and set(closing) == {token.markup[0]}


def _strip_fences(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines without the opening and closing lines of their code fences (examples may sit in one)."""
    markers: set[int] = set()
    for token in _fences(numbered):
        assert token.map is not None
        markers.add(token.map[0])
        if _fence_closed(token, numbered):
            markers.add(token.map[1] - 1)
    return [entry for index, entry in enumerate(numbered) if index not in markers]


def _parse_examples(
    numbered: list[tuple[int, str]] | None, file: Path, entry_point: str, params: list[str] | None
) -> list[Example]:
    if not numbered:
        return []
    kept = _strip_fences(numbered)
    text = "\n".join(line for _, line in kept) + "\n"
    parser = doctest.DocTestParser()
    try:
        parsed = parser.get_examples(text, name=str(file))
    except ValueError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = kept[int(match.group(1))][0] if match and int(match.group(1)) < len(kept) else kept[0][0]
        raise TaskError(
            file,
            f"malformed example: {exc}",
            line=line,
            fix="put a space after '>>>' and indent continuation lines with '... '",
        ) from exc
    examples = []
    for ex in parsed:
        line = kept[ex.lineno][0] if ex.lineno < len(kept) else kept[0][0]
        try:
            compile(ex.source, f"{file}:{line}", "single")
        except SyntaxError as exc:
            raise TaskError(
                file, f"example is not valid Python: {exc.msg}", line=line, fix="fix the expression after '>>> '"
            ) from exc
        examples.append(Example(source=ex.source, want=ex.want or _holds(ex.source), line=line))
    examples += _written_examples(kept, entry_point, params, doctests=False)
    if not examples and any(line.strip() for _, line in kept):
        raise TaskError(
            file,
            "## Examples has text but no example in a form the parser understands",
            line=kept[0][0],
            fix="write each example as '>>> call(...)' followed by the expected output, or as "
            "'call(...) == expected' (docs/task-format.md lists every form)",
        )
    return examples


def _holds(source: str) -> str:
    """``True`` for ``>>> f(x) == y`` written with no output line (the comparison must hold); else ``""``."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return ""
    return "True\n" if isinstance(node, ast.Compare) and [type(op) for op in node.ops] == [ast.Eq] else ""


def _written_examples(
    numbered: list[tuple[int, str]], entry_point: str, params: list[str] | None, *, doctests: bool = True
) -> list[Example]:
    """Examples of ``entry_point`` written in these lines in any form ``find_examples`` reads (doctests too, or not)."""
    found = find_examples("\n".join(line for _, line in numbered), entry_point, params)
    return [
        Example(source=f"{ex.call}\n", want=f"{ex.expected}\n", line=numbered[ex.line - 1][0])
        for ex in found
        if doctests or not ex.form.startswith("doctest")
    ]


def _unique(examples: list[Example]) -> list[Example]:
    """``examples`` without repeats: the same call with the same expected value counts once."""
    seen: dict[tuple[str, str], Example] = {}
    for example in examples:
        seen.setdefault(example_key(example.source, example.want), example)
    return list(seen.values())


def _parse_tests(numbered: list[tuple[int, str]] | None, file: Path) -> list[TestBlock]:
    if not numbered:
        return []
    blocks: list[TestBlock] = []
    for token in _fences(numbered):
        assert token.map is not None
        if token.info.strip().lower() not in _PYTHON_INFO:
            continue
        opening, after = token.map
        if not _fence_closed(token, numbered):
            raise TaskError(
                file,
                "code block in ## Tests is not closed",
                line=numbered[opening][0],
                fix="end the block with a ``` line",
            )
        blocks.append(_test_block(numbered[opening + 1 : after - 1], numbered[after - 1][0], file))
    if not blocks:
        raise TaskError(
            file,
            "## Tests has no ```python code block",
            line=numbered[0][0],
            fix="put pytest functions inside a ```python fenced block",
        )
    return blocks


def _test_block(numbered: list[tuple[int, str]], closing_line: int, file: Path) -> TestBlock:
    first = numbered[0][0] if numbered else closing_line
    code = "\n".join(line for _, line in numbered) + "\n"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        line = first + (exc.lineno or 1) - 1
        raise TaskError(
            file, f"test code is not valid Python: {exc.msg}", line=line, fix="fix the syntax of the test block"
        ) from exc
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]
    if not names:
        raise TaskError(
            file, "test block defines no test_* function", line=first, fix="name pytest functions 'test_...'"
        )
    return TestBlock(code=code, line=first, test_names=names)
