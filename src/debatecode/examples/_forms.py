"""Find a function's examples in free text, in the forms docstrings and task descriptions write them.

Every example becomes ``(call, expected)``: ``call`` is a call of the entry point
that parses as Python and names nothing but builtins and literals, ``expected``
the text of the value it must return. The forms, by general rules (see
``docs/task-format.md``, "Examples the parser understands"):

- doctest: ``>>> f(x)`` and its output lines; ``>>> f(x) == y`` with no output (the
  comparison must hold); ``>>> f(x)`` with no output where the text's other doctests
  show outputs (it returns ``None``, doctest's own rule);
- an operator or a verb after the call: ``f(x) == y``, ``==>``, ``=>``, ``->``, ``➞``,
  ``→``, ``= y``, ``# => y``, ``returns y``, ``should return y``, ``should be y``;
- assignments then the result: ``For x = 1, y = 2 the output should be 3``, and lines
  ``x = 1`` followed by ``return 3`` (parameter names only);
- ``Input:`` / ``Output:`` pairs, named (``x = 1, y = 2`` or ``x : 1`` lines) or not.

Named inputs map to the signature's parameters by name, or in order when the names
differ but their number matches.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from debatecode.examples._scan import CodeScan
from debatecode.examples._text import (
    closed_call,
    closed_expression,
    is_call_of,
    match_close,
    parses,
    region,
    value_prefix,
    value_text,
)

__all__ = ["FORMS", "FoundExample", "example_key", "find_examples", "parameter_names"]

FORMS = ("doctest", "doctest-equality", "operator", "prose", "assignments", "input-output")
"""The forms an example can be found in, as ``FoundExample.form`` names them."""


@dataclass(frozen=True)
class FoundExample:
    """One example: ``call`` must return the value written as ``expected``."""

    call: str
    """A call of the entry point, as one line of Python (``ast.unparse``)."""
    expected: str
    """The expected value as written (a literal where possible; doctest output as it is printed)."""
    line: int
    """1-based line of the text where the example starts."""
    form: str
    """One of ``FORMS``."""


_OPERATOR = re.compile(
    r"`?[ \t]*(?:\#[ \t]*)?"
    r"(?P<op>==>|-->|==|=>|->|→|➞|⇒|⟶|➔|=(?![=>])"
    r"|(?:(?:should|must|will|would)\s+(?:return|be|give|equal)|returns|gives|evaluates\s+to|equals"
    r"|is\s+equal\s+to)\b)"
    r"[ \t]*:?[ \t]*`?",
    re.IGNORECASE,
)
_VERB = re.compile(r"[a-z]", re.IGNORECASE)
_EXAMPLE_HEADING = re.compile(r"\bexamples?\b", re.IGNORECASE)
_FOR = re.compile(
    r"\b(?:for|if|when|given|with)[ \t]+(?:the[ \t]+)?(?:inputs?[ \t]*:?[ \t]*)?(?=[A-Za-z_]\w*[ \t]*=(?!=))",
    re.IGNORECASE,
)
_RESULT = re.compile(
    r"\b(?:output|result|answer|return(?:ed)?[ \t]+value)[ \t]+(?:should|must|will|would)?[ \t]*(?:be|is)\b[ \t]*:?[ \t]*",
    re.IGNORECASE,
)
_RESULT_LINE = re.compile(
    r"^(?:=>|->|➞)?[ \t]*(?:return|returns|output|result|answer)\b[ \t]*(?:=|:|is\b|should[ \t]+be\b)?[ \t]*",
    re.IGNORECASE,
)
_NAME_SEP = re.compile(r"[\s,;]*(?:and\s+)?(?P<name>[A-Za-z_]\w*)[ \t]*(?P<sep>=(?!=)|:)[ \t]*")
_INPUT = re.compile(
    r"^[ \t*\-]*(?:example[ \t]*\d*[ \t]*[:.)\-]?[ \t]*)?inputs?[ \t]*:[ \t]*", re.IGNORECASE | re.MULTILINE
)
_OUTPUT = re.compile(r"\b(?:expected[ \t]+)?outputs?[ \t]*:[ \t]*", re.IGNORECASE)
_PROSE_WORDS = re.compile(r"\b(?:if|when|otherwise|else|unless|where)\b", re.IGNORECASE)
_MAX_INPUT_LINES = 12
_MAX_RESULT_DISTANCE = 8
_MAX_RAW_OUTPUT = 80


def parameter_names(code: str, entry_point: str) -> list[str] | None:
    """The positional parameter names of ``entry_point`` defined in ``code`` (a prompt or a signature line).

    A bare signature (``def f(a, b) -> int:``) is accepted. ``None`` when the definition is not found.
    """
    text = code if "\n" in code.strip() else code.strip() + "\n    ...\n"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            return [arg.arg for arg in [*node.args.posonlyargs, *node.args.args]]
    return None


def find_examples(text: str, entry_point: str, params: Sequence[str] | None = None) -> list[FoundExample]:
    """Every example of ``entry_point`` written in ``text``, in order, each once.

    ``params`` are the function's parameter names (``parameter_names``); without them,
    named inputs are passed in the order they are written.
    """
    lines = text.splitlines()
    found: list[FoundExample] = []
    doctest_lines: set[int] = set()
    found.extend(_doctests(lines, entry_point, doctest_lines))
    masked = "\n".join("" if number in doctest_lines else line for number, line in enumerate(lines))
    found.extend(_operator_forms(masked, entry_point))
    found.extend(_for_forms(masked, entry_point, params))
    found.extend(_result_after_assignments(masked.splitlines(), entry_point, params))
    found.extend(_input_output(masked, entry_point, params))
    unique: dict[tuple[str, str], FoundExample] = {}
    for example in sorted(found, key=lambda e: e.line):
        unique.setdefault(example_key(example.call, example.expected), example)
    return list(unique.values())


def example_key(call: str, expected: str) -> tuple[str, str]:
    """What makes two examples the same: the call as Python reads it, and the expected value (or its text)."""
    tree = parses(call.strip())
    value = value_text(expected)
    if value is not None:
        with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            expected = repr(ast.literal_eval(value))
    return (ast.unparse(tree) if tree is not None else call.strip()), " ".join(expected.split())


# --- doctest ---------------------------------------------------------------------------------------------


def _doctests(lines: list[str], entry_point: str, consumed: set[int]) -> list[FoundExample]:
    blocks = list(_doctest_blocks(lines, consumed))
    shows_output = any(want.strip() for _, _, want in blocks)
    found: list[FoundExample] = []
    for number, source, want in blocks:
        tree = parses(source)
        if tree is None:
            continue
        node = tree.body
        if want.strip():
            if not any(is_call_of(sub, entry_point) for sub in ast.walk(node)):
                continue
            split = _equality(node, source, entry_point) if want.strip() == "True" else None
            if split is not None:
                found.append(FoundExample(split[0], split[1], number + 1, "doctest-equality"))
            else:
                found.append(FoundExample(ast.unparse(node), want.rstrip(), number + 1, "doctest"))
            continue
        split = _equality(node, source, entry_point)
        if split is not None:
            found.append(FoundExample(split[0], split[1], number + 1, "doctest-equality"))
        elif (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq)
            and any(is_call_of(sub, entry_point) for sub in ast.walk(node))
            and closed_expression(node, also=entry_point)
        ):
            found.append(FoundExample(ast.unparse(node), "True", number + 1, "doctest-equality"))
        elif shows_output and is_call_of(node, entry_point):
            found.append(FoundExample(ast.unparse(node), "None", number + 1, "doctest"))
    return found


def _doctest_blocks(lines: list[str], consumed: set[int]) -> Iterator[tuple[int, str, str]]:
    """``(line index, source, output)`` of each ``>>>`` example, read as doctest reads them."""
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if not _prompt(stripped, ">>>"):
            index += 1
            continue
        start = index
        indent = len(lines[index]) - len(lines[index].lstrip())
        source = [stripped[4:]]
        consumed.add(index)
        index += 1
        while index < len(lines) and _prompt(lines[index].strip(), "..."):
            source.append(lines[index].strip()[4:])
            consumed.add(index)
            index += 1
        want: list[str] = []
        while index < len(lines) and lines[index].strip() and not _prompt(lines[index].strip(), ">>>"):
            line = lines[index]
            want.append(line[indent:] if line[:indent].isspace() or not line[:indent] else line.strip())
            consumed.add(index)
            index += 1
        yield start, "\n".join(source), "\n".join(want)


def _prompt(stripped: str, marker: str) -> bool:
    return stripped.startswith(marker) and (len(stripped) == len(marker) or stripped[len(marker)] == " ")


def _equality(node: ast.expr, source: str, entry_point: str) -> tuple[str, str] | None:
    """``(call, expected)`` of ``f(x) == value`` (either way round), the value a literal."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
        return None
    for call, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
        if is_call_of(call, entry_point):
            expected = value_text(ast.get_source_segment(source, other) or ast.unparse(other))
            if expected is not None:
                return ast.unparse(call), expected
    return None


