"""The perspective catalog, custom perspectives and the moderator's selection heuristic."""

from __future__ import annotations

import re
from importlib import resources

import pytest
import yaml

from debatecode.agents.perspectives import (
    CONCERNS,
    CONSTRAINTS,
    CROSS_CUTTING_CONCERNS,
    OPPOSING_PAIRS,
    CustomPerspective,
    Perspective,
    complexity_rounds,
    load_catalog,
    opposes,
    parse_catalog,
    select_perspectives,
)
from debatecode.errors import ConfigError

REQUIRED = {
    "performance",
    "simplicity",
    "security",
    "future-flexibility",
    "user-experience",
    "operational-simplicity",
    "cost",
    "data-integrity",
    "developer-experience",
    "test",
    "observability",
    "operations",
    "contrarian",
    "moonshot",
}

QUESTIONS = [
    "Should we use Redis or PostgreSQL for caching?",
    "How should we structure the plugin system?",
    "Should we use GraphQL or REST for the public API?",
    "How do we keep this simple and maintainable with less boilerplate for a small team that has to ship fast?",
    "We are a small team with a deadline next month. Should we split the monolith into microservices, keep the "
    "monolith, or adopt a modular monolith, given our GDPR compliance needs and a tight budget?",
    "What is the best way to handle login and password reset for our mobile app users?",
    "Which testing strategy should we adopt for the payments service: unit tests, contract tests or end-to-end tests?",
    "Tell me about lunch.",
]


def _sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])


SPECIALISTS = ["observability", "operations", "test", "security"]
"""The cross-cutting specialists every debate includes, in speaking order."""


def _non_always(keys: list[str], catalog: dict[str, Perspective]) -> list[str]:
    """The domain picks: neither always-present nor one of the specialists every debate has."""
    return [key for key in keys if not catalog[key].always and key not in SPECIALISTS]


# --- The catalog -----------------------------------------------------------------------------------------------------


def test_catalog_holds_the_required_perspectives_and_every_entry_is_complete() -> None:
    catalog = load_catalog()
    assert set(catalog) >= REQUIRED
    for key, perspective in catalog.items():
        assert perspective.key == key and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key)
        assert perspective.name and perspective.when_to_use and perspective.trade_offs and perspective.priorities
        assert _sentences(perspective.focus) == 1, key
        assert 2 <= _sentences(perspective.prompt) <= 4, key
        assert perspective.concern in CONCERNS and perspective.source == "catalog"
        assert perspective.always or perspective.keywords, f"{key} can never be picked without keywords"
        assert all(word == word.lower() and word.strip() for word in perspective.keywords)


def test_the_shipped_yaml_sets_every_field_of_every_entry() -> None:
    text = resources.files("debatecode.agents").joinpath("perspectives.yaml").read_text(encoding="utf-8")
    fields = set(Perspective.model_fields) - {"source"}
    for entry in yaml.safe_load(text)["perspectives"]:
        assert set(entry) == fields, entry.get("key")


def test_concerns_and_always_present_entries() -> None:
    catalog = load_catalog()
    assert {key: catalog[key].concern for key in ("test", "observability", "operations", "security")} == {
        "test": "test",
        "observability": "observability",
        "operations": "operations",
        "security": "security",
    }
    assert {key for key, p in catalog.items() if p.always} == {"contrarian", "moonshot"}
    assert "two versions" in catalog["moonshot"].prompt and "stepping stone" in catalog["moonshot"].prompt
    assert "opposite" in catalog["contrarian"].prompt and "never endorse" in catalog["contrarian"].prompt


def test_every_choosable_perspective_has_an_opposite_and_the_pairs_name_real_keys() -> None:
    catalog = load_catalog()
    assert {key for pair in OPPOSING_PAIRS for key in pair} <= set(catalog)
    for key, perspective in catalog.items():
        if not perspective.always:
            assert any(opposes(key, other) for other in catalog), key
    assert all(weight_key in catalog for c in CONSTRAINTS for weight_key in c.weights)


def test_load_catalog_returns_fresh_copies() -> None:
    first = load_catalog()
    first["performance"].priorities.append("mutated")
    first.pop("cost")
    second = load_catalog()
    assert "mutated" not in second["performance"].priorities and "cost" in second


# --- Custom perspectives ---------------------------------------------------------------------------------------------


def test_a_custom_entry_overrides_only_the_fields_it_sets() -> None:
    shipped = load_catalog()
    catalog = load_catalog([CustomPerspective(name="Performance", trade_offs="Will accept nothing but speed.")])
    performance = catalog["performance"]
    assert performance.source == "custom" and performance.trade_offs == "Will accept nothing but speed."
    assert performance.prompt == shipped["performance"].prompt
    assert list(catalog) == list(shipped), "an override keeps the catalog's place"


