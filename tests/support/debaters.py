"""Scripted debaters: reply functions that answer every prompt kind plausibly, for any topology.

``add_debater`` plays every role for examples/tasks/add.md; with ``buggy`` set,
the named authors first write a candidate that passes the visible tests but
is wrong on ``add(5, 0)`` (so exchanged tests have something to catch).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

GOOD = "```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
DOCUMENTED = '```python\ndef add(a: int, b: int) -> int:\n    """Return a + b."""\n    return a + b\n```'
HACK = "```python\ndef add(a: int, b: int) -> int:\n    if b == 0:\n        return a + 1\n    return a + b\n```"

Debater = Callable[[object, dict[str, str]], str]


def add_debater(*, buggy: tuple[str, ...] = (), satisfaction: int = 95, style_variants: bool = True) -> Debater:
    """A reply function for ``ScriptedModel(fn=...)``."""

    def reply(messages: object, tags: dict[str, str]) -> str:
        kind, agent, phase = tags.get("kind", ""), tags.get("agent", ""), tags.get("phase", "")
        if kind == "draft":
            if agent in buggy:
                return "Special-casing zero saves an addition.\n" + HACK
            variant = DOCUMENTED if style_variants and agent.endswith(("2", "4", "6")) else GOOD
            return "Integers never overflow in Python, so plain addition is exact.\n" + variant
        if kind.startswith(("refine", "contrast", "address_review", "optimize", "defend")):
            return "I checked the failing cases because the outputs disagreed; plain addition is right.\n" + GOOD
        if kind == "moonshot":
            return (
                "The ambitious version uses operator.index; the stepping stone is plain.\n```python\nimport operator\n\n\ndef add(a: int, b: int) -> int:\n    return operator.index(a) + operator.index(b)\n```\n"
                + GOOD
            )
        if kind == "distinguish":
            return "Zero as the second argument may split them.\n```text\nadd(5, 0)\nadd(0, 0)\n```"
        if kind.startswith("attack-"):
            return "```text\nadd(5, 0)\nadd(-3, 3)\nadd(0, 0)\n```"
        if kind == "attack" and phase == "adversarial":
            if tags.get("round") == "1":
                return "```python\ndef test_zero():\n    assert add(0, 0) == 0\n\n\ndef test_wrong_claim():\n    assert add(2, 2) == 5\n```"
            return "NONE"
        if kind == "review":
            return f"Satisfaction: {satisfaction}\nRationale: correct because Python ints are exact and every test passes.\nBlocking concerns: none\nSuggested changes: none"
        if kind == "object":
            return "Objection: none, because the task fixes the input type to int and the tests cover negatives."
        if kind == "vote":
            return "The first candidate is simplest because it has no branches.\nRanking: 1 > 2\nVote: Candidate 1"
        if kind == "explain":
            return "It returns a + b, which is exact for Python ints."
        if kind.startswith("ask-"):
            return "[edge_cases] What should happen for negative numbers?" if kind == "ask-1" else "NONE"
        if kind.startswith("answer-"):
            return "1. Negative numbers are added like any other.\nConfidence: 0.95"
        if kind == "plan":
            return "1. Return a + b because Python ints are unbounded. 2. No special cases."
        if kind.startswith("adjudicate-"):
            call = _asked_call(messages)
            value = ast.literal_eval(call.removeprefix("add")) if call else None
            if not isinstance(value, tuple) or len(value) != 2:
                return "The specification does not say.\nANSWER: unknown"
            return f"The task says to return the sum of a and b.\nANSWER: {value[0] + value[1]}"
        raise AssertionError(f"add_debater has no reply for {tags}")

    return reply


def _asked_call(messages: object) -> str | None:
    """The call an ``adjudicate`` prompt asks about (the fenced line after "disagree about this call")."""
    text = str(messages[-1]["content"]) if isinstance(messages, list) and messages else str(messages)
    found = re.search(r"disagree about this call:\n```python\n(?P<call>.+?)\n```", text)
    return found.group("call") if found else None