# --- f(x) <operator> y -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Inline:
    example: FoundExample
    weak: bool
    """Written with a bare ``=``, which is also how a recurrence is defined."""


def _calls(text: str, entry_point: str) -> Iterator[tuple[int, int, ast.Call]]:
    """``(start, end, node)`` of each call of ``entry_point`` in ``text`` that parses (``end`` is exclusive)."""
    for match in re.finditer(rf"(?<![\w.]){re.escape(entry_point)}\(", text):
        if text[max(0, match.start() - 4) : match.start()] == "def ":
            continue
        close = match_close(text, match.end() - 1)
        if close is None:
            continue
        tree = parses(text[match.start() : close + 1])
        if tree is not None and isinstance(tree.body, ast.Call) and is_call_of(tree.body, entry_point):
            yield match.start(), close + 1, tree.body


def _operator_forms(text: str, entry_point: str) -> list[FoundExample]:
    starts = [start for start, _, _ in _calls(text, entry_point)]  # ascending
    inline: list[_Inline] = []
    recurrence = False
    for start, end, call in _calls(text, entry_point):
        operator = _OPERATOR.match(text, end)
        if operator is None:
            continue
        weak = operator["op"] == "="
        if not closed_call(call):
            recurrence = recurrence or weak
            continue
        expected_region = region(text, operator.end())
        following = bisect.bisect_left(starts, operator.end())
        if following < len(starts) and starts[following] - operator.end() < len(expected_region):
            expected_region = expected_region[: starts[following] - operator.end()]
        expected = _expected(expected_region)
        if expected is None:
            continue
        form = "prose" if _VERB.match(operator["op"]) else "operator"
        line = text.count("\n", 0, start) + 1
        inline.append(_Inline(FoundExample(ast.unparse(call), expected, line, form), weak))
    if recurrence:
        # ``f(n) = ...`` defines f by a recurrence; ``f(3) = 8`` lines then may be its terms, not results.
        # Only those after the last line that announces examples count.
        headings = [n for n, line in enumerate(text.splitlines(), start=1) if _EXAMPLE_HEADING.search(line)]
        last = headings[-1] if headings else None
        inline = [i for i in inline if not i.weak or (last is not None and i.example.line > last)]
    return [i.example for i in inline]


