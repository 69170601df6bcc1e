"""The statistics of a strategy comparison: Wilson intervals and the exact McNemar test on paired problems.

Both come from scipy's ``binomtest``: the Wilson score interval of a pass rate, and the exact
McNemar test, which is the two-sided binomial test (p = 1/2) on the discordant pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["PairedTest", "mcnemar_exact_p", "paired_test", "wilson_interval"]


def wilson_interval(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate (sound at 0 and n, unlike the normal approximation).

    ``n == 0`` knows nothing: the whole of [0, 1].
    """
    if n == 0:
        return (0.0, 1.0)
    from scipy.stats import binomtest

    interval = binomtest(passed, n).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(interval.low), float(interval.high))


def mcnemar_exact_p(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (binomial, p = 1/2).

    Exact at any count, so it stays sound where the chi-squared approximation
    does not (fewer than about 25 discordant pairs). No discordant pair: 1.0.
    """
    n = wins + losses
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(wins, n, p=0.5, alternative="two-sided").pvalue)


@dataclass(frozen=True)
class PairedTest:
    """Two strategies on the problems both finished: the discordant pairs and the exact McNemar p."""

    first: str
    second: str
    problems: int
    """Problems both strategies have an answer for."""
    b: int
    """Problems ``first`` passes and ``second`` fails."""
    c: int
    """Problems ``second`` passes and ``first`` fails."""

    @property
    def p(self) -> float:
        """Two-sided exact McNemar p-value."""
        return mcnemar_exact_p(self.b, self.c)


def paired_test(first: str, a: Mapping[str, bool], second: str, b: Mapping[str, bool]) -> PairedTest:
    """``first``'s per-problem passes ``a`` against ``second``'s ``b``, on the problems in both."""
    shared = [task for task in a if task in b]
    return PairedTest(
        first=first,
        second=second,
        problems=len(shared),
        b=sum(a[t] and not b[t] for t in shared),
        c=sum(b[t] and not a[t] for t in shared),
    )
