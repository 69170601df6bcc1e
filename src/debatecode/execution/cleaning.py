"""Strip a candidate down to its solution: the code that exercises it goes.

Small models end their code with example calls (``print(fizzbuzz(3))``), an
``if __name__ == "__main__":`` block, or loops of ``assert``s. As part of
``solution.py`` these run on every import: they print into the test output,
fail the load when an example is wrong, and block on ``input()``.
``clean_solution`` removes such top-level statements and keeps the rest:

- kept: the module docstring, imports, ``def`` and ``class`` statements,
  assignments (unless they call the entry point, ``print``, ``pprint`` or
  ``input``), a few setup calls (``sys.setrecursionlimit(...)``,
  ``random.seed(...)``, ``warnings.*(...)``, and method calls on a module-level
  name such as ``TABLE.append(...)``), and every other statement that does not
  exercise the code;
- removed: ``if __name__ == "__main__":`` blocks, other bare expressions
  (calls, prints, stray strings), ``assert`` statements, and top-level
  ``for``/``while``/``with``/``try``/``if`` blocks that exercise the code (call
  the entry point, ``print``, ``pprint`` or ``input``, or assert) without
  defining or importing anything; then, repeatedly, kept statements that
  read a name only a removed statement bound.

Kept statements keep their text, comments included (the source is cut by
lines, never unparsed), so a cleaned candidate diffs small against the reply.
Comment lines directly above a removed statement go with it. Code that does
not parse is returned unchanged: running it reports the syntax error.
"""

from __future__ import annotations

import ast
import io
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CleanedSolution", "clean_solution"]

_EXERCISING_CALLS = frozenset({"print", "pprint", "input"})
_SETUP_CALLS = frozenset(
    {
        ("sys", "setrecursionlimit"),
        ("sys", "set_int_max_str_digits"),
        ("random", "seed"),
        ("threading", "stack_size"),
        ("warnings", "filterwarnings"),
        ("warnings", "simplefilter"),
    }
)
"""``module.function`` calls that prepare the solution rather than exercise it."""
_DEFINING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Global)
_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.If, *(
    (ast.TryStar,) if hasattr(ast, "TryStar") else ()
))  # fmt: skip
_SHOWN = 100
"""Characters of a removed statement's first line shown in ``removed``."""


@dataclass(frozen=True)
class CleanedSolution:
    """A candidate's code with its exercising statements removed."""

    code: str
    """The code that remains (the input unchanged when nothing was removed or it does not parse)."""
    removed: tuple[str, ...] = ()
    """One entry per removed statement: ``"line 12: print(fizzbuzz(3))"`` (its first line, 1-based)."""


def clean_solution(code: str, entry_point: str | None) -> CleanedSolution:
    """``code`` without the top-level statements that only exercise it (see the module docstring).

    Never raises: code that does not parse comes back unchanged, with nothing removed.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return CleanedSolution(code)
    exercising = _EXERCISING_CALLS | frozenset([entry_point] if entry_point else [])
    body = tree.body
    kept = [not _exercises(node, index, exercising, body) for index, node in enumerate(body)]
    if all(kept):
        return CleanedSolution(code)
    _drop_dependents(body, kept)
    if not any(kept):  # no solution at all: leave it whole, so the failing run shows what was written
        return CleanedSolution(code)
    lines = io.StringIO(code, newline="").readlines()  # the line breaks ast counts, no others
    removed = tuple(
        f"line {node.lineno}: {_first_line(code, node)}" for node, keep in zip(body, kept, strict=True) if not keep
    )
    return CleanedSolution(_assemble(lines, body, kept), removed)


def _exercises(node: ast.stmt, index: int, exercising: frozenset[str], body: list[ast.stmt]) -> bool:
    """Whether top-level statement ``node`` only exercises the code."""
    if isinstance(node, ast.Expr):
        if index == 0 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return False  # the module docstring
        return not _is_setup_call(node.value, exercising, body)
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        return node.value is not None and _calls(node.value, exercising)
    if isinstance(node, ast.If) and _is_main_guard(node):
        return True
    if isinstance(node, _BLOCKS):
        inner = list(ast.walk(node))
        if any(isinstance(child, _DEFINING) for child in inner):
            return False
        return any(isinstance(child, ast.Assert) for child in inner) or _calls(node, exercising)
    return False


def _calls(node: ast.AST, names: frozenset[str]) -> bool:
    """Whether running ``node`` calls one of ``names`` (as ``name(...)`` or ``anything.name(...)``).

    Lambda and function bodies are not looked into: defining them calls nothing.
    """
    pending = [node]
    while pending:
        child = pending.pop()
        if isinstance(child, ast.Call):
            func = child.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in names:
                return True
        if isinstance(child, ast.Lambda):
            pending.extend(child.args.defaults + [d for d in child.args.kw_defaults if d is not None])
        elif child is node or not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            pending.extend(ast.iter_child_nodes(child))
    return False


def _is_setup_call(value: ast.expr, exercising: frozenset[str], body: list[ast.stmt]) -> bool:
    """``sys.setrecursionlimit(...)``-style calls, and method calls on a module-level data name (``TABLE.append``)."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute) or _calls(value, exercising):
        return False
    owner = value.func.value
    if not isinstance(owner, ast.Name):
        return False
    if (owner.id, value.func.attr) in _SETUP_CALLS:
        return True
    return owner.id in _assigned_names(body)