def test_a_custom_entry_is_added_with_defaults_from_its_name_and_priorities() -> None:
    catalog = load_catalog(
        [
            {
                "name": "Compliance First",
                "priorities": ["audit trails", "data residency"],
                "trade_offs": "Will accept a slower roadmap for compliance",
            }
        ]
    )
    custom = catalog["compliance-first"]
    assert list(catalog)[-1] == "compliance-first" and custom.source == "custom" and custom.concern == "domain"
    assert custom.focus == "Optimise for audit trails, data residency."
    assert "Compliance First" in custom.prompt and "slower roadmap" in custom.prompt
    assert {"compliance", "audit", "trail", "residency"} <= set(custom.keywords)


def test_a_full_perspective_can_be_given_as_a_custom_entry() -> None:
    mine = Perspective(name="Latency Budget", key="latency-budget", focus="Fast.", prompt="Argue for speed. Ask why.")
    assert load_catalog([mine])["latency-budget"].source == "custom"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"name": "Compliance", "colour": "red"}, "colour"),
        ({"priorities": ["audit"]}, "name"),
        ({"name": "Compliance", "key": "Compliance First"}, "lower-case"),
        ({"name": "Compliance", "concern": "legal"}, "concern"),
        ({"name": "!!!"}, "letter or digit"),
        ("Compliance", "name"),
    ],
)
def test_a_malformed_custom_entry_is_a_config_error_naming_the_entry_and_the_fix(entry: object, expected: str) -> None:
    with pytest.raises(ConfigError, match="custom perspective #1") as info:
        load_catalog([entry])  # type: ignore[list-item]
    assert expected in str(info.value) and "design.custom_perspectives" in str(info.value)


def test_two_custom_entries_with_one_key_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="share the key 'ethics'"):
        load_catalog([CustomPerspective(name="Ethics"), CustomPerspective(name="Ethics!")])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("perspectives: [", "not valid YAML"),
        ("items: []", "top-level 'perspectives:'"),
        ("perspectives:\n  - key: speed\n    name: Speed\n", "perspective #1 ('speed') is missing focus"),
        ("perspectives:\n  - just a string\n", "must be a mapping"),
    ],
)
def test_a_malformed_catalog_is_a_config_error(text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        parse_catalog(text)


def test_a_catalog_entry_with_a_bad_field_names_it() -> None:
    entry = load_catalog()["cost"].model_dump(exclude={"source"})
    with pytest.raises(ConfigError, match=r"unknown field\(s\) keywrds \(did you mean 'keywords'\?\)"):
        parse_catalog(yaml.safe_dump({"perspectives": [{**entry, "keywrds": []}]}))
    with pytest.raises(ConfigError, match="lower-case"):
        parse_catalog(yaml.safe_dump({"perspectives": [{**entry, "keywords": ["Cost"]}]}))
    with pytest.raises(ConfigError, match="repeats the key 'cost'"):
        parse_catalog(yaml.safe_dump({"perspectives": [entry, entry]}))


# --- Selection -------------------------------------------------------------------------------------------------------


def test_keywords_pick_the_perspectives_and_the_domain() -> None:
    selection = select_perspectives("Should we use Redis or PostgreSQL for caching?", load_catalog())
    assert selection.keys == ["operational-simplicity", "performance", *SPECIALISTS, "contrarian", "moonshot"]
    assert selection.domain == "data" and selection.complexity == "low" and selection.constraints == []
    assert "cach" in selection.reasons["performance"] and "redis" in selection.reasons["operational-simplicity"]


def test_stems_match_word_starts_and_short_keywords_only_whole_words() -> None:
    catalog = load_catalog()
    cached = select_perspectives("Is the cached latency acceptable?", catalog, count=1)
    assert cached.keys[0] == "performance"
    assert "keywords latenc, cach" in cached.reasons["performance"]
    screens = load_catalog([CustomPerspective(name="Screens", keywords=["ui"])])
    mini = {key: screens[key] for key in ("screens", "simplicity", "contrarian", "moonshot")}
    assert select_perspectives("Is the UI clear?", mini, count=1).reasons["screens"] == "keywords ui"
    built = select_perspectives("Should the build guide newcomers?", mini, count=1)
    assert built.keys[0] == "simplicity", "'ui' must not match inside 'build' or 'guide'"


def test_implicit_constraints_are_detected_and_weigh_their_perspectives() -> None:
    selection = select_perspectives(
        "We are a small team and must ship fast: how should we build the notification service?", load_catalog()
    )
    assert selection.constraints == ["ship fast", "small team"]
    assert {"simplicity", "operational-simplicity"} <= set(selection.keys)
    assert "constraint 'small team' (+2)" in selection.reasons["simplicity"]


def test_explicit_constraints_are_listed_and_weighed() -> None:
    selection = select_perspectives(
        "How should we store uploaded files?", load_catalog(), constraints=["budget", "must run on-prem"]
    )
    assert selection.constraints == ["budget", "must run on-prem"]
    assert "cost" in selection.keys and "constraint 'budget' (+2)" in selection.reasons["cost"]


def test_an_all_aligned_pick_gets_an_opposing_perspective() -> None:
    catalog = load_catalog()
    aligned = ("simplicity", "operational-simplicity", "delivery-speed")
    assert not any(opposes(a, b) for a in aligned for b in aligned), "the premise: these pull the same way"
    question = "How do we keep this simple with less boilerplate for a small team that has to ship fast?"
    selection = select_perspectives(question, catalog, count=3)
    picks = _non_always(selection.keys, catalog)
    assert any(opposes(a, b) for a in picks for b in picks)
    swapped_in = next(key for key in picks if selection.reasons[key].startswith("balance"))
    assert swapped_in not in aligned and "replaces Delivery Speed" in selection.reasons[swapped_in]


def test_balance_never_swaps_out_the_only_pick_the_newcomer_opposes() -> None:
    full = load_catalog()
    mini = {key: full[key] for key in ("simplicity", "delivery-speed", "performance", "contrarian", "moonshot")}
    selection = select_perspectives("Ship it soon, and keep it simple.", mini, count=2)
    assert selection.keys == ["simplicity", "performance", "contrarian", "moonshot"]
    assert selection.reasons["performance"] == "balance: its trade-offs oppose Simplicity (replaces Delivery Speed)"


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_selection_holds_an_opposing_pair_and_ends_with_contrarian_and_moonshot(question: str) -> None:
    catalog = load_catalog()
    selection = select_perspectives(question, catalog)
    picks = _non_always(selection.keys, catalog)
    assert 2 <= len(picks) <= 4
    assert any(opposes(a, b) for a in picks for b in picks), selection.reasons
    assert selection.keys[-2:] == ["contrarian", "moonshot"]
    assert set(selection.reasons) == set(selection.keys)


@pytest.mark.parametrize(
    "question", ["Should we use GraphQL or REST?", "Should we adopt microservices?", "Kafka vs RabbitMQ for events?"]
)
def test_a_binary_choice_gets_two_perspectives_plus_the_specialists_contrarian_and_moonshot(question: str) -> None:
    selection = select_perspectives(question, load_catalog())
    assert len(selection.keys) == 8 and selection.keys[2:] == [*SPECIALISTS, "contrarian", "moonshot"]


def test_a_multi_faceted_question_gets_more_perspectives() -> None:
    catalog = load_catalog()
    open_question = select_perspectives("How should we structure the plugin system?", catalog)
    assert len(_non_always(open_question.keys, catalog)) == 3
    long_question = select_perspectives(QUESTIONS[4], catalog)
    assert long_question.complexity == "high" and len(_non_always(long_question.keys, catalog)) == 4
    assert long_question.constraints == ["small team", "deadline", "budget", "compliance"]


def test_cross_cutting_picks_follow_domain_picks_in_fixed_order() -> None:
    selection = select_perspectives(
        "Any question", load_catalog(), requested=["security", "Testability", "observability", "Performance"]
    )
    assert selection.keys == ["performance", *SPECIALISTS, "contrarian", "moonshot"]
    assert selection.reasons["test"] == "requested"
    assert selection.reasons["operations"] == "always takes part: the operations specialist joins every debate"
    cross = [p.concern for p in selection.chosen if p.cross_cutting]
    assert cross == [c for c in CROSS_CUTTING_CONCERNS if c in cross]


def test_requested_perspectives_override_the_heuristic_and_accept_custom_ones() -> None:
    catalog = load_catalog([CustomPerspective(name="Compliance First", priorities=["audit trails"])])
    selection = select_perspectives(
        "Should we use Redis or PostgreSQL for caching?",
        catalog,
        requested=["COMPLIANCE FIRST", "user experience", "contrarian"],
    )
    assert selection.keys == ["compliance-first", "user-experience", *SPECIALISTS, "contrarian", "moonshot"]


def test_an_unknown_requested_perspective_lists_the_known_ones_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="did you mean 'security'") as info:
        select_perspectives("Q?", load_catalog(), requested=["securty"])
    assert "known perspectives: performance, simplicity" in str(info.value)


