"""The statistics of a strategy comparison: Wilson intervals and the exact McNemar test on paired problems."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["PairedTest", "mcnemar_exact_p", "paired_test", "wilson_interval"]


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a pass rate (sound at 0 and n, unlike the normal approximation)."""
    if n == 0:
        return (0.0, 1.0)
    rate = passed / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact_p(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (binomial, p = 1/2).

    Exact at any count, so it stays sound where the chi-squared approximation
    does not (fewer than about 25 discordant pairs).
    """
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


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
