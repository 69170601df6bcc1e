"""Perspectives: the viewpoints design debaters argue from, and how the moderator picks them.

A perspective is a viewpoint ("optimise for maintainability"), never a persona.
The catalog ships as ``perspectives.yaml`` next to this module; users add or
override entries with ``[[design.custom_perspectives]]`` (``CustomPerspective``),
and ``load_catalog`` merges the two.

``select_perspectives`` is the moderator's heuristic. It is deterministic and
calls no model:

1. **Matching.** The question (and any explicit constraints) is lower-cased
   and reduced to words. A keyword of four or more characters is a stem and
   matches any word it starts (``cach`` matches "caching"); a shorter one
   matches whole words only (``ui`` never matches "build"); a keyword of
   several words matches them in a row. Each perspective that is not
   ``always`` scores one point per keyword of its own that matches.
2. **Implicit constraints.** Phrases in ``CONSTRAINTS`` ("ship fast", "small
   team", "deadline", "budget", "compliance", "legacy"...) are detected the same
   way and add their weights to the perspectives they favour: a small team
   that must ship fast weighs Simplicity and Operational Simplicity up.
   Explicit ``constraints`` may also name a constraint directly.
3. **Domain.** The question's domain (architecture, data, security,
   performance, ux, operations, process) is the one whose stems in ``DOMAINS``
   match most often, ties going to the earlier one; ``general`` when none does.
4. **Complexity.** One point each for 20+ words, 45+ words, three or more
   options ("A, B or C"), four or more clauses (sentences and clauses joined
   by "and", "but", "while", "because", "given"...) and two or more
   constraints: 0 points is ``low``, 1-2 ``medium``, 3+ ``high``.
5. **How many.** A binary choice ("X or Y", or a yes/no question such as
   "should we ...?") gets 2 perspectives unless it is ``high`` complexity;
   anything else gets 3, or 4 when ``high``. ``count`` overrides this.
6. **Picking.** Perspectives are ranked by score, ties in catalog order;
   the best ``count`` with a positive score are picked, and free slots are
   filled from ``FALLBACK`` (then catalog order).
7. **Balance.** Two picks whose trade-offs pull against each other form an
   opposing pair (``OPPOSING_PAIRS``: performance vs simplicity, security vs
   user experience...). When two or more picks contain no such pair, the
   best-scoring perspective that opposes one of them (ties: the one opposing
   most picks, then catalog order) replaces the weakest pick, but never the
   only one it opposes, so the debaters never all pull the same way.
8. **Order.** Domain picks come first in rank order, then cross-cutting ones
   in the fixed order observability → operations → test → security, then
   every ``always`` perspective (the Contrarian and the Moonshot).

``requested`` perspectives (keys or names, any case, custom ones included)
replace steps 5-7; the ``always`` perspectives are still appended. An unknown
name is a ``ConfigError`` listing the known keys with a did-you-mean.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from debatecode.agents._question import (
    CONSTRAINTS,
    DOMAINS,
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
    "CATALOG_FILE",
    "CONCERNS",
    "CONSTRAINTS",
    "CROSS_CUTTING_CONCERNS",
    "DOMAINS",
    "FALLBACK",
    "OPPOSING_PAIRS",
    "Complexity",
    "CustomPerspective",
    "Domain",
    "ImplicitConstraint",
    "Perspective",
    "Selection",
    "complexity_rounds",
    "load_catalog",
    "opposes",
    "parse_catalog",
    "select_perspectives",
]

CATALOG_FILE = "perspectives.yaml"
"""The shipped catalog, a resource of ``debatecode.agents``."""

CROSS_CUTTING_CONCERNS: tuple[str, ...] = ("observability", "operations", "test", "security")
"""Cross-cutting concerns, in the order they speak at the end of a round."""

CONCERNS: tuple[str, ...] = ("domain", *CROSS_CUTTING_CONCERNS)
"""Every value a perspective's ``concern`` may take."""

_KEY = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_CUSTOM_TABLE = "design.custom_perspectives"


def _check_key(key: str) -> str:
    if not _KEY.match(key):
        raise ValueError(f"key {key!r} must be lower-case letters and digits joined by dashes, e.g. 'data-integrity'")
    return key


def _check_concern(concern: str) -> str:
    if concern not in CONCERNS:
        raise ValueError(f"concern {concern!r} must be one of: {', '.join(CONCERNS)}")
    return concern


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


