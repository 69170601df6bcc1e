"""Run agent-written inputs against a candidate and read back what it did.

The critique phase uses this to get *expected* outputs from an attacker's own
code and *actual* outputs from its opponent's: outputs come from running code,
never from a model's say-so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from debatecode.sandbox.base import Limits, Sandbox
from debatecode.sandbox.verdict import checker_job, parse_verdict

__all__ = ["ProbeResult", "Prober", "is_literal_call", "parse_calls"]


@dataclass(frozen=True)
class ProbeResult:
    """What one call did: ``value`` (with its repr), ``raises`` (exception type) or ``timeout``."""

    call: str
    outcome: str
    expected: str
    message: str = ""

    def same_as(self, other: ProbeResult) -> bool:
        return (self.outcome, self.expected) == (other.outcome, other.expected)


def parse_calls(text: str, entry_point: str, limit: int) -> list[str]:
    """Calls of ``entry_point`` found in ``text``, one per line, that parse and use only literal arguments.

    Literal-only arguments keep probes about the function, not about side effects.
    """
    calls: list[str] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("#*-0123456789.) ").strip().rstrip(",;")
        start = line.find(f"{entry_point}(")
        if start < 0:
            continue
        candidate = _balanced_call(line[start:])
        if candidate is None or candidate in calls or not is_literal_call(candidate):
            continue
        calls.append(candidate)
        if len(calls) >= limit:
            break
    return calls


def _balanced_call(text: str) -> str | None:
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[: index + 1]
    return None


def is_literal_call(text: str) -> bool:
    """``text`` parses as one call whose arguments (keywords too) ``ast.literal_eval`` reads."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Call) and all(_literal(arg) for arg in [*node.args, *(k.value for k in node.keywords)])


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


class Prober:
    """Evaluates calls against code in the sandbox."""

    def __init__(self, sandbox: Sandbox, limits: Limits, per_call_s: float = 2.0) -> None:
        self.sandbox = sandbox
        self.limits = limits
        self.per_call_s = per_call_s

    async def run(self, code: str, calls: list[str]) -> list[ProbeResult]:
        """Evaluate each call against ``code``; a call the job never reported is a ``timeout``.

        Raises:
            SandboxError: the sandbox itself failed.
        """
        if not calls:
            return []
        timeout = min(self.limits.timeout_s, 10 + self.per_call_s * len(calls))
        job, nonce = checker_job(
            mode="probe",
            code=code,
            test_files={},
            limits=self.limits.model_copy(update={"timeout_s": timeout}),
            test_timeout_s=self.per_call_s,
            calls=calls,
        )
        result = await self.sandbox.run(job)
        found: dict[str, ProbeResult] = {}
        for record in parse_verdict(result.stdout, nonce).probes:
            if record.call in calls:
                found[record.call] = ProbeResult(
                    call=record.call, outcome=record.outcome, expected=record.expected, message=record.message
                )
        return [
            found.get(call, ProbeResult(call, "timeout", "", "the probe run ended before this call")) for call in calls
        ]
