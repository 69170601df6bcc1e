"""Low-level reading of example text: brackets, string literals, and values written in prose.

An example's expected value is often followed by prose (``returns 3 because ...``,
``'No' (the name ...)``, ``[1, 5] # the sequence ...``). ``value_prefix`` finds the
longest start of a text that is a Python value and is followed only by something
that cannot continue an expression: the end, punctuation, a comment, a parenthetical
or a word of prose.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Any

from debatecode.examples._scan import CLOSERS, OPENERS, CodeScan

__all__ = [
    "closed_call",
    "closed_expression",
    "is_call_of",
    "match_close",
    "parses",
    "region",
    "value_prefix",
    "value_text",
]

_PAIR = {")": "(", "]": "[", "}": "{"}
_MAX_SCAN = 4000
"""Characters scanned for one call or value: examples are short; a runaway bracket is not an example."""

_BUILTIN_NAMES = frozenset(dir(builtins))
_WORDS = {"true": "True", "false": "False", "none": "None", "null": "None"}
"""Bare words that prose (and JSON) uses for Python's constants, in any case."""
_CONTINUES = frozenset({"if", "else", "or", "not", "in", "is", "for", "lambda", "await", "from"})
"""Words that continue a Python expression, so a value followed by one of them is not finished. (Not ``and``:
prose joins two examples with it far more often than an example's value is a boolean expression.)"""
_WORD = re.compile(r"[A-Za-z_]\w*")
_NEXT_WORD = re.compile(r"\s+[A-Za-z_]")
_MAX_TRIES = 40
"""Ends of a value tried, longest first: a value written in prose is found in the first few."""
_MAX_POWER = 256


def match_close(text: str, open_at: int) -> int | None:
    """Index of the bracket that closes ``text[open_at]``, skipping string literals; ``None`` if unbalanced."""
    stack: list[str] = []
    for index, char, _ in CodeScan(text, open_at, open_at + _MAX_SCAN, python_literals=True):
        if char in OPENERS:
            stack.append(char)
        elif char in CLOSERS:
            if not stack or stack.pop() != _PAIR[char]:
                return None
            if not stack:
                return index
    return None


def region(text: str, start: int) -> str:
    """``text`` from ``start`` to the end of its line, or further while a bracket opened on it stays open."""
    scan = CodeScan(text, start, start + _MAX_SCAN, python_literals=True)
    for index, char, depth in scan:
        if (char == "\n" and depth == 0) or depth < 0:
            return text[start:index]
    return text[start : scan.end]


def _cuts(text: str) -> list[int]:
    """Ends at which a value may stop: before top-level whitespace or punctuation, and the end of the text.

    The scan stops at the first top-level word after the value has begun (``3 because ...``, ``True if``):
    a literal has no bare words past its first token, so what follows is prose or an expression's tail.
    """
    cuts: list[int] = []
    scan = CodeScan(text, python_literals=True)
    for index, char, depth in scan:
        if depth < 0 or (depth == 0 and char == "#"):  # an unmatched closing bracket or a comment ends the value
            cuts.append(index)
            return cuts
        if depth == 0 and (char.isspace() or char in ",;:`."):
            cuts.append(index)
            if char.isspace() and _NEXT_WORD.match(text, index) and text[:index].strip():
                return cuts
    if not scan.unclosed:
        cuts.append(len(text))
    return cuts


def _finished_by(rest: str) -> bool:
    """Whether ``rest`` cannot continue the value before it: it ends the text or starts prose or punctuation."""
    if not rest.strip():
        return True
    first = rest[0]
    if first in "#`;:,":
        return True
    if first == ".":
        return len(rest) == 1 or rest[1].isspace()
    if not first.isspace():
        return False
    after = rest.lstrip()
    if after[0] in "#`;:,(":
        return True
    if after[0] == ".":
        return len(after) == 1 or after[1].isspace()
    word = _WORD.match(after)
    return word is not None and word.group().lower() not in _CONTINUES


def value_prefix(text: str) -> tuple[str, int] | None:
    """The longest start of ``text`` that is a value (``value_text``) and ends where prose or punctuation starts.

    Returns the value's text and where it ends in ``text``, or ``None``.
    """
    for cut in sorted(set(_cuts(text)), reverse=True)[:_MAX_TRIES]:
        head = text[:cut].strip()
        # ``1.`` at the end of a sentence is the number 1 and a full stop, not the float ``1.``.
        if not head or head.endswith((",", ".")) or not _finished_by(text[cut:]):
            continue
        value = value_text(head)
        if value is not None:
            return value, cut
    return None


def value_text(text: str) -> str | None:
    """``text`` when it is a Python literal; ``True``/``False``/``None`` for their prose spellings; a folded
    number for arithmetic on numbers (``2 ** 10``); otherwise ``None``.
    """
    stripped = text.strip()
    if stripped.lower() in _WORDS:
        return _WORDS[stripped.lower()]
    tree = parses(stripped)
    if tree is None or any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(tree)):
        return None
    try:
        ast.literal_eval(tree)
        return stripped
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    number = _fold(tree.body)
    return repr(number) if number is not None else None


def parses(text: str) -> ast.Expression | None:
    """``text`` parsed as one Python expression, or ``None``."""
    try:
        return ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _fold(node: ast.expr) -> int | float | None:
    """The value of arithmetic on number literals, or ``None`` (nothing else is evaluated)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _fold(node.operand)
        if operand is None:
            return None
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _fold(node.left), _fold(node.right)
        if left is None or right is None:
            return None
        try:
            return _arithmetic(node.op, left, right)
        except (ArithmeticError, ValueError):
            return None
    return None


def _arithmetic(op: ast.operator, left: Any, right: Any) -> int | float | None:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right
    if isinstance(op, ast.Div):
        return left / right
    if isinstance(op, ast.FloorDiv):
        return left // right
    if isinstance(op, ast.Mod):
        return left % right
    if isinstance(op, ast.Pow) and abs(right) <= _MAX_POWER and abs(left) <= 10**6:
        result = left**right
        return result if isinstance(result, int | float) else None
    return None


def closed_expression(node: ast.AST, also: str = "") -> bool:
    """Whether ``node`` names nothing but builtins (and ``also``): prose placeholders (``f(x)``, ``f(n)``) are
    not examples.
    """
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id not in _BUILTIN_NAMES and sub.id != also:
            return False
        if isinstance(sub, ast.Constant) and sub.value is Ellipsis:
            return False
        if isinstance(sub, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
            return False
    return True


def closed_call(call: ast.Call) -> bool:
    """Whether every argument of ``call`` is closed (``closed_expression``)."""
    return all(closed_expression(arg) for arg in [*call.args, *(keyword.value for keyword in call.keywords)])


def is_call_of(node: ast.AST, entry_point: str) -> bool:
    """Whether ``node`` is a direct call ``entry_point(...)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point