def _expected(text: str) -> str | None:
    """The expected value written at the start of ``text``; a worked ``a + b = c`` gives ``c``."""
    text = _after_worked_equals(text)
    found = value_prefix(text)
    return found[0] if found else None


def _after_worked_equals(text: str) -> str:
    """``8`` of ``19 - 5 - 6 = 8``: the part after the last top-level ``=`` when the part before is a value
    (arithmetic on numbers, or a literal).
    """
    line = text
    positions: list[int] = []
    for i, char, depth in CodeScan(text, python_literals=False):
        if depth != 0:
            continue
        if char == "#":
            line = text[:i]
            break
        if char == "=" and (i == 0 or text[i - 1] not in "=<>!") and (i + 1 == len(text) or text[i + 1] not in "=>"):
            positions.append(i)
    if not positions:
        return text
    last = positions[-1]
    left = line[:last].strip()
    return line[last + 1 :] if left and value_text(left) is not None else text


# --- For x = 1, y = 2 the output should be 3 ------------------------------------------------------------


def _assignments(text: str, start: int, separators: str) -> tuple[list[tuple[str, str]], int]:
    """``name = value`` pairs written from ``start`` (separated by commas, ``and`` or new lines) and their end."""
    pairs: list[tuple[str, str]] = []
    position = start
    while True:
        match = _NAME_SEP.match(text, position)
        if match is None or match["sep"] not in separators:
            return pairs, position
        found = value_prefix(_value_region(text, match.end()))
        if found is None:
            return pairs, position
        pairs.append((match["name"], found[0]))
        position = match.end() + found[1]


def _value_region(text: str, start: int) -> str:
    """``region(text, start)``, without scanning a long line char by char when its brackets balance."""
    end = text.find("\n", start)
    line = text[start : len(text) if end < 0 else end]
    balanced = all(line.count(o) == line.count(c) for o, c in ("()", "[]", "{}"))
    return line if balanced else region(text, start)


