"""The perspective catalog: ``Perspective``, ``CustomPerspective``, and reading and merging the catalog.

The catalog ships as ``perspectives.yaml`` next to this module; users add or
override entries with ``[[design.custom_perspectives]]`` (``CustomPerspective``),
and ``load_catalog`` merges the two. The public names are re-exported by
``debatecode.agents.perspectives``.
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

from debatecode.errors import ConfigError

__all__ = [
    "ALWAYS_PRESENT",
    "CATALOG_FILE",
    "CONCERNS",
    "CROSS_CUTTING_CONCERNS",
    "CustomPerspective",
    "Perspective",
    "load_catalog",
    "parse_catalog",
    "slug",
]

CATALOG_FILE = "perspectives.yaml"
"""The shipped catalog, a resource of ``debatecode.agents``."""

CROSS_CUTTING_CONCERNS: tuple[str, ...] = ("observability", "operations", "test", "security")
"""Cross-cutting concerns, in the order they speak at the end of a round."""

CONCERNS: tuple[str, ...] = ("domain", *CROSS_CUTTING_CONCERNS)
"""Every value a perspective's ``concern`` may take."""

ALWAYS_PRESENT: tuple[str, ...] = ("contrarian", "moonshot")
"""The always-present perspectives; each is switched off only by its ``design.<key> = false`` setting."""

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


def slug(name: str) -> str:
    """``name`` in lower-case-dashes form: ``Compliance First`` → ``compliance-first``."""
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
    council: bool = False
    """A member of the design council (``design.council``, seed 002); the moderator's keyword heuristic never picks it."""
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
    council: bool = False
    """A council member (``design.council``): the moderator's keyword heuristic never picks it; naming it does."""

    @field_validator("name")
    @classmethod
    def _name_has_a_word(cls, value: str) -> str:
        if not slug(value):
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
        return self.key or slug(self.name)

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
                "council": self.council,
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
        perspective = spec.to_perspective(catalog.get(spec.resolved_key))
    except ValidationError as exc:
        raise ConfigError(
            f"{label} is invalid: {_validation_errors(exc)}. An entry needs a 'name'; the optional fields are "
            f"{', '.join(name for name in CustomPerspective.model_fields if name != 'name')}; 'key' is lower-case "
            f"words joined by dashes and 'concern' one of {', '.join(CONCERNS)}.",
            key=_CUSTOM_TABLE,
        ) from exc
    if perspective.key in ALWAYS_PRESENT and not perspective.always:
        raise ConfigError(
            f"{label} sets always = false for the {perspective.name}, which takes part in every debate; "
            f"switch it off with design.{perspective.key} = false instead",
            key=_CUSTOM_TABLE,
        )
    return perspective


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
