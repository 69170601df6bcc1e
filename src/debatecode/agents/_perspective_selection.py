"""How the moderator picks the perspectives of a design debate: ``select_perspectives`` and its tables.

The rules are described in ``debatecode.agents.perspectives``, which
re-exports the public names. Nothing here calls a model.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from debatecode.agents._perspective_catalog import CROSS_CUTTING_CONCERNS, Perspective, slug
from debatecode.agents._question import (
    Complexity,
    Domain,
    ImplicitConstraint,
    as_words,
    complexity_of,
    count_options,
    domain_of,
    find_constraints,
    is_binary,
    matches,
)
from debatecode.errors import ConfigError

__all__ = [
    "FALLBACK",
    "OPPOSING_PAIRS",
    "Selection",
    "complexity_rounds",
    "opposes",
    "select_perspectives",
    "specialists",
]

_CUSTOM_TABLE = "design.custom_perspectives"


# --- Selection tables ----------------------------------------------------------------------------------------------


OPPOSING_PAIRS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("performance", "simplicity"),
        ("performance", "cost"),
        ("performance", "operational-simplicity"),
        ("performance", "data-integrity"),
        ("performance", "developer-experience"),
        ("performance", "observability"),
        ("security", "user-experience"),
        ("security", "developer-experience"),
        ("security", "delivery-speed"),
        ("future-flexibility", "simplicity"),
        ("future-flexibility", "delivery-speed"),
        ("future-flexibility", "operational-simplicity"),
        ("future-flexibility", "cost"),
        ("user-experience", "operational-simplicity"),
        ("user-experience", "cost"),
        ("data-integrity", "delivery-speed"),
        ("data-integrity", "operational-simplicity"),
        ("data-integrity", "simplicity"),
        ("reliability", "cost"),
        ("reliability", "delivery-speed"),
        ("reliability", "simplicity"),
        ("test", "delivery-speed"),
        ("observability", "cost"),
        ("operations", "delivery-speed"),
        ("architect", "engineer"),
        ("designer", "engineer"),
        ("researcher", "delivery-speed"),
    )
)
"""Perspective keys whose trade-offs pull against each other (performance accepts complexity, simplicity refuses it...)."""

FALLBACK: tuple[str, ...] = ("simplicity", "future-flexibility", "performance", "user-experience")
"""Perspectives that fill slots no keyword claimed, in this order."""


def opposes(first: str, second: str) -> bool:
    """Whether perspectives ``first`` and ``second`` (keys) form an opposing pair."""
    return frozenset((first, second)) in OPPOSING_PAIRS


# --- Selection ------------------------------------------------------------------------------------------------------


class Selection(BaseModel):
    """The moderator's choice of perspectives for a question, and its reading of the question."""

    model_config = ConfigDict(extra="forbid")

    chosen: list[Perspective]
    """Domain picks, then cross-cutting ones (observability → operations → test → security), then the always-present ones."""
    reasons: dict[str, str]
    """Perspective key → why it was chosen, in one line."""
    domain: Domain
    complexity: Complexity
    constraints: list[str] = Field(default_factory=list)
    """Implicit constraints found (by name), then explicit ones no known constraint matched."""

    @property
    def keys(self) -> list[str]:
        """The chosen perspectives' keys, in speaking order."""
        return [perspective.key for perspective in self.chosen]

    def reason_lines(self) -> str:
        """``key: why`` for each chosen perspective, one per line."""
        return "\n".join(f"{key}: {self.reasons[key]}" for key in self.keys)


def specialists(catalog: Mapping[str, Perspective]) -> list[Perspective]:
    """The cross-cutting specialists every debate includes (seed 000's rule of thumb), in speaking order.

    They are the catalog entries keyed ``observability``, ``operations``, ``test`` and ``security``
    (a custom entry with one of those keys replaces the shipped one); a catalog without one has none.
    """
    return [catalog[key] for key in CROSS_CUTTING_CONCERNS if key in catalog]


