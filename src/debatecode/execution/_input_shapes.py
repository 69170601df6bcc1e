"""The shape of a function's argument, read from its annotation and the example values passed for it.

A ``Shape`` says what kind of value an argument takes (``int``, ``list`` of ``str``, ...) and
carries the example values seen for it, so that generated values can stay near them.
Both the hypothesis strategies and the edge cases are built from shapes.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Shape", "Slot", "shape_of"]

SCALARS = ("bool", "int", "float", "str", "bytes", "none")
"""Kinds without parts. ``float`` samples may be ints (an ``int`` is a valid ``float`` argument)."""

_NAMES: dict[str, str] = {
    "int": "int",
    "float": "float",
    "str": "str",
    "bool": "bool",
    "bytes": "bytes",
    "None": "none",
    "NoneType": "none",
    "list": "list",
    "List": "list",
    "Sequence": "list",
    "MutableSequence": "list",
    "Iterable": "list",
    "Collection": "list",
    "tuple": "tuple",
    "Tuple": "tuple",
    "dict": "dict",
    "Dict": "dict",
    "Mapping": "dict",
    "MutableMapping": "dict",
    "set": "set",
    "Set": "set",
    "frozenset": "set",
    "FrozenSet": "set",
    "AbstractSet": "set",
    "Optional": "optional",
    "Union": "union",
    "Any": "any",
    "object": "any",
}


@dataclass(frozen=True)
class Shape:
    """What values an argument takes.

    ``kind`` is one of ``SCALARS``, ``list``, ``tuple``, ``dict``, ``set``, ``union`` or ``any``.
    ``parts``: the element (``list``, ``set``, variadic ``tuple``), key and value (``dict``), each
    position (fixed ``tuple``) or the options (``union``). ``samples``: the example values of this kind.
    """

    kind: str
    parts: tuple[Shape, ...] = ()
    samples: tuple[Any, ...] = ()
    variadic: bool = False
    """A ``tuple[X, ...]``: any length, every item an ``X`` (``parts`` holds ``X``)."""


@dataclass(frozen=True)
class Slot:
    """One argument of a generated call: the parameter's name, its shape, and whether it is passed by name."""

    name: str
    shape: Shape | None
    keyword: bool = False


def kind_of(value: Any) -> str | None:
    """The shape kind of a literal value, ``None`` for anything else."""
    if value is None:
        return "none"
    types: tuple[tuple[str, type | tuple[type, ...]], ...] = (
        ("bool", bool),
        ("int", int),
        ("float", float),
        ("str", str),
        ("bytes", bytes),
        ("list", list),
        ("tuple", tuple),
        ("dict", dict),
        ("set", (set, frozenset)),
    )
    return next((kind for kind, type_ in types if isinstance(value, type_)), None)


def shape_of(annotation: ast.expr | None, samples: Sequence[Any]) -> Shape | None:
    """The shape an annotation states, its ranges taken from ``samples``; unannotated: inferred from ``samples``.

    ``None`` when neither says what to pass (an unknown annotation and no samples).
    """
    if annotation is None:
        return _inferred(samples)
    node = _unstring(annotation)
    head, args = _head(node)
    if head in ("union", "optional"):
        options = [*args, ast.Constant(None)] if head == "optional" else args
        shapes = [s for a in options if (s := shape_of(a, samples)) is not None]
        return _union(shapes)
    if head in SCALARS:
        return Shape(head, samples=tuple(s for s in samples if _fits(head, s)))
    if head in ("list", "set"):
        seen = [s for s in samples if kind_of(s) in ("list", "tuple", "set")]
        elements = [item for s in seen for item in s]
        element = shape_of(args[0] if args else None, elements) or Shape("int")
        return Shape(head, (element,), tuple(s for s in seen if kind_of(s) == head))
    if head == "tuple":
        return _tuple_shape(args, [s for s in samples if isinstance(s, tuple)])
    if head == "dict":
        seen = [s for s in samples if isinstance(s, dict)]
        key = shape_of(args[0] if args else None, [k for s in seen for k in s]) or Shape("str")
        value = shape_of(args[1] if len(args) > 1 else None, [v for s in seen for v in s.values()]) or Shape("int")
        return Shape("dict", (key, value), tuple(seen))
    if head == "any":
        return _inferred(samples) or Shape("any")
    return _inferred(samples)


def _tuple_shape(args: list[ast.expr], seen: list[tuple[Any, ...]]) -> Shape:
    if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
        element = shape_of(args[0], [item for s in seen for item in s]) or Shape("int")
        return Shape("tuple", (element,), tuple(seen), variadic=True)
    if args:
        same = [s for s in seen if len(s) == len(args)]
        parts = tuple(shape_of(a, [s[i] for s in same]) or Shape("int") for i, a in enumerate(args))
        return Shape("tuple", parts, tuple(same))
    return _inferred(seen) or Shape("tuple", (Shape("int"),), variadic=True)


def _inferred(samples: Sequence[Any]) -> Shape | None:
    groups: dict[str, list[Any]] = {}
    for value in samples:
        kind = kind_of(value)
        if kind is not None:
            groups.setdefault(kind, []).append(value)
    shapes: list[Shape] = []
    for kind, values in groups.items():
        if kind in SCALARS:
            shapes.append(Shape(kind, samples=tuple(values)))
        elif kind in ("list", "set"):
            element = _inferred([item for v in values for item in v]) or Shape("int")
            shapes.append(Shape(kind, (element,), tuple(values)))
        elif kind == "tuple":
            lengths = {len(v) for v in values}
            if len(lengths) == 1 and 0 not in lengths:
                parts = tuple(_inferred([v[i] for v in values]) or Shape("int") for i in range(lengths.pop()))
                shapes.append(Shape("tuple", parts, tuple(values)))
            else:
                element = _inferred([item for v in values for item in v]) or Shape("int")
                shapes.append(Shape("tuple", (element,), tuple(values), variadic=True))
        else:
            key = _inferred([k for v in values for k in v]) or Shape("str")
            value = _inferred([x for v in values for x in v.values()]) or Shape("int")
            shapes.append(Shape("dict", (key, value), tuple(values)))
    return _union(shapes)


def _union(shapes: list[Shape]) -> Shape | None:
    flat: list[Shape] = []
    for shape in shapes:
        for option in shape.parts if shape.kind == "union" else (shape,):
            if option not in flat:
                flat.append(option)
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else Shape("union", tuple(flat))


def _fits(kind: str, value: Any) -> bool:
    if kind == "float":
        return kind_of(value) in ("int", "float")
    return kind_of(value) == kind


def _unstring(node: ast.expr) -> ast.expr:
    """A string annotation (``"list[int]"``) as the expression it names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node
    return node


def _head(node: ast.expr) -> tuple[str | None, list[ast.expr]]:
    """The kind an annotation names (``_NAMES``' values) and its type arguments."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return "union", [node.left, node.right]
    if isinstance(node, ast.Constant) and node.value is None:
        return "none", []
    if isinstance(node, ast.Subscript):
        head, _ = _head(node.value)
        inner = node.slice
        return head, list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    if isinstance(node, ast.Name):
        return _NAMES.get(node.id), []
    if isinstance(node, ast.Attribute):
        return _NAMES.get(node.attr), []
    return None, []
