"""Check one example, comparing by value: the code written into every test job's ``test_examples.py``. Stdlib only.

``debatecode.execution.testfiles`` writes this module's text, as it is, at the end of
the generated test file, so it runs inside the sandbox's checker with no debatecode
import (hence no ``from __future__`` import either: it would have to open the file). The rules (``docs/task-format.md``, "How an example is compared"):

- the expected text is read with ``ast.literal_eval``; where it parses, the result
  must equal it by value: ``==``, except that floats (also inside lists, tuples and
  dicts) match within ``math.isclose(rel_tol=1e-6, abs_tol=1e-9)``. A list never
  equals a tuple (as in Python); a lone value in parentheses, ``("a")``, also matches
  the one-element tuple ``("a",)`` that people mean by it;
- where the expected text is not a literal (``hello``, ``<object>``, ``[1, ..., 9]``),
  the printed result is compared instead, as doctest does (``repr``, and ``str`` too;
  ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``); a call that returns ``None`` after
  printing is compared on what it printed;
- a call that raises fails the example (as in doctest), unless the expected text is a
  ``Traceback``: a statement, an expected ``Traceback``, or an empty expected output
  runs as one doctest example, exactly as doctest runs it.
"""

import ast
import cmath
import contextlib
import doctest
import io
import math
import traceback
from typing import Any

__all__ = ["ABS_TOL", "REL_TOL", "check_example", "example_passes", "expected_value", "values_match"]

REL_TOL = 1e-6
ABS_TOL = 1e-9
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_SHOWN = 2000
_CHECKER_FILE = "_dc_check.py"
"""The sandbox checker's file name (``debatecode.sandbox.verdict.CHECKER_FILE``)."""


def expected_value(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is a Python literal, else ``(False, None)``."""
    stripped = text.strip()
    if not stripped:
        return False, None
    try:
        return True, ast.literal_eval(stripped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _number(value: Any) -> bool:
    return isinstance(value, int | float | complex) and not isinstance(value, bool)


def values_match(got: Any, expected: Any) -> bool:
    """``got == expected``, with a tolerance for floats, recursively through lists, tuples and dicts."""
    if _number(got) and _number(expected):
        if isinstance(got, complex) or isinstance(expected, complex):
            return cmath.isclose(complex(got), complex(expected), rel_tol=REL_TOL, abs_tol=ABS_TOL)
        if isinstance(got, float) or isinstance(expected, float):
            try:
                if math.isnan(got) and math.isnan(expected):
                    return True
                return math.isclose(got, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)
            except OverflowError:  # an int too large for a float
                return bool(got == expected)
        return bool(got == expected)
    if isinstance(expected, list | tuple):
        return (
            type(got) is type(expected)
            and len(got) == len(expected)
            and all(values_match(g, e) for g, e in zip(got, expected, strict=True))
        )
    if isinstance(expected, dict):
        return (
            type(got) is dict
            and got.keys() == expected.keys()
            and all(values_match(got[key], expected[key]) for key in expected)
        )
    try:
        return bool(got == expected)
    except Exception:
        return False


def _parenthesised(text: str, value: Any) -> bool:
    """``("a")``: one value in parentheses, which people write for a one-element tuple."""
    stripped = text.strip()
    return stripped.startswith("(") and stripped.endswith(")") and not isinstance(value, tuple)


def _printed_matches(want: str, got: str) -> bool:
    want_text = want.strip() + "\n"
    return doctest.OutputChecker().check_output(want_text, got.strip() + "\n", _FLAGS)


def example_passes(got: Any, printed: str, want: str) -> bool:
    """Whether a call that returned ``got`` and printed ``printed`` gives the output ``want``."""
    parsed, expected = expected_value(want)
    if parsed:
        if values_match(got, expected):
            return True
        if _parenthesised(want, expected) and values_match(got, (expected,)):
            return True
    if "..." in want and _printed_matches(want, repr(got)):
        return True
    if printed.strip():  # what doctest compares: the printed text, then the value's repr unless it is None
        if _printed_matches(want, printed + ("" if got is None else repr(got))):
            return True
        if got is None:
            return False
    if parsed:
        return False
    shown = [repr(got)] + ([str(got)] if isinstance(got, str) else [])
    return any(_printed_matches(want, text) for text in shown)


def _as_doctest(source: str, want: str) -> bool:
    if not want.strip() or want.lstrip().startswith(
        ("Traceback (most recent call last)", "Traceback (innermost last)")
    ):
        return True
    try:
        compile(source, "<example>", "eval")
    except SyntaxError:
        return True
    return False


def _run_doctest(source: str, want: str, namespace: dict[str, Any], line: int) -> None:
    __tracebackhide__ = True
    # doctest.Example only expects an exception when given its message, as DocTestParser reads it from ``want``.
    exception = doctest.DocTestParser._EXCEPTION_RE.match(want)  # type: ignore[attr-defined]
    example = doctest.Example(source, want, exc_msg=exception.group("msg") if exception else None, lineno=0)
    test = doctest.DocTest([example], namespace, "example", "task", max(line - 1, 0), None)
    runner = doctest.DocTestRunner(optionflags=_FLAGS, verbose=False)
    report: list[str] = []
    runner.run(test, out=report.append, clear_globs=True)
    if runner.failures:
        raise AssertionError("".join(report).split("*" * 70)[-1].strip())


def _indent(text: str) -> str:
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + " ..."
    return "\n".join("    " + line for line in shown.strip("\n").splitlines()) or "    (nothing)"


def _raised(exc: BaseException) -> str:
    """The traceback of ``exc`` without this module's frame and the sandbox checker's (``_dc_check.py``).

    In the sandbox the call crosses into the checker, which re-raises the candidate's exception: its
    frames say nothing about the code under test.
    """
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)[1:]
        if frame.filename.replace("\\", "/").rsplit("/", 1)[-1] != _CHECKER_FILE
    ]
    shown = "".join(traceback.format_list(frames)) if frames else ""
    return "Traceback (most recent call last):\n" + shown + "".join(traceback.format_exception_only(type(exc), exc))


def check_example(source: str, want: str, namespace: dict[str, Any], line: int = 0) -> None:
    """Run ``source`` in ``namespace`` and compare its result with ``want``.

    Raises:
        AssertionError: the result differs, or the call raised, with doctest's wording (``Failed example``,
            ``Expected``, ``Got`` or ``Exception raised``), as a doctest example fails either way.
    """
    __tracebackhide__ = True
    if _as_doctest(source, want):
        _run_doctest(source, want, namespace, line)
        return
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            got = eval(compile(source, f"<example at line {line}>", "eval"), namespace)
    except Exception as exc:
        raised = _raised(exc)
        raise AssertionError(
            f"Failed example (line {line}):\n{_indent(source)}\nExpected:\n{_indent(want)}\n"
            f"Exception raised:\n{_indent(raised)}"
        ) from None
    printed = buffer.getvalue()
    if example_passes(got, printed, want):
        return
    got_text = repr(got) + (f"\n(printed: {printed.strip()})" if printed.strip() else "")
    raise AssertionError(
        f"Failed example (line {line}):\n{_indent(source)}\nExpected:\n{_indent(want)}\nGot:\n{_indent(got_text)}"
    )