class Perspective(BaseModel):
    """A viewpoint a debater argues from ("optimise for maintainability"), not a persona."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Display name, e.g. ``Operational Simplicity``."""
    key: str
    """Stable identifier, lower-case with dashes, e.g. ``operational-simplicity``; agent ids derive from it."""
    focus: str
    """One sentence: what this perspective optimises for."""
    prompt: str
    """The instructions a debater with this perspective is given."""
    when_to_use: str = ""
    """When the moderator should pick it."""
    priorities: list[str] = Field(default_factory=list)
    trade_offs: str = ""
    """What it will give up for its priorities."""
    keywords: list[str] = Field(default_factory=list)
    """Words in a question that make this perspective relevant (the moderator's heuristic)."""
    always: bool = False
    """Takes part in every debate (the Contrarian and the Moonshot)."""
    concern: str = "domain"
    """``domain`` or a cross-cutting concern (``observability``, ``operations``, ``test``, ``security``): these speak last."""
    source: Literal["catalog", "custom"] = "catalog"

    @field_validator("key")
    @classmethod
    def _valid_key(cls, value: str) -> str:
        return _check_key(value)

    @field_validator("concern")
    @classmethod
    def _valid_concern(cls, value: str) -> str:
        return _check_concern(value)

    @field_validator("keywords")
    @classmethod
    def _lower_case_keywords(cls, value: list[str]) -> list[str]:
        bad = [word for word in value if not word.strip() or word != word.lower()]
        if bad:
            raise ValueError(f"keywords must be non-empty lower-case words or stems, got {bad}")
        return value

    @property
    def cross_cutting(self) -> bool:
        """Speaks for a cross-cutting concern (and so speaks last)."""
        return self.concern in CROSS_CUTTING_CONCERNS


_STOP_WORDS = frozenset({"first", "with", "from", "that", "this", "more", "less", "over", "than", "into", "very"})


class CustomPerspective(BaseModel):
    """A perspective defined in ``[[design.custom_perspectives]]``: only ``name`` is required.

    An entry whose key matches a catalog perspective overrides it: the fields
    the entry sets replace the catalog's, the rest are kept. A new entry
    derives what it leaves out from its name and priorities.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1)
    """Display name, e.g. ``Compliance First``."""
    key: str | None = None
    """Lower-case with dashes; defaults to the name in that form (``compliance-first``). A catalog key overrides that entry."""
    focus: str | None = None
    """One sentence: what it optimises for; defaults to "Optimise for <priorities>."."""
    prompt: str | None = None
    """Instructions for its debater; defaults to a prompt built from the name, priorities and trade-offs."""
    when_to_use: str = ""
    """When the moderator should pick it."""
    priorities: list[str] = Field(default_factory=list)
    """What it ranks first, e.g. ``["audit trails", "data residency"]``."""
    trade_offs: str = ""
    """What it will give up for its priorities."""
    keywords: list[str] | None = None
    """Words that make it relevant to a question; defaults to the words of its name and priorities."""
    always: bool = False
    """Take part in every debate, like the Contrarian and the Moonshot."""
    concern: str = "domain"
    """``domain``, or the cross-cutting concern it speaks for (observability, operations, test, security)."""

    @field_validator("name")
    @classmethod
    def _name_has_a_word(cls, value: str) -> str:
        if not _slug(value):
            raise ValueError(f"name {value!r} needs at least one letter or digit")
        return value.strip()

    @field_validator("key")
    @classmethod
    def _valid_key(cls, value: str | None) -> str | None:
        return None if value is None else _check_key(value)

    @field_validator("concern")
    @classmethod
    def _valid_concern(cls, value: str) -> str:
        return _check_concern(value)

    @property
    def resolved_key(self) -> str:
        """``key``, or the name in lower-case-dashes form."""
        return self.key or _slug(self.name)

    def to_perspective(self, base: Perspective | None = None) -> Perspective:
        """This entry as a ``Perspective`` (``source="custom"``), overriding ``base`` when given.

        Raises:
            pydantic.ValidationError: the merged entry is not a valid perspective.
        """
        if base is not None:
            values: dict[str, Any] = base.model_dump()
            values.update(
                {name: getattr(self, name) for name in self.model_fields_set if getattr(self, name) is not None}
            )
        else:
            values = {
                "name": self.name,
                "focus": self.focus or self._default_focus(),
                "prompt": self.prompt or self._default_prompt(),
                "when_to_use": self.when_to_use,
                "priorities": list(self.priorities),
                "trade_offs": self.trade_offs,
                "keywords": self.keywords if self.keywords is not None else self._default_keywords(),
                "always": self.always,
                "concern": self.concern,
            }
        values.update(key=self.resolved_key, source="custom")
        values["keywords"] = [word.strip().lower() for word in values["keywords"]]
        return Perspective.model_validate(values)

    def _default_focus(self) -> str:
        if self.priorities:
            return f"Optimise for {', '.join(self.priorities)}."
        return f"Argue from the {self.name} viewpoint."

    def _default_prompt(self) -> str:
        wanted = f": put {', '.join(self.priorities)} first" if self.priorities else ""
        accepted = f" {self.trade_offs.rstrip('.')}, and say so openly." if self.trade_offs else ""
        return (
            f"Argue for the option that best serves {self.name}{wanted}.{accepted} "
            "Question every proposal that neglects these priorities and name the concrete cost of neglecting them."
        )

    def _default_keywords(self) -> list[str]:
        words: list[str] = []
        for word in re.findall(r"[a-z0-9]+", " ".join([self.name, *self.priorities]).lower()):
            stem = word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word
            if len(stem) >= 4 and stem not in _STOP_WORDS and stem not in words:
                words.append(stem)
        return words


# --- The catalog ---------------------------------------------------------------------------------------------------

_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (several times faster), else the pure-Python one."""

