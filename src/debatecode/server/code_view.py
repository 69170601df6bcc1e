"""What a code debate's page shows beyond the live fold: test results per case, every model call, versions compared.

- **tests**: each candidate's latest test run, case by case, with the failing
  cases' messages and the run's output;
- **model calls**: every turn a model answered, with its tokens, latency and
  sampling parameters (temperature, seed, prompt style);
- **compare**: any two code versions side by side, line against line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from debatecode.server.session_view import NOT_AGENTS
from debatecode.store.records import CodeVersionRecord, TurnRecord

__all__ = ["CaseRow", "Comparison", "ModelCall", "TestRun", "compare_versions", "latest_test_runs", "model_calls"]

PARAMETERS = ("temperature", "seed", "top_p", "max_tokens", "prompt_style")
"""Sampling parameters a turn's metadata may record, shown in this order."""


@dataclass(frozen=True)
class CaseRow:
    name: str
    suite: str
    outcome: str
    duration_s: float
    message: str

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


@dataclass(frozen=True)
class TestRun:
    """One candidate's latest run of its tests."""

    __test__ = False
    agent_id: str
    seq: int
    round: int
    phase: str
    cases: list[CaseRow]
    status: str
    output: str

    @property
    def passed(self) -> int:
        return sum(1 for case in self.cases if case.passed)

    @property
    def failed(self) -> list[CaseRow]:
        return [case for case in self.cases if not case.passed]


@dataclass(frozen=True)
class ModelCall:
    seq: int
    round: int
    phase: str
    agent_id: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    status: str
    parameters: dict[str, Any]


@dataclass
class Comparison:
    """Two code versions side by side: rows of (left line number, left text, right line number, right text, kind)."""

    left: CodeVersionRecord
    right: CodeVersionRecord
    rows: list[tuple[int | None, str, int | None, str, str]] = field(default_factory=list)
    """``kind`` is ``same``, ``changed``, ``removed`` (left only) or ``added`` (right only)."""

    @property
    def identical(self) -> bool:
        return all(kind == "same" for *_, kind in self.rows)


def latest_test_runs(turns: Sequence[TurnRecord]) -> list[TestRun]:
    """Each agent's latest turn with test results, case by case, in the agents' first-seen order."""
    latest: dict[str, TestRun] = {}
    for turn in turns:
        report = turn.test_results
        if not isinstance(report, Mapping) or not isinstance(report.get("cases"), list):
            continue
        cases = [_case(case) for case in report["cases"] if isinstance(case, Mapping)]
        latest[turn.agent_id] = TestRun(
            agent_id=turn.agent_id,
            seq=turn.seq,
            round=turn.round,
            phase=turn.phase,
            cases=cases,
            status=str(report.get("status") or ""),
            output=str(report.get("output") or ""),
        )
    return list(latest.values())


def _case(case: Mapping[str, Any]) -> CaseRow:
    duration = case.get("duration_s")
    return CaseRow(
        name=str(case.get("name") or "?"),
        suite=str(case.get("suite") or ""),
        outcome=str(case.get("outcome") or "?"),
        duration_s=float(duration) if isinstance(duration, int | float) else 0.0,
        message=str(case.get("message") or ""),
    )


def model_calls(turns: Sequence[TurnRecord]) -> list[ModelCall]:
    """Every turn a model answered (not tools, hooks or the human), in order."""
    return [
        ModelCall(
            seq=turn.seq,
            round=turn.round,
            phase=turn.phase,
            agent_id=turn.agent_id,
            model=turn.model,
            prompt_tokens=turn.prompt_tokens,
            completion_tokens=turn.completion_tokens,
            latency_ms=turn.response_time_ms,
            status=turn.status,
            parameters={key: turn.metadata[key] for key in PARAMETERS if key in turn.metadata},
        )
        for turn in turns
        if turn.provider not in NOT_AGENTS and turn.agent_role != "human" and turn.provider
    ]


def compare_versions(left: CodeVersionRecord, right: CodeVersionRecord) -> Comparison:
    """``left`` and ``right`` side by side, aligned by ``difflib``'s matching blocks."""
    a, b = left.code.splitlines(), right.code.splitlines()
    comparison = Comparison(left, right)
    rows = comparison.rows
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend((i + 1, a[i], j + 1, b[j], "same") for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        for offset in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + offset, j1 + offset
            has_left, has_right = i < i2, j < j2
            kind = "changed" if has_left and has_right else "removed" if has_left else "added"
            rows.append(
                (
                    i + 1 if has_left else None,
                    a[i] if has_left else "",
                    j + 1 if has_right else None,
                    b[j] if has_right else "",
                    kind,
                )
            )
    return comparison