def _call(
    entry_point: str, pairs: list[tuple[str, str]], params: Sequence[str] | None, *, by_order: bool = True
) -> str | None:
    """The call that passes ``pairs`` to ``entry_point``: by the signature's names, else (``by_order``, or
    with no signature) in the order written when there are as many as parameters.
    """
    names = [name for name, _ in pairs]
    values = [value for _, value in pairs]
    if len(set(names)) != len(names):
        return None
    if params and set(names) == set(params):
        arguments = [dict(pairs)[param] for param in params]
    elif params and set(names) <= set(params):
        arguments = [f"{name}={value}" for name, value in pairs]
    elif params is None or (by_order and len(pairs) == len(params)):
        arguments = values
    else:
        return None
    tree = parses(f"{entry_point}({', '.join(arguments)})")
    return (
        ast.unparse(tree.body)
        if tree is not None and isinstance(tree.body, ast.Call) and closed_call(tree.body)
        else None
    )


def _for_forms(text: str, entry_point: str, params: Sequence[str] | None) -> list[FoundExample]:
    found: list[FoundExample] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for intro in _FOR.finditer(line):
            pairs, end = _assignments(line, intro.end(), "=")
            result = _RESULT.search(line, end)
            if not pairs or result is None:
                continue
            call = _call(entry_point, pairs, params, by_order=False)
            expected = _expected(line[result.end() :])
            if call is not None and expected is not None:
                found.append(FoundExample(call, expected, number, "assignments"))
    return found


def _result_after_assignments(lines: list[str], entry_point: str, params: Sequence[str] | None) -> list[FoundExample]:
    """``x = [1, 2]`` on a line of its own, then (within a few lines, no blank one) ``return [2, 1]``."""
    if not params:
        return []
    found: list[FoundExample] = []
    for index, line in enumerate(lines):
        pairs, end = _assignments(line, 0, "=")
        if not pairs or line[end:].strip() or not {name for name, _ in pairs} <= set(params):
            continue
        call = _call(entry_point, pairs, params)
        if call is None:
            continue
        for later in lines[index + 1 : index + 1 + _MAX_RESULT_DISTANCE]:
            stripped = later.strip()
            result = _RESULT_LINE.match(stripped)
            if result is None:
                if not stripped or _assignments(stripped, 0, "=")[0]:
                    break
                continue
            expected = _expected(stripped[result.end() :])
            if expected is not None:
                found.append(FoundExample(call, expected, index + 1, "assignments"))
            break
    return found


# --- Input: ... Output: ... ------------------------------------------------------------------------------


def _input_output(text: str, entry_point: str, params: Sequence[str] | None) -> list[FoundExample]:
    found: list[FoundExample] = []
    inputs = list(_INPUT.finditer(text))
    for index, marker in enumerate(inputs):
        limit = inputs[index + 1].start() if index + 1 < len(inputs) else len(text)
        output = _OUTPUT.search(text, marker.end(), limit)
        if output is None or text.count("\n", marker.end(), output.start()) > _MAX_INPUT_LINES:
            continue
        call = _input_call(text[marker.end() : output.start()], entry_point, params)
        expected = _output_value(region(text, output.end()))
        if call is not None and expected is not None:
            found.append(FoundExample(call, expected, text.count("\n", 0, marker.start()) + 1, "input-output"))
    return found


def _input_call(text: str, entry_point: str, params: Sequence[str] | None) -> str | None:
    content = text.strip().rstrip(",;")
    if not content:
        return None
    tree = parses(content)
    if tree is not None and is_call_of(tree.body, entry_point):
        return ast.unparse(tree.body) if isinstance(tree.body, ast.Call) and closed_call(tree.body) else None
    pairs, end = _assignments(content, 0, "=:")
    if pairs and not content[end:].strip(" \t\n,;"):
        return _call(entry_point, pairs, params)
    value = value_text(content)
    if value is None:
        return None
    node = ast.parse(value, mode="eval").body
    if params is not None and len(params) > 1:
        if isinstance(node, ast.Tuple) and len(node.elts) == len(params):
            return _call(entry_point, [(p, ast.unparse(e)) for p, e in zip(params, node.elts, strict=True)], params)
        return None
    return _call(entry_point, [(params[0] if params else "_", value)], params)


def _output_value(text: str) -> str | None:
    """The value after ``Output:``; plain one-line text (``Output: go for``) is kept as text to compare as printed."""
    expected = _expected(text)
    if expected is not None:
        return expected
    raw = text.split("#", 1)[0].strip()
    if not raw or "\n" in raw or len(raw) > _MAX_RAW_OUTPUT or _PROSE_WORDS.search(raw) or raw.endswith(":"):
        return None
    return raw
