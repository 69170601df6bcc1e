"""Edge-case arguments for the cases a task's text names, found by general English rules.

Each rule looks for words in the description and gives, for every argument whose shape
it applies to, a few values; the other arguments keep a typical value (the first example's,
or a small default). Rules, in the order their calls come out:

- "empty" → an empty list, string, tuple, dict or set;
- "single", "one element" (item, character, ...) → a one-item list, a one-character string;
- "zero" → 0 for numbers (``[0]`` for lists of numbers);
- "negative" → negative numbers;
- numbers stated as bounds ("at most 100", "between 1 and 10", "1 <= n <= 100") → each number
  and its neighbours; for lengths ("at most 5 elements") lists and strings of those lengths;
- "raise", "…Error", "exception", "invalid", "throw" → arguments the function must reject:
  ``None``, a value of the wrong type, ``-1`` for a number whose examples are never negative.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import cycle, islice
from typing import Any

from debatecode.execution._input_shapes import Shape, Slot

__all__ = ["edge_arguments"]

_MISSING: Any = object()
_MAX_BOUND = 1000
"""Larger stated bounds (``10**9``) are left out: a candidate that loops up to them only times out."""
_MAX_LENGTH = 10

_EMPTY = re.compile(r"\bempty\b", re.IGNORECASE)
_SINGLE = re.compile(
    r"\bsingle\b|\bone\s+(?:element|item|number|value|character|letter|word|entry|digit)\b"
    r"|\blength\s+(?:of\s+)?(?:1|one)\b",
    re.IGNORECASE,
)
_ZERO = re.compile(r"\bzero\b", re.IGNORECASE)
_NEGATIVE = re.compile(r"\bnegative\b", re.IGNORECASE)
_INVALID = re.compile(
    r"\braises?\b|\braising\b|\bthrows?\b|\b\w*(?:Error|Exception)\b|\bexceptions?\b|\binvalid\b|\billegal\b",
    re.IGNORECASE,
)
_NUM = r"-?\d+(?:\.\d+)?(?![\d.]*\s*(?:\^|\*\*|[eE][-+]?\d))"
_BOUNDS = (
    re.compile(
        r"\b(?:at\s+most|at\s+least|no\s+(?:more|less|greater|fewer)\s+than|not\s+exceed(?:ing)?|up\s+to"
        r"|(?:less|greater|more|fewer|larger|smaller|bigger)\s+than|exceeds?|exceeding|(?:maximum|minimum)(?:\s+of)?)"
        rf"\s+(?P<a>{_NUM})",
        re.IGNORECASE,
    ),
    re.compile(rf"\b(?:between|from)\s+(?P<a>{_NUM})\s+(?:and|to)\s+(?P<b>{_NUM})", re.IGNORECASE),
    # Comparisons, not arrows: "n <= 100", "1 <= n", never the ">" of "->", "=>" or ">>>".
    re.compile(rf"(?<![-=<>])(?:<=|>=|<|>|≤|≥)(?![<>=])\s*(?P<a>{_NUM})"),
    re.compile(rf"(?<![\w.])(?P<a>{_NUM})\s*(?:<=|<|≤)(?![<>])"),
)
_LENGTH_BEFORE = re.compile(r"\b(?:length|len|size|long)\b[^.;\n]*$", re.IGNORECASE)
_LENGTH_AFTER = re.compile(
    r"^\s*\)?\s*(?:elements?|items?|characters?|chars|letters?|words?|entries|values)\b|^[^.;\n]*\blong\b",
    re.IGNORECASE,
)


def edge_arguments(text: str, slots: Sequence[Slot]) -> list[tuple[Any, ...]]:
    """Argument tuples for the edge cases ``text`` names, one argument changed per tuple."""
    bases = [_base(slot.shape) for slot in slots]
    numbers, lengths = _bounds(text)
    rules: list[Callable[[Shape | None], list[Any]]] = []
    if _EMPTY.search(text):
        rules.append(_empty)
    if _SINGLE.search(text):
        rules.append(_single)
    if _ZERO.search(text):
        rules.append(lambda shape: _numbers(shape, [0], neighbours=False))
    if _NEGATIVE.search(text):
        rules.append(_negative)
    if numbers or lengths:
        rules.append(lambda shape: [*_numbers(shape, numbers), *_lengths(shape, lengths)])
    if _INVALID.search(text):
        rules.append(_invalid)
    rows: list[tuple[Any, ...]] = []
    for rule in rules:
        for index, slot in enumerate(slots):
            others = [b for i, b in enumerate(bases) if i != index]
            if any(b is _MISSING for b in others):
                continue
            for value in _unique(rule(slot.shape)):
                rows.append((*bases[:index], value, *bases[index + 1 :]))
    return rows


def _bounds(text: str) -> tuple[list[float], list[int]]:
    """Numbers the text states as bounds: on values, and on lengths (the words around say which)."""
    numbers: list[float] = []
    lengths: list[int] = []
    for pattern in _BOUNDS:
        for match in pattern.finditer(text):
            is_length = bool(
                _LENGTH_BEFORE.search(text[max(0, match.start() - 30) : match.start()])
                or _LENGTH_AFTER.search(text[match.end() : match.end() + 25])
            )
            for group in ("a", "b"):
                raw = match.groupdict().get(group)
                if raw is None or abs(value := float(raw)) > _MAX_BOUND:
                    continue
                target: list[Any] = lengths if is_length else numbers
                number = int(value) if is_length or value.is_integer() else value
                if number not in target:
                    target.append(number)
    return numbers, lengths


def _options(shape: Shape | None) -> tuple[Shape | None, ...]:
    return shape.parts if shape is not None and shape.kind == "union" else (shape,)


def _base(shape: Shape | None) -> Any:
    """A typical value: the first example's, else a small one of the shape's kind; ``_MISSING`` when unknown."""
    if shape is None:
        return _MISSING
    if shape.samples:
        return shape.samples[0]
    kind = shape.kind
    if kind == "union":
        with_samples = [p for p in shape.parts if p.samples]
        return _base(with_samples[0] if with_samples else shape.parts[0])
    defaults: dict[str, Any] = {"int": 1, "float": 1.0, "str": "a", "bool": False, "bytes": b"a", "none": None}
    if kind in defaults:
        return defaults[kind]
    if kind == "list":
        return [_base(shape.parts[0])]
    if kind == "set":
        return {_base(shape.parts[0])}
    if kind == "tuple":
        return (_base(shape.parts[0]),) if shape.variadic else tuple(_base(p) for p in shape.parts)
    if kind == "dict":
        return {_base(shape.parts[0]): _base(shape.parts[1])}
    return 1


def _empty(shape: Shape | None) -> list[Any]:
    empties: dict[str, Any] = {"list": [], "str": "", "tuple": (), "dict": {}, "set": set(), "bytes": b""}
    found: list[Any] = []
    for option in _options(shape):
        if option is None or option.kind == "any":
            found.extend([[], ""])
        elif option.kind in empties and (option.kind != "tuple" or option.variadic):
            found.append(empties[option.kind])
    return found


def _single(shape: Shape | None) -> list[Any]:
    found: list[Any] = []
    for option in _options(shape):
        if option is None:
            continue
        if option.kind == "str":
            found.append((str(_base(option)) or "a")[0])
        elif option.kind == "list":
            found.append([_base(option.parts[0])])
        elif option.kind == "tuple" and option.variadic:
            found.append((_base(option.parts[0]),))
        elif option.kind == "set":
            found.append({_base(option.parts[0])})
        elif option.kind == "dict":
            found.append({_base(option.parts[0]): _base(option.parts[1])})
    return found


def _numbers(shape: Shape | None, numbers: Sequence[float], *, neighbours: bool = True) -> list[Any]:
    """Each number (and, for bounds, its neighbours) wherever the shape takes a number or a list of numbers."""
    around = [n + d for n in numbers for d in (-1, 0, 1)] if neighbours else list(numbers)
    found: list[Any] = []
    for option in _options(shape):
        if option is None or option.kind == "int":
            found.extend(int(n) for n in around if float(n).is_integer())
        elif option.kind == "float":
            found.extend(float(n) for n in around)
        elif option.kind in ("list", "set") and option.parts[0].kind in ("int", "float"):
            cast = int if option.parts[0].kind == "int" else float
            items = [cast(n) for n in numbers if cast is float or float(n).is_integer()]
            if items:
                found.append(set(items) if option.kind == "set" else items)
    return found


def _negative(shape: Shape | None) -> list[Any]:
    found: list[Any] = []
    for option in _options(shape):
        magnitude = max((abs(v) for v in option.samples if isinstance(v, int | float)), default=5) if option else 5
        if option is None or option.kind == "int":
            found.extend([-1, -max(2, int(magnitude))])
        elif option.kind == "float":
            found.extend([-1.5, -float(max(2, magnitude))])
        elif option.kind == "list" and option.parts[0].kind == "int":
            found.append([-3, -1, -2])
        elif option.kind == "list" and option.parts[0].kind == "float":
            found.append([-1.5, -0.5])
    return found


def _lengths(shape: Shape | None, lengths: Sequence[int]) -> list[Any]:
    sizes = [n + d for n in lengths for d in (-1, 0, 1) if 0 <= n + d <= _MAX_LENGTH]
    found: list[Any] = []
    for option in _options(shape):
        if option is None or option.kind not in ("list", "str") or not sizes:
            continue
        if option.kind == "str":
            letters = "".join(dict.fromkeys("".join(s for s in option.samples if isinstance(s, str)))) or "abc"
            found.extend("".join(islice(cycle(letters), n)) for n in sizes)
        else:
            item = _base(option.parts[0])
            found.extend([item] * n for n in sizes)
    return found


def _invalid(shape: Shape | None) -> list[Any]:
    options = _options(shape)
    kinds = {o.kind for o in options if o is not None}
    found: list[Any] = [] if "none" in kinds else [None]
    for option in options:
        if option is None:
            continue
        if option.kind in ("int", "float"):
            found.append("a")
            if not any(isinstance(v, int | float) and v < 0 for v in option.samples):
                found.append(-1)
        elif option.kind in ("str", "list", "tuple", "dict", "set", "bytes"):
            found.append(0)
    return found


def _unique(values: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(f"{type(value).__name__}:{value!r}", value)
    return list(seen.values())
