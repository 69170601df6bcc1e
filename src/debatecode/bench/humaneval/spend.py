"""Spend matching: the setting of a strategy (vote's N, Reflexion's attempts) whose mean spend meets a reference's.

"Debate or Vote" compares strategies at equal spend, not under an equal cap:
a vote capped at debate's budget still spends a tenth of it. ``match_spend``
searches the integer setting whose mean tokens spent per problem lands
within ±``tolerance`` of the reference strategy's mean on the same problems.
Spend grows with the setting, so the search steps towards the target by
the spend per unit seen so far, and then picks, among every setting that can
be scored without a new session, the one closest to the target.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from debatecode.bench._stats import PairedTest, paired_test

__all__ = ["TOLERANCE", "SpendMatch", "SpendPoint", "SpendSearch", "match_spend"]

TOLERANCE = 0.10
"""How close a matched mean spend must come to the reference's: ±10%."""

_MAX_STEPS = 16


@dataclass(frozen=True)
class SpendPoint:
    """A strategy at one setting over the chosen problems: what passed and what it spent, per problem on average."""

    strategy: str
    setting: int
    """``vote``: N, the samples voted on; ``reflexion``: the most reflect-and-retry attempts."""
    passed: Mapping[str, bool]
    """Whether the final answer passes the hidden tests, by task id."""
    tokens: float
    """Mean prompt + completion tokens spent per problem."""
    calls: float
    seconds: float

    @property
    def label(self) -> str:
        """``vote@9``, ``reflexion@4``."""
        return f"{self.strategy}@{self.setting}"

    @property
    def pass_at_1(self) -> float:
        return sum(self.passed.values()) / len(self.passed) if self.passed else 0.0


@dataclass(frozen=True)
class SpendMatch:
    """The outcome of matching one strategy's spend to the reference's."""

    strategy: str
    reference: str
    target: float
    """The reference's mean tokens spent per problem."""
    point: SpendPoint | None
    """The setting closest to the target (None when the reference spent nothing)."""
    points: tuple[SpendPoint, ...]
    """Every setting the search ran or could score without a new session, ascending."""
    reached: bool
    """``point`` spends within ±``TOLERANCE`` of ``target``."""
    note: str
    """Why the target could not be reached; empty when it was."""
    paired: PairedTest | None
    """The reference against ``point`` on the same problems (b: only the reference passes, c: only ``point``)."""

    @property
    def ratio(self) -> float | None:
        """``point``'s mean spend over the target."""
        return self.point.tokens / self.target if self.point is not None and self.target > 0 else None


@dataclass(frozen=True)
class SpendSearch:
    """How ``match_spend`` reaches a strategy's results at a setting."""

    strategy: str
    start: int
    """The first setting to run (one already run is cheapest)."""
    cap: int
    """The largest setting allowed."""
    cap_hint: str
    """How to raise the cap, for the note: ``--max-vote-n``."""
    prepare: Callable[[int], Awaitable[None]]
    """Run what is missing for the results at a setting."""
    point: Callable[[int], SpendPoint]
    """The results at a prepared setting."""
    available: Callable[[], Sequence[int]]
    """Settings scorable now without a new session (vote: every N up to the samples drawn)."""
    saturated: Callable[[int], bool]
    """True when a larger setting cannot spend more than this one (nothing would change)."""
    saturation_reason: str
    """Why, in words, for the note."""
    floor: int = 1


async def match_spend(
    search: SpendSearch,
    reference: str,
    target: float,
    reference_passed: Mapping[str, bool],
    tolerance: float = TOLERANCE,
) -> SpendMatch:
    """Find ``search.strategy``'s setting whose mean spend is within ±``tolerance`` of ``target``, or the closest one.

    Raises:
        As ``search.prepare``: the sessions it runs.
    """
    if target <= 0:
        return SpendMatch(search.strategy, reference, target, None, (), False, f"{reference} spent no tokens", None)
    lower, upper = target * (1 - tolerance), target * (1 + tolerance)
    spent: dict[int, float] = {}
    stop = ""
    setting = min(max(search.start, search.floor), search.cap)
    for _ in range(_MAX_STEPS):
        await search.prepare(setting)
        spend = spent[setting] = search.point(setting).tokens
        if lower <= spend <= upper:
            stop = ""
            break
        below = [s for s in spent if s < setting]
        if spend < lower:
            if setting >= search.cap:
                stop = "cap"
                break
            if search.saturated(setting) or (below and spent[max(below)] >= spend):
                stop = "saturated"
                break
            following = min(search.cap, max(setting + 1, _estimate(setting, spent, target)))
        else:
            if setting <= search.floor:
                stop = "floor"
                break
            following = max(search.floor, min(setting - 1, _estimate(setting, spent, target)))
        if following in spent:
            stop = "step"
            break
        setting = following
    else:
        stop = "steps"
    candidates = sorted(s for s in {*search.available(), *spent} if search.floor <= s <= search.cap)
    points = [search.point(s) for s in candidates]
    # Equal spends (a setting that changes nothing) go to a setting that ran, then to the smallest.
    best = min(points, key=lambda p: (abs(p.tokens / target - 1), p.setting not in spent, p.setting))
    reached = lower <= best.tokens <= upper
    note = "" if reached else _why(stop, search, setting, points, reference, target, tolerance)
    paired = paired_test(reference, reference_passed, best.label, best.passed)
    return SpendMatch(search.strategy, reference, target, best, tuple(points), reached, note, paired)


def _estimate(setting: int, spent: Mapping[int, float], target: float) -> int:
    """The setting expected to spend ``target``: along the line to the nearest other setting tried, else through 0."""
    spend = spent[setting]
    others = sorted((abs(s - setting), s) for s in spent if s != setting and spent[s] != spend)
    if others:
        other = others[0][1]
        slope = (spend - spent[other]) / (setting - other)
        if slope > 0:
            return round(setting + (target - spend) / slope)
    if spend <= 0:
        return setting + 1
    return round(setting * target / spend)


def _why(
    stop: str,
    search: SpendSearch,
    last: int,
    points: Sequence[SpendPoint],
    reference: str,
    target: float,
    tolerance: float,
) -> str:
    by = {p.setting: p for p in points}
    window = f"±{tolerance:.0%}"

    def spends(setting: int) -> str:
        return f"{search.strategy}@{setting} spends {by[setting].tokens / target:.2f}× {reference}"

    if stop == "cap":
        return f"{spends(search.cap)} at the cap ({search.cap_hint} {search.cap}); a higher cap could reach {window}"
    if stop == "saturated":
        return f"{spends(last)} and more would spend no more: {search.saturation_reason}"
    if stop == "floor":
        return f"even {spends(search.floor)}, more than {reference} + {tolerance:.0%}"
    under = max((p for p in points if p.tokens < target), key=lambda p: p.tokens, default=None)
    over = min((p for p in points if p.tokens > target), key=lambda p: p.tokens, default=None)
    if under is not None and over is not None:
        return (
            f"no setting lands within {window}: {spends(under.setting)}, {spends(over.setting)}; "
            "one step moves the spend across the whole window"
        )
    return f"the search stopped after {_MAX_STEPS} steps, closest {spends(min(by, key=lambda s: abs(by[s].tokens - target)))}"
