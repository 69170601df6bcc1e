"""Issue 33: the specialists in every debate, the council, the always-present switches and vague questions."""

from __future__ import annotations

import pytest

from debatecode.agents._question import vagueness
from debatecode.agents.perspectives import CustomPerspective, load_catalog, select_perspectives, specialists
from debatecode.errors import ConfigError

SPECIALISTS = ["observability", "operations", "test", "security"]
COUNCIL = ["architect", "designer", "engineer", "researcher"]

UNRELATED = [
    "How should we deploy, monitor and roll back the payments service?",
    "Should we use Redis or PostgreSQL for caching?",
    "Which font should the marketing site use for headings?",
    "Should the team adopt trunk-based development?",
    "What is the best way to handle login and password reset for our mobile app users?",
    "Tell me about lunch.",
    "Should we price the product per seat or per usage?",
]


@pytest.mark.parametrize("question", UNRELATED)
def test_every_debate_includes_the_four_specialists_in_their_fixed_order(question: str) -> None:
    selection = select_perspectives(question, load_catalog())
    at = [selection.keys.index(key) for key in SPECIALISTS]
    assert at == sorted(at) and at == list(range(at[0], at[0] + 4)), selection.keys
    assert selection.keys[-2:] == ["contrarian", "moonshot"]
    for key in SPECIALISTS:
        assert selection.reasons[key].startswith(("always takes part", "requested")), selection.reasons[key]


def test_the_deploy_monitor_roll_back_question_of_the_issue_gets_operations_and_observability() -> None:
    selection = select_perspectives(UNRELATED[0], load_catalog())
    assert {"operations", "observability"} <= set(selection.keys)
    assert "keywords" in selection.reasons["operations"], "its own keywords are shown beside 'always takes part'"


@pytest.mark.parametrize(
    "requested", [["simplicity"], ["cost", "Performance"], ["security"], ["Data Integrity", "test"]]
)
def test_a_named_list_still_gets_the_four_specialists(requested: list[str]) -> None:
    selection = select_perspectives("Should we use Redis?", load_catalog(), requested=requested)
    assert [k for k in selection.keys if k in SPECIALISTS] == SPECIALISTS
    assert len(selection.keys) == len(set(selection.keys)), "a named specialist is not listed twice"


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_a_count_sets_the_domain_perspectives_beside_the_specialists(count: int) -> None:
    catalog = load_catalog()
    selection = select_perspectives("How should we structure the plugin system?", catalog, count=count)
    domain = [k for k in selection.keys if k not in SPECIALISTS and not catalog[k].always]
    assert len(domain) == count
    assert len(selection.keys) == count + 4 + 2


def test_a_custom_entry_replacing_a_specialist_is_the_one_that_takes_part() -> None:
    catalog = load_catalog([CustomPerspective(name="Security", key="security", trade_offs="Never trades safety.")])
    [security] = [p for p in specialists(catalog) if p.key == "security"]
    assert security.source == "custom" and security.trade_offs == "Never trades safety."


@pytest.mark.parametrize(
    ("off", "left"),
    [
        ((), ["contrarian", "moonshot"]),
        (("contrarian",), ["moonshot"]),
        (("moonshot",), ["contrarian"]),
        (("contrarian", "moonshot"), []),
    ],
)
def test_the_contrarian_and_moonshot_are_left_out_only_when_switched_off(off: tuple[str, ...], left: list[str]) -> None:
    selection = select_perspectives("Should we use Redis?", load_catalog(), switched_off=off)
    assert [k for k in selection.keys if k in ("contrarian", "moonshot")] == left
    requested = select_perspectives("Q?", load_catalog(), requested=["contrarian", "cost"], switched_off=off)
    assert [k for k in requested.keys if k in ("contrarian", "moonshot")] == left, "the setting wins over a name"


@pytest.mark.parametrize("key", ["contrarian", "moonshot"])
def test_a_custom_override_cannot_switch_off_an_always_present_perspective(key: str) -> None:
    with pytest.raises(ConfigError, match=f"design.{key} = false"):
        load_catalog([{"name": key.title(), "always": False}])


def test_the_council_debates_with_its_four_members_then_the_specialists() -> None:
    selection = select_perspectives("Should we use Redis or PostgreSQL for caching?", load_catalog(), council=COUNCIL)
    assert selection.keys == [*COUNCIL, *SPECIALISTS, "contrarian", "moonshot"]
    assert selection.reasons["architect"] == "council member (design.council)"


def test_council_members_are_never_picked_by_keywords() -> None:
    catalog = load_catalog()
    assert {key for key, p in catalog.items() if p.council} == set(COUNCIL)
    for question in [*UNRELATED, "How should we architect the research and design of the engineering platform?"]:
        assert not set(select_perspectives(question, catalog).keys) & set(COUNCIL), question


def test_a_council_with_named_perspectives_is_refused() -> None:
    with pytest.raises(ConfigError, match="drop --council"):
        select_perspectives("Q?", load_catalog(), requested=["cost"], council=COUNCIL)
    with pytest.raises(ConfigError, match=r"unknown council member 'archtect'.*did you mean 'architect'"):
        select_perspectives("Q?", load_catalog(), council=["archtect"])


@pytest.mark.parametrize(
    ("question", "vague"),
    [
        ("How do we make it better?", True),
        ("Should we do this?", True),
        ("What should we do?", True),
        ("Tell me about lunch.", True),
        ("Should we rewrite it?", True),
        ("Should we use Redis or PostgreSQL for caching?", False),
        ("Should a small team store session events in SQLite or PostgreSQL?", False),
        ("How should we deploy, monitor and roll back the payments service?", False),
        ("Should we adopt microservices?", False),
        ("Kafka vs RabbitMQ for events?", False),
    ],
)
def test_vagueness(question: str, vague: bool) -> None:
    assert bool(vagueness(question)) is vague, vagueness(question)


def test_a_reference_is_vague_only_without_context_files() -> None:
    assert any("refers to 'this'" in reason for reason in vagueness("Should we adopt this for the billing service?"))
    assert vagueness("Should we adopt this for the billing service?", has_context=True) == []