_CATALOG_FIELDS = tuple(name for name in Perspective.model_fields if name != "source")
"""Fields every shipped catalog entry must set."""


def _validation_errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'entry'}: {error['msg']}" for error in exc.errors()
    )


def _label(entry: object, index: int) -> str:
    if isinstance(entry, Mapping):
        name = entry.get("key") or entry.get("name")
        if isinstance(name, str) and name:
            return f"#{index} ({name!r})"
    return f"#{index}"


def parse_catalog(text: str, *, source: str = CATALOG_FILE) -> dict[str, Perspective]:
    """Perspectives by key from catalog YAML ``text`` (a top-level ``perspectives:`` list, every field set).

    Raises:
        ConfigError: the YAML is invalid, or an entry is missing a field, has an
            unknown one, holds a bad value or repeats a key; the message names
            the entry and the fix.
    """
    try:
        data = yaml.load(text, Loader=_SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source} is not valid YAML: {exc}", source=source) from exc
    entries = data.get("perspectives") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError(f"{source} must hold a top-level 'perspectives:' list of entries", source=source)
    catalog: dict[str, Perspective] = {}
    for index, entry in enumerate(entries, start=1):
        label = f"{source}: perspective {_label(entry, index)}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{label} must be a mapping of fields, not {type(entry).__name__}", source=source)
        missing = [name for name in _CATALOG_FIELDS if name not in entry]
        if missing:
            raise ConfigError(
                f"{label} is missing {', '.join(missing)}; a catalog entry sets every field: {', '.join(_CATALOG_FIELDS)}",
                source=source,
            )
        unknown = sorted(set(entry) - set(_CATALOG_FIELDS))
        if unknown:
            close = difflib.get_close_matches(unknown[0], _CATALOG_FIELDS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{label} has unknown field(s) {', '.join(unknown)}{hint}; allowed: {', '.join(_CATALOG_FIELDS)}",
                source=source,
            )
        try:
            perspective = Perspective.model_validate({**entry, "source": "catalog"})
        except ValidationError as exc:
            raise ConfigError(f"{label} is invalid: {_validation_errors(exc)}. Fix that field.", source=source) from exc
        if perspective.key in catalog:
            raise ConfigError(f"{label} repeats the key {perspective.key!r}; keys must be unique", source=source)
        catalog[perspective.key] = perspective
    return catalog


@lru_cache(maxsize=1)
def _shipped() -> tuple[Perspective, ...]:
    text = resources.files("debatecode.agents").joinpath(CATALOG_FILE).read_text(encoding="utf-8")
    return tuple(parse_catalog(text, source=f"debatecode/agents/{CATALOG_FILE}").values())


def _custom(entry: object, index: int, catalog: Mapping[str, Perspective]) -> Perspective:
    if isinstance(entry, Perspective):
        return entry.model_copy(update={"source": "custom"}, deep=True)
    label = f"custom perspective {_label(entry, index)} in [[{_CUSTOM_TABLE}]]"
    try:
        spec = entry if isinstance(entry, CustomPerspective) else CustomPerspective.model_validate(entry)
        return spec.to_perspective(catalog.get(spec.resolved_key))
    except ValidationError as exc:
        raise ConfigError(
            f"{label} is invalid: {_validation_errors(exc)}. An entry needs a 'name'; the optional fields are "
            f"{', '.join(name for name in CustomPerspective.model_fields if name != 'name')}; 'key' is lower-case "
            f"words joined by dashes and 'concern' one of {', '.join(CONCERNS)}.",
            key=_CUSTOM_TABLE,
        ) from exc