def test_count_overrides_the_default_and_must_be_positive() -> None:
    catalog = load_catalog()
    assert len(_non_always(select_perspectives("Should we use GraphQL or REST?", catalog, count=4).keys, catalog)) == 4
    with pytest.raises(ConfigError, match="at least 1"):
        select_perspectives("Q?", catalog, count=0)


def test_selection_is_deterministic() -> None:
    runs = [select_perspectives(q, load_catalog()).model_dump() for q in QUESTIONS for _ in range(2)]
    assert runs[0::2] == runs[1::2]


@pytest.mark.parametrize(
    ("complexity", "low", "high", "expected"),
    [("low", 2, 10, 2), ("medium", 2, 10, 3), ("high", 2, 10, 4), ("high", 2, 3, 3), ("medium", 3, 3, 3)],
)
def test_complexity_rounds(complexity: str, low: int, high: int, expected: int) -> None:
    assert complexity_rounds(complexity, low, high) == expected  # type: ignore[arg-type]


def test_complexity_rounds_rejects_an_empty_range() -> None:
    with pytest.raises(ValueError, match="min_rounds"):
        complexity_rounds("low", 4, 3)


def test_public_surface_is_pinned() -> None:
    from debatecode.agents import perspectives

    assert sorted(perspectives.__all__) == sorted(
        [
            "ALWAYS_PRESENT",
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
            "specialists",
        ]
    )
    assert all(hasattr(perspectives, name) for name in perspectives.__all__)
