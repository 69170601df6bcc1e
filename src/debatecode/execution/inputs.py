"""Inputs on which to compare candidates: calls of the entry point with literal arguments.

Candidates that behave alike on many inputs are likely right together, and an input on
which they differ shows that one of them is wrong. ``generated_inputs`` builds those
inputs from four sources, taken in turn so that a small limit still draws on each:

1. the task's visible calls (its examples, the calls in its tests and its text);
2. those calls with one argument nudged (``n`` → ``n - 1``, ``n + 1``, ``0``; a string or
   list emptied, reversed or shortened), as the early stop's probes do;
3. values drawn with hypothesis from each parameter's shape: its annotation, or the example
   values passed for it (``_input_shapes``, ``_input_strategies``);
4. edge cases the task's text names: empty input, a single element, zero, negatives,
   stated bounds, input that must raise (``_edge_inputs``).

Everything here is a pure function of the task: no sandbox, no model.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from debatecode.examples._scan import CodeScan
from debatecode.execution._edge_inputs import edge_arguments
from debatecode.execution._input_shapes import Slot, shape_of
from debatecode.execution.probes import is_literal_call, parse_calls
from debatecode.task import Task

__all__ = [
    "Parameter",
    "call_variants",
    "generated_inputs",
    "nudged_values",
    "render_call",
    "signature_parameters",
    "visible_calls",
]

_MAX_CALL_CHARS = 400
"""Longer calls are dropped: inputs are for telling candidates apart, not for load."""


@dataclass(frozen=True)
class Parameter:
    """One parameter of the entry point as its header writes it."""

    name: str
    annotation: str | None
    """The annotation's source text (``list[int]``), or ``None``."""
    default: str | None
    """The default's source text (``None`` is written ``"None"``), or ``None`` when there is no default."""
    kind: Literal["positional", "keyword", "var_positional", "var_keyword"] = "positional"


def generated_inputs(task: Task, *, limit: int = 24, seed: int = 0) -> list[str]:
    """Calls of ``task.entry_point`` (e.g. ``"f([1, 2], 3)"``) with literal arguments only, at most ``limit``.

    The same task, limit and seed give the same list (with the same hypothesis version).
    Each call parses with ``ast.parse(mode="eval")``, and each argument's ``repr`` reads back
    with ``ast.literal_eval``. Empty when the task gives neither a header nor a call to go by.

    The list is a pure function of the task's text, so it is computed once per process for each
    task, limit and seed (hypothesis' draws cost tens of milliseconds): a resumed session, a server
    running the same task again and a benchmark's strategies on one problem share it.
    """
    if limit <= 0:
        return []
    return list(_inputs_of(_InputsKey(_task_text(task), limit, seed, task)))


@dataclass(frozen=True)
class _InputsKey:
    """What ``generated_inputs`` reads of a task, as the cache's key; ``task`` rides along uncompared."""

    text: tuple[str | None, ...]
    limit: int
    seed: int
    task: Task = field(compare=False, hash=False)


def _task_text(task: Task) -> tuple[str | None, ...]:
    """Every field of ``task`` the inputs are made from."""
    return (
        task.entry_point,
        task.signature,
        task.code_prompt,
        task.description,
        *(example.source for example in task.examples),
        "\0",
        *(block.code for block in task.tests),
    )


@functools.lru_cache(maxsize=256)
def _inputs_of(key: _InputsKey) -> tuple[str, ...]:
    task, limit, seed = key.task, key.limit, key.seed
    seeds = list(dict.fromkeys(_canonical(call) for call in visible_calls(task, limit=max(limit, 8))))
    nudged = list(_round_robin([list(call_variants(call))[1:] for call in seeds]))
    slots = _slots(task, seeds)
    drawn: list[str] = []
    edges: list[str] = []
    if slots == []:
        drawn = [f"{task.entry_point}()"]
    elif slots is not None:
        drawn = _drawn_calls(task.entry_point, slots, count=limit, seed=seed)
        edges = [_call(task.entry_point, slots, args) for args in edge_arguments(_text(task), slots)]
    sources = [seeds, nudged, drawn, edges]
    return tuple(_round_robin([[c for c in source if _acceptable(c)] for source in sources], limit=limit))


def visible_calls(task: Task, limit: int) -> list[str]:
    """Calls of the entry point with literal arguments that the task itself writes: examples, tests, text."""
    text = "\n".join(
        [*(e.source for e in task.examples), *(b.code for b in task.tests), task.description, task.code_prompt or ""]
    )
    return parse_calls(text, task.entry_point, limit=limit)


def signature_parameters(task: Task) -> list[Parameter]:
    """The entry point's parameters, read with ``ast`` from ``task.signature`` or ``task.code_prompt``.

    Empty when neither holds a header of the entry point that parses.
    """
    node = _definition(task)
    if node is None:
        return []
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    found = [Parameter(a.arg, _text_of(a.annotation), _text_of(d)) for a, d in zip(positional, defaults, strict=True)]
    if arguments.vararg is not None:
        found.append(Parameter(arguments.vararg.arg, _text_of(arguments.vararg.annotation), None, "var_positional"))
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        found.append(Parameter(arg.arg, _text_of(arg.annotation), _text_of(default), "keyword"))
    if arguments.kwarg is not None:
        found.append(Parameter(arguments.kwarg.arg, _text_of(arguments.kwarg.annotation), None, "var_keyword"))
    return found


