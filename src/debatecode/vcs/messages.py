"""Commit messages of code versions: a readable subject line and machine-readable trailers.

``version_message(...)`` builds both from the facts of a version, so every
commit on ``debate/<session-id>`` states its phase, agent, round, tests and
quality score the same way::

    proposal: agent-1 round 1 (3/5 tests, quality 0.82)

    Debate-Session: 3f2a9c0d1e2f
    Agent: agent-1
    Phase: proposal
    Round: 1
    Tests: 3/5
    Quality-Score: 0.82
    Turn: 7c1d...
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["QUALITY_TRAILER", "VersionMessage", "version_message"]

QUALITY_TRAILER = "Quality-Score"


@dataclass(frozen=True, slots=True)
class VersionMessage:
    """The subject and trailers of one version's commit, for ``SessionWorktree.commit_version``."""

    subject: str
    trailers: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The full message as git stores it (``commit_version`` adds the session trailer itself)."""
        return self.subject + "\n\n" + "\n".join(f"{key}: {value}" for key, value in self.trailers.items()) + "\n"


def _one_line(value: str) -> str:
    return " ".join(value.split())


def version_message(
    *,
    phase: str,
    agent: str,
    round_no: int,
    tests_passed: int,
    tests_total: int,
    score: float | None = None,
    session_id: str | None = None,
    turn_id: str | None = None,
    extra: dict[str, str] | None = None,
) -> VersionMessage:
    """The commit message of one code version.

    ``score`` is the version's quality score (0-1), or None when it was not
    measured; the subject then says ``quality n/a``. ``extra`` trailers follow
    the standard ones, in order. Values are collapsed onto one line, because
    a trailer must be a single line.

    Raises:
        ValueError: ``score`` is outside 0-1, or a test count is negative or inconsistent.
    """
    if score is not None and not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be between 0 and 1, got {score}")
    if tests_passed < 0 or tests_total < 0 or tests_passed > tests_total:
        raise ValueError(f"inconsistent test counts: {tests_passed}/{tests_total}")
    quality = f"{score:.2f}" if score is not None else "n/a"
    subject = f"{_one_line(phase)}: {_one_line(agent)} round {round_no} ({tests_passed}/{tests_total} tests, quality {quality})"
    trailers: dict[str, str] = {}
    if session_id:
        trailers["Debate-Session"] = _one_line(session_id)
    trailers |= {
        "Agent": _one_line(agent),
        "Phase": _one_line(phase),
        "Round": str(round_no),
        "Tests": f"{tests_passed}/{tests_total}",
        QUALITY_TRAILER: quality,
    }
    if turn_id:
        trailers["Turn"] = _one_line(turn_id)
    for key, value in (extra or {}).items():
        trailers[key] = _one_line(value)
    return VersionMessage(subject, trailers)
