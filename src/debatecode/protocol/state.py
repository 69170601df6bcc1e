"""The persisted state of a debate: sessions, turns and code versions, and the test reports turns carry.

The records live in ``debatecode.store.records`` (the store writes them, the
protocol fills them) and the test results in ``debatecode.execution.results``;
both sit below the protocol, which re-exports them here.
"""

from __future__ import annotations

from debatecode.execution.results import TestCaseResult, TestOutcome, TestReport
from debatecode.store.records import (
    SCHEMA_VERSION,
    CodeVersionRecord,
    GateRecord,
    GateStatus,
    SessionRecord,
    SessionStatus,
    TurnRecord,
    TurnStatus,
    utcnow,
)

__all__ = [
    "SCHEMA_VERSION",
    "CodeVersionRecord",
    "GateRecord",
    "GateStatus",
    "SessionRecord",
    "SessionStatus",
    "TestCaseResult",
    "TestOutcome",
    "TestReport",
    "TurnRecord",
    "TurnStatus",
    "utcnow",
]