def _resolve(requested: Sequence[str], catalog: Mapping[str, Perspective], *, what: str) -> list[Perspective]:
    lookup: dict[str, Perspective] = {}
    for perspective in catalog.values():
        lookup.setdefault(perspective.key, perspective)
        lookup.setdefault(perspective.name.strip().lower(), perspective)
        lookup.setdefault(slug(perspective.name), perspective)
    chosen: list[Perspective] = []
    for item in requested:
        wanted = item.strip().lower()
        match = lookup.get(wanted) or lookup.get(slug(wanted))
        if match is None:
            close = difflib.get_close_matches(wanted, list(lookup), n=1)
            hint = f" (did you mean {lookup[close[0]].key!r}?)" if close else ""
            if wanted.isdigit():
                hint = (
                    f" (a number is a count, not a name: pass --perspectives {wanted} on its own, "
                    f"or set design.perspective_count = {wanted} in debatecode.toml)"
                )
            raise ConfigError(
                f"unknown {what} {item!r}{hint}; known perspectives: {', '.join(catalog)}. "
                f"Define new ones under [[{_CUSTOM_TABLE}]] in debatecode.toml.",
                key="perspectives",
            )
        if all(p.key != match.key for p in chosen):
            chosen.append(match)
    return chosen


def _balance(
    picks: list[Perspective], ranked: list[Perspective], scores: Mapping[str, int], reasons: dict[str, str]
) -> list[Perspective]:
    """``picks`` (strongest first) with an opposing pair: unchanged if they hold one, else the weakest swapped.

    The one swapped in is the best-scoring perspective opposing some pick,
    then the one opposing the most picks, then the earliest in the catalog.
    The one swapped out is the weakest pick whose loss leaves a pick it opposes.
    """
    if len(picks) < 2 or any(opposes(a.key, b.key) for a in picks for b in picks):
        return picks
    taken = {p.key for p in picks}
    opposed = {c.key: [p for p in picks if opposes(c.key, p.key)] for c in ranked if c.key not in taken}
    # max() keeps the first of equals, and ``ranked`` lists equal scores in catalog order.
    best = max(
        (c for c in ranked if opposed.get(c.key)), key=lambda c: (scores[c.key], len(opposed[c.key])), default=None
    )
    if best is None:
        return picks
    # Picks run from strongest to weakest; drop the weakest whose loss still leaves one that ``best`` opposes.
    dropped = next(p for p in reversed(picks) if any(q is not p for q in opposed[best.key]))
    reasons.pop(dropped.key, None)
    against = ", ".join(p.name for p in opposed[best.key] if p is not dropped)
    why = f"balance: its trade-offs oppose {against} (replaces {dropped.name})"
    reasons[best.key] = "; ".join(part for part in (why, reasons.get(best.key, "")) if part)
    return [p for p in picks if p is not dropped] + [best]


def _in_speaking_order(
    picks: list[Perspective], catalog: Mapping[str, Perspective], switched_off: Collection[str]
) -> list[Perspective]:
    unique = list({p.key: p for p in picks}.values())
    domain = [p for p in unique if not p.cross_cutting and not p.always]
    cross = [p for concern in CROSS_CUTTING_CONCERNS for p in unique if p.concern == concern and not p.always]
    return domain + cross + [p for p in catalog.values() if p.always and p.key not in switched_off]