def _assigned_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(_bound(targets))
    return names


def _bound(targets: Sequence[ast.expr]) -> set[str]:
    return {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and {_text(test.left), _text(test.comparators[0])} == {"name", "__main__"}
    )


def _text(node: ast.expr) -> str:
    if isinstance(node, ast.Name) and node.id == "__name__":
        return "name"
    if isinstance(node, ast.Constant) and node.value == "__main__":
        return "__main__"
    return ""


def _drop_dependents(body: list[ast.stmt], kept: list[bool]) -> None:
    """Mark removed the kept non-defining statements that read a name only removed statements bind."""
    while True:
        bound_kept = set().union(*(_binds(node) for node, keep in zip(body, kept, strict=True) if keep))
        orphaned = set().union(*(_binds(node) for node, keep in zip(body, kept, strict=True) if not keep)) - bound_kept
        changed = False
        for index, node in enumerate(body):
            if kept[index] and not isinstance(node, _DEFINING) and _reads(node) & orphaned:
                kept[index] = False
                changed = True
        if not changed:
            return


def _binds(node: ast.stmt) -> set[str]:
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(child.name)
        elif isinstance(child, ast.alias):
            names.add(child.asname or child.name.partition(".")[0])
    return names


def _reads(node: ast.stmt) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)}


def _start(node: ast.stmt) -> int:
    """The statement's first line (its first decorator's, for a decorated definition), 1-based."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(decorator.lineno for decorator in decorators)])


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _first_line(code: str, node: ast.stmt) -> str:
    text = (ast.get_source_segment(code, node) or "").partition("\n")[0].strip()
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _assemble(lines: list[str], body: list[ast.stmt], kept: list[bool]) -> str:
    """``lines`` without the removed statements' lines (and the comment lines right above them)."""
    source = "".join(lines)
    drop = [False] * len(lines)
    previous_end = 0
    for group in _line_groups(body, kept):
        first, last = _start(group[0][0]), _end(group[-1][0])
        floor, previous_end = previous_end, last
        if all(keep for _, keep in group):
            continue
        if any(keep for _, keep in group):  # statements sharing lines with ``;``: rebuild those lines
            segments = [ast.get_source_segment(source, node) or "" for node, keep in group if keep]
            ending = "\n" if lines[last - 1].endswith(("\n", "\r")) else ""
            lines[first - 1] = "; ".join(segments) + ending
            for number in range(first + 1, last + 1):
                drop[number - 1] = True
            continue
        for number in range(first, last + 1):
            drop[number - 1] = True
        above = first - 1
        while above > floor and lines[above - 1].startswith("#"):
            drop[above - 1] = True
            above -= 1
    _drop_extra_blank_lines(lines, drop)
    text = "".join(line for line, dropped in zip(lines, drop, strict=True) if not dropped)
    return text.rstrip() + "\n" if text.strip() else ""


def _line_groups(body: list[ast.stmt], kept: list[bool]) -> list[list[tuple[ast.stmt, bool]]]:
    """Top-level statements in runs that share a line (``a = 1; print(a)``); most runs are one statement."""
    groups: list[list[tuple[ast.stmt, bool]]] = []
    for node, keep in zip(body, kept, strict=True):
        if groups and _start(node) == _end(groups[-1][-1][0]):
            groups[-1].append((node, keep))
        else:
            groups.append([(node, keep)])
    return groups


def _drop_extra_blank_lines(lines: list[str], drop: list[bool]) -> None:
    """Where removals left more than two blank lines in a row, drop the surplus (kept statements are untouched)."""
    blank_run = 0
    removed_since = False
    for index, line in enumerate(lines):
        if drop[index]:
            removed_since = True
            continue
        if line.strip():
            blank_run, removed_since = 0, False
            continue
        blank_run += 1
        if removed_since and blank_run > 2:
            drop[index] = True