def load_catalog(
    custom: Sequence[CustomPerspective | Perspective | Mapping[str, Any]] = (),
) -> dict[str, Perspective]:
    """The shipped catalog by key, with ``custom`` entries added or overriding entries with their key.

    The shipped YAML is read once per process; every call returns fresh copies,
    so callers may change what they get. Overrides keep the catalog's place;
    new entries follow the catalog in the given order. ``custom`` entries may
    also be raw mappings (a ``[[design.custom_perspectives]]`` table).

    Raises:
        ConfigError: the shipped catalog is malformed, a custom entry is
            invalid, or two custom entries share a key.
    """
    catalog = {perspective.key: perspective.model_copy(deep=True) for perspective in _shipped()}
    seen: set[str] = set()
    for index, entry in enumerate(custom, start=1):
        perspective = _custom(entry, index, catalog)
        if perspective.key in seen:
            raise ConfigError(
                f"two custom perspectives share the key {perspective.key!r} (entry #{index} is the second); "
                "rename one or give it its own 'key'",
                key=_CUSTOM_TABLE,
            )
        seen.add(perspective.key)
        catalog[perspective.key] = perspective
    return catalog


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


def _resolve(requested: Sequence[str], catalog: Mapping[str, Perspective]) -> list[Perspective]:
    lookup: dict[str, Perspective] = {}
    for perspective in catalog.values():
        lookup.setdefault(perspective.key, perspective)
        lookup.setdefault(perspective.name.strip().lower(), perspective)
        lookup.setdefault(_slug(perspective.name), perspective)
    chosen: list[Perspective] = []
    for item in requested:
        wanted = item.strip().lower()
        match = lookup.get(wanted) or lookup.get(_slug(wanted))
        if match is None:
            close = difflib.get_close_matches(wanted, list(lookup), n=1)
            hint = f" (did you mean {lookup[close[0]].key!r}?)" if close else ""
            if wanted.isdigit():
                hint = (
                    f" (perspectives are named, not counted: to have the moderator pick {wanted}, "
                    f"set design.perspective_count = {wanted} in debatecode.toml)"
                )
            raise ConfigError(
                f"unknown perspective {item!r}{hint}; known perspectives: {', '.join(catalog)}. "
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


def _in_speaking_order(picks: list[Perspective], catalog: Mapping[str, Perspective]) -> list[Perspective]:
    domain = [p for p in picks if not p.cross_cutting and not p.always]
    cross = [p for concern in CROSS_CUTTING_CONCERNS for p in picks if p.concern == concern and not p.always]
    return domain + cross + [p for p in catalog.values() if p.always]


def select_perspectives(
    question: str,
    catalog: Mapping[str, Perspective],
    *,
    count: int | None = None,
    requested: Sequence[str] | None = None,
    constraints: Sequence[str] = (),
) -> Selection:
    """The perspectives to debate ``question`` from, by the heuristic in this module's docstring.

    ``count`` is the number of perspectives besides the always-present ones
    (default: 2 for a binary choice, else 3 or 4 by complexity). ``requested``
    names them instead (keys or names, any case); ``constraints`` adds
    explicit constraints to those found in the question.

    Raises:
        ConfigError: ``count`` is below 1, or a requested perspective is not in ``catalog``.
    """
    text = as_words(" ".join([question, *constraints]))
    found, unmatched = find_constraints(text, constraints)
    options = count_options(question)
    complexity = complexity_of(question, options, len(found) + len(unmatched))
    reasons: dict[str, str] = {}
    if requested:
        picks = [p for p in _resolve(requested, catalog) if not p.always]
        reasons.update({p.key: "requested" for p in picks})
    else:
        if count is None:
            count = 2 if is_binary(question, options) and complexity != "high" else 4 if complexity == "high" else 3
        if count < 1:
            raise ConfigError(f"a debate needs at least 1 perspective besides the always-present ones, not {count}")
        picks = _pick(catalog, text, found, count, reasons)
    chosen = _in_speaking_order(picks, catalog)
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
    candidates = [p for p in catalog.values() if not p.always]
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
    fillers = [catalog[key] for key in FALLBACK if key in catalog and not catalog[key].always]
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
