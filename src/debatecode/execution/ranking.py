"""One candidate ranking for every strategy: tests passed first, then agreement on generated inputs, then age.

Vote, Reflexion, the debate's convergence and the benchmark's rescoring all pick
their answer with ``rank_candidates``, so a strategy differs from another only in
the candidates it writes, never in how it chooses among them.

1. **Tests passed**, in the order of ``Evidence.tests``: the visible examples
   first, then any weaker kind (adjudicated tests, exchanged tests...). A
   candidate that passes more visible tests always ranks higher.
2. **Behavioural agreement** with the other candidates of the same test tier
   on generated inputs (MBR-exec, CodeT's and AlphaCode's clustering): for each
   input, the number of other candidates that returned the same value. An
   error or a timeout agrees with nothing, so a candidate that crashes on an
   input gains nothing there. Agreement is counted *within* a tier: the wrong
   answers of a small model are often its consistent majority, so agreement
   only chooses among candidates the tests cannot separate.
3. **The earliest candidate** wins what is still tied.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from debatecode.execution.probes import ProbeResult

__all__ = ["Evidence", "Ranked", "behaviour_of", "rank_candidates"]


@dataclass(frozen=True)
class Evidence:
    """What is known about one candidate when ranking."""

    position: int
    """Its age among the candidates: 0 for the first written. Ties go to the lowest."""
    tests: tuple[int, ...]
    """Tests passed, strongest kind first (visible examples, then adjudicated, exchanged...)."""
    behaviour: tuple[str | None, ...] = ()
    """Its output on each generated input (a canonical text), ``None`` for an error or a timeout."""


@dataclass(frozen=True)
class Ranked:
    """One candidate's place: its evidence, its agreement score and the size of its behaviour cluster."""

    evidence: Evidence
    agreement: int
    """Sum over generated inputs of the other same-tier candidates that returned the same value."""
    cluster: int
    """Candidates of its tier (itself included) that behaved identically on every input, none failing."""
    tier_size: int = field(default=1)


def behaviour_of(results: Sequence[ProbeResult]) -> tuple[str | None, ...]:
    """A candidate's behaviour from its probe results: the value's text, or ``None`` for a raise or a timeout."""
    return tuple(result.expected if result.outcome == "value" else None for result in results)


def rank_candidates(evidence: Sequence[Evidence]) -> list[Ranked]:
    """Best first; see the module's docstring for the order.

    Raises:
        ValueError: two candidates share a position, or behaviours of different lengths are compared.
    """
    positions = [e.position for e in evidence]
    if len(set(positions)) != len(positions):
        raise ValueError("every candidate needs its own position")
    tiers: dict[tuple[int, ...], list[Evidence]] = {}
    for item in evidence:
        tiers.setdefault(item.tests, []).append(item)
    ranked: list[Ranked] = []
    for tests in sorted(tiers, reverse=True):
        members = tiers[tests]
        lengths = {len(m.behaviour) for m in members if m.behaviour}
        if len(lengths) > 1:
            raise ValueError(f"behaviours of different lengths in one tier: {sorted(lengths)}")
        per_input = _answers_per_input(members)
        signatures = Counter(m.behaviour for m in members if m.behaviour and None not in m.behaviour)
        scored = [
            Ranked(
                evidence=m,
                agreement=sum(per_input[i][out] - 1 for i, out in enumerate(m.behaviour) if out is not None),
                cluster=signatures.get(m.behaviour, 0) if m.behaviour and None not in m.behaviour else 1,
                tier_size=len(members),
            )
            for m in members
        ]
        ranked.extend(sorted(scored, key=lambda r: (-r.agreement, r.evidence.position)))
    return ranked


def _answers_per_input(members: Sequence[Evidence]) -> list[Counter[str]]:
    width = max((len(m.behaviour) for m in members), default=0)
    counts: list[Counter[str]] = [Counter() for _ in range(width)]
    for member in members:
        for index, output in enumerate(member.behaviour):
            if output is not None:
                counts[index][output] += 1
    return counts