def select_perspectives(
    question: str,
    catalog: Mapping[str, Perspective],
    *,
    count: int | None = None,
    requested: Sequence[str] | None = None,
    constraints: Sequence[str] = (),
    council: Sequence[str] | None = None,
    switched_off: Collection[str] = (),
) -> Selection:
    """The perspectives to debate ``question`` from, by the heuristic in ``debatecode.agents.perspectives``.

    ``count`` is the number of domain perspectives the moderator picks, besides the
    cross-cutting specialists and the always-present ones (default: 2 for a binary
    choice, else 3 or 4 by complexity). ``requested`` names the perspectives instead
    (keys or names, any case); ``council`` names the members of a council debate
    (``design.council``); ``constraints`` adds explicit constraints to those found in
    the question. ``switched_off`` holds keys of always-present perspectives left out
    (``design.contrarian = false``, ``design.moonshot = false``).

    Raises:
        ConfigError: ``count`` is below 1, a requested perspective or council member is not in
            ``catalog``, or both ``requested`` and ``council`` are given.
    """
    text = as_words(" ".join([question, *constraints]))
    found, unmatched = find_constraints(text, constraints)
    options = count_options(question)
    complexity = complexity_of(question, options, len(found) + len(unmatched))
    reasons: dict[str, str] = {}
    if requested and council:
        raise ConfigError(
            f"a council debate debates with its members ({', '.join(council)}), not with named perspectives "
            f"({', '.join(requested)}); drop --council, or drop the named perspectives (the --perspectives flag, "
            "design.perspectives or the question file's 'perspectives:')",
            key="design.council",
        )
    if requested:
        picks = [p for p in _resolve(requested, catalog, what="perspective") if not p.always]
        reasons.update({p.key: "requested" for p in picks})
    elif council:
        picks = [p for p in _resolve(council, catalog, what="council member") if not p.always]
        reasons.update({p.key: "council member (design.council)" for p in picks})
    else:
        if count is None:
            count = 2 if is_binary(question, options) and complexity != "high" else 4 if complexity == "high" else 3
        if count < 1:
            raise ConfigError(
                f"a debate needs at least 1 perspective besides the always-present ones, not {count}",
                key="design.perspective_count",
            )
        picks = _pick(catalog, text, found, count, reasons)
    for specialist in specialists(catalog):
        if specialist.key not in reasons:
            matched = [word for word in specialist.keywords if matches(word, text)]
            why = f"always takes part: the {specialist.concern} specialist joins every debate"
            reasons[specialist.key] = why + (f"; keywords {', '.join(matched)}" if matched else "")
    chosen = _in_speaking_order([*picks, *specialists(catalog)], catalog, switched_off)
    for perspective in chosen:
        if perspective.always:
            reasons[perspective.key] = f"always takes part: {perspective.focus}"
    return Selection(
        chosen=chosen,
        reasons={p.key: reasons[p.key] for p in chosen},
        domain=domain_of(text),
        complexity=complexity,
        constraints=[c.name for c in found] + unmatched,
    )


def _pick(
    catalog: Mapping[str, Perspective],
    text: str,
    found: list[ImplicitConstraint],
    count: int,
    reasons: dict[str, str],
) -> list[Perspective]:
    """The ``count`` best domain perspectives for ``text``: specialists, council members and always-present ones never compete."""
    fixed = {p.key for p in specialists(catalog)}
    candidates = [p for p in catalog.values() if not p.always and not p.council and p.key not in fixed]
    position = {p.key: index for index, p in enumerate(candidates)}
    scores: dict[str, int] = {}
    for perspective in candidates:
        matched = [word for word in perspective.keywords if matches(word, text)]
        weighed = [(c.name, c.weights[perspective.key]) for c in found if perspective.key in c.weights]
        scores[perspective.key] = len(matched) + sum(weight for _, weight in weighed)
        why = [f"keywords {', '.join(matched)}"] if matched else []
        why += [f"constraint {name!r} (+{weight})" for name, weight in weighed]
        if why:
            reasons[perspective.key] = "; ".join(why)
    ranked = sorted(candidates, key=lambda p: (-scores[p.key], position[p.key]))
    picks = [p for p in ranked if scores[p.key] > 0][:count]
    fillers = [catalog[key] for key in FALLBACK if key in position]
    for perspective in [*fillers, *ranked]:
        if len(picks) >= count:
            break
        if all(p.key != perspective.key for p in picks):
            picks.append(perspective)
            reasons[perspective.key] = "fills a free slot: no keyword or constraint pointed elsewhere"
    return _balance(picks, ranked, scores, reasons)


def complexity_rounds(complexity: Complexity, min_rounds: int, max_rounds: int) -> int:
    """Response rounds for a question: ``low`` → ``min_rounds``, ``medium`` → +1, ``high`` → +2, at most ``max_rounds``.

    Raises:
        ValueError: ``min_rounds`` is below 1 or above ``max_rounds``.
    """
    if min_rounds < 1 or max_rounds < min_rounds:
        raise ValueError(f"need 1 <= min_rounds <= max_rounds, got {min_rounds} and {max_rounds}")
    extra = {"low": 0, "medium": 1, "high": 2}[complexity]
    return min(max_rounds, min_rounds + extra)
