"""Whether the tests already choose among the candidates, so that critique and review can stay silent.

The debate spends tokens on arguments only where execution cannot decide. When
one candidate passes more tests than every other (visible, then adjudicated,
exchanged and Red-team tests, as ``Candidate.score`` orders them), or when the
leading candidates are the same code, there is nothing for critique or review to
settle: the tests have spoken. ``critique.when`` and ``review.when`` set to
``always`` restore the arguments regardless.
"""

from __future__ import annotations

from collections.abc import Sequence

from debatecode.protocol.state import Candidate

__all__ = ["separated_by_tests"]


def _normalised(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def separated_by_tests(candidates: Sequence[Candidate], *, same_code: bool = True) -> str | None:
    """Why the tests alone already decide among ``candidates``, or None when arguments are needed.

    None when fewer than two candidates have code (nothing to separate: a lone
    candidate is still reviewed), or when two or more different codes share the
    best test score. With ``same_code`` off, leading candidates that are the same
    code do not count as separated (a review of that code still has something to say).
    """
    with_code = [c for c in candidates if c.code is not None]
    if len(with_code) < 2:
        return None
    best = max(c.score() for c in with_code)
    top = [c for c in with_code if c.score() == best]
    if len(top) == 1:
        return f"{top[0].agent_id} passes more tests than every other candidate"
    if same_code and len({_normalised(c.code or "") for c in top}) == 1:
        return f"the {len(top)} leading candidates are the same code"
    return None