def call_variants(call: str) -> Iterator[str]:
    """``call`` itself, then ``call`` with one literal argument nudged at a time (``nudged_values``)."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    func = ast.unparse(node.func)
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
    yield call
    for index, value in enumerate(args):
        for nudged in nudged_values(value):
            changed = [*args[:index], nudged, *args[index + 1 :]]
            yield render_call(func, changed, kwargs)


def render_call(func: str, args: Sequence[Any], kwargs: dict[str, Any]) -> str:
    """``func(arg, ..., name=value)`` with each value written as its ``repr``."""
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{func}({', '.join(parts)})"


def nudged_values(value: Any) -> Iterator[Any]:
    """Values next to ``value``: ``n - 1``, ``n + 1``, ``0``; a string or list emptied, reversed, shortened."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int):
        yield from (value - 1, value + 1, 0)
    elif isinstance(value, float):
        yield from (value / 2, value + 1.5, 0.0)
    elif isinstance(value, str):
        yield from ("", value[::-1], value[:-1])
    elif isinstance(value, list):
        yield from ([], value[::-1], value[:-1])
    elif isinstance(value, tuple):
        yield from ((), value[::-1])


def _slots(task: Task, seeds: Sequence[str]) -> list[Slot] | None:
    """The arguments a generated call passes, with their shapes; ``None`` when nothing says what they are."""
    examples = [_arguments(call) for call in seeds]
    node = _definition(task)
    if node is None:
        if not examples:
            return None
        arity = Counter(len(args) for args, _ in examples).most_common(1)[0][0]
        return [Slot(f"arg{i}", shape_of(None, [a[i] for a, _ in examples if len(a) > i])) for i in range(arity)]
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = len(positional) - len(arguments.defaults)
    widest = max((len(args) for args, _ in examples), default=0)
    slots: list[Slot] = []
    for index, arg in enumerate(positional):
        if index >= max(required, widest):
            break
        samples = [a[index] for a, _ in examples if len(a) > index]
        samples += [kw[arg.arg] for _, kw in examples if arg.arg in kw]
        slots.append(Slot(arg.arg, shape_of(arg.annotation, samples)))
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if default is None:
            samples = [kw[arg.arg] for _, kw in examples if arg.arg in kw]
            slots.append(Slot(arg.arg, shape_of(arg.annotation, samples), keyword=True))
    return slots


def _drawn_calls(entry_point: str, slots: Sequence[Slot], *, count: int, seed: int) -> list[str]:
    shapes = [slot.shape for slot in slots]
    if any(shape is None for shape in shapes):
        return []
    # hypothesis costs most of a second to import: only when inputs are generated.
    from debatecode.execution._input_strategies import draw_arguments

    return [_call(entry_point, slots, args) for args in draw_arguments([s for s in shapes if s], count, seed)]


def _call(entry_point: str, slots: Sequence[Slot], args: Sequence[Any]) -> str:
    if not all(_round_trips(value) for value in args):
        return ""
    positional = [value for slot, value in zip(slots, args, strict=True) if not slot.keyword]
    named = {slot.name: value for slot, value in zip(slots, args, strict=True) if slot.keyword}
    return render_call(entry_point, positional, named)


def _canonical(call: str) -> str:
    """``call`` written as ``render_call`` writes it, so that the same call from two sources counts once."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    return render_call(ast.unparse(node.func), *_arguments(call))


def _arguments(call: str) -> tuple[list[Any], dict[str, Any]]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    return [ast.literal_eval(a) for a in node.args], {
        k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None
    }


def _acceptable(call: str) -> bool:
    """Short enough, and a call whose arguments are all literals (``parse_calls``' own rule)."""
    return bool(call) and len(call) <= _MAX_CALL_CHARS and is_literal_call(call)


def _round_trips(value: Any) -> bool:
    """Whether ``repr(value)`` reads back as an equal value (not so for ``nan``, ``inf`` or objects)."""
    try:
        return bool(ast.literal_eval(repr(value)) == value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _round_robin(sources: Sequence[Iterable[str]], limit: int | None = None) -> Iterator[str]:
    """One new item from each source in turn, each item once, until all are spent or ``limit`` are out."""
    iterators = [iter(source) for source in sources]
    seen: set[str] = set()
    while iterators:
        for iterator in list(iterators):
            for item in iterator:
                if item not in seen:
                    seen.add(item)
                    yield item
                    if limit is not None and len(seen) >= limit:
                        return
                    break
            else:
                iterators.remove(iterator)


def _text(task: Task) -> str:
    """The task's words: its description and the entry point's docstring."""
    node = _definition(task)
    docstring = ast.get_docstring(node) if node is not None else None
    return "\n".join(part for part in (task.description, docstring) if part)


def _definition(task: Task) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for source in (task.signature, task.code_prompt):
        if source and (node := _find_definition(source, task.entry_point)) is not None:
            return node
    return None


def _find_definition(source: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def name(...)`` in ``source``: a whole module, or a bare header (its body then left out)."""
    candidates = [source]
    header = _header(source, name)
    if header is not None:
        candidates.append(f"{header}\n    ...\n")
    for text in candidates:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                return node
    return None


def _header(source: str, name: str) -> str | None:
    """``def name(...) -> ...:`` cut out of ``source`` (a colon added when the header has none)."""
    match = re.search(rf"\b(?:async\s+)?def\s+{re.escape(name)}\s*\(", source)
    if match is None:
        return None
    scan = CodeScan(source, match.end() - 1, python_literals=False)
    for index, char, depth in scan:
        if char == ":" and depth == 0:
            return source[match.start() : index + 1]
        if char == "\n" and depth == 0:
            return source[match.start() : index].rstrip() + ":"
    return source[match.start() :].rstrip() + ":" if scan.depth == 0 else None


def _text_of(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)
