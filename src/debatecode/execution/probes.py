"""Run agent-written inputs against a candidate and read back what it did.

The critique phase uses this to get *expected* outputs from an attacker's own
code and *actual* outputs from its opponent's: outputs come from running code,
never from a model's say-so.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from importlib import resources

from debatecode.sandbox.base import ExecJob, Limits, Sandbox

__all__ = ["ProbeResult", "ProbeRunner", "parse_calls"]

_RESULTS = ".dc_probes.jsonl"


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
        if candidate is None or candidate in calls:
            continue
        try:
            node = ast.parse(candidate, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call) or not all(
            _literal(arg) for arg in [*node.args, *(k.value for k in node.keywords)]
        ):
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


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


class ProbeRunner:
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
        script = resources.files("debatecode.execution").joinpath("probe_script.py").read_text("utf-8")
        timeout = min(self.limits.timeout_s, 10 + self.per_call_s * len(calls))
        job = ExecJob(
            files={"solution.py": code, "probe_calls.json": json.dumps(calls), "probe.py": script},
            argv=["python3", "probe.py"],
            limits=self.limits.model_copy(update={"timeout_s": timeout}),
            collect=[_RESULTS],
            env={"DC_PROBE_TIMEOUT": f"{self.per_call_s:g}", "PYTHONDONTWRITEBYTECODE": "1"},
        )
        result = await self.sandbox.run(job)
        found: dict[str, ProbeResult] = {}
        for line in result.files.get(_RESULTS, "").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and record.get("call") in calls:
                found[record["call"]] = ProbeResult(
                    call=record["call"],
                    outcome=str(record.get("outcome", "raises")),
                    expected=str(record.get("expected", "")),
                    message=str(record.get("message", "")),
                )
        return [
            found.get(call, ProbeResult(call, "timeout", "", "the probe run ended before this call")) for call in calls
        ]
