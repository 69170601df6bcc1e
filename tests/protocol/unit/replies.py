"""Code and reply snippets the phase unit tests script their debaters with (examples/tasks/add.md)."""

from __future__ import annotations

GOOD = "def add(a: int, b: int) -> int:\n    return a + b\n"
BAD = "def add(a: int, b: int) -> int:\n    return a - b\n"
HACK = "def add(a: int, b: int) -> int:\n    if b == 0:\n        return a + 1\n    return a + b\n"
"""Passes every visible test of add.md, and is wrong whenever ``b == 0``."""
FAST = "def add(a: int, b: int) -> int:\n    return b + a\n"


def fenced(code: str, prose: str = "Plain addition is exact for Python ints.") -> str:
    """A chat reply: one line of reasoning, then ``code`` in a python fence."""
    return f"{prose}\n```python\n{code}```"


def nobody_is_asked(messages: object, tags: dict[str, str]) -> str:
    """The debater of a test in which no model may be asked: any call fails the test, naming the call's tags."""
    raise AssertionError(f"nobody is asked: {tags}")
