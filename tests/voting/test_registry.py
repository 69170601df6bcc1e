"""Methods by name and the automatic choice by number of agents."""

from __future__ import annotations

import pytest

from debatecode.voting import Borda, Condorcet, Plurality, Unanimous, Weighted, choose_method, get_method, method_names


def test_method_names_lists_all_five() -> None:
    assert method_names() == ["borda", "condorcet", "plurality", "unanimous", "weighted"]


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("plurality", Plurality),
        ("Borda", Borda),
        (" condorcet ", Condorcet),
        ("UNANIMOUS", Unanimous),
        ("weighted", Weighted),
    ],
)
def test_get_method_finds_each_name_case_insensitively(name: str, cls: type) -> None:
    assert isinstance(get_method(name), cls)


def test_get_method_unknown_name_lists_known_names() -> None:
    with pytest.raises(ValueError, match="borda, condorcet, plurality, unanimous, weighted"):
        get_method("approval")


@pytest.mark.parametrize(
    ("n_agents", "cls"),
    [(1, Unanimous), (2, Unanimous), (3, Weighted), (4, Weighted), (5, Weighted), (6, Borda), (16, Borda)],
)
def test_choose_method_by_agent_count(n_agents: int, cls: type) -> None:
    assert isinstance(choose_method(n_agents), cls)
    assert isinstance(choose_method(n_agents, "auto"), cls)


def test_choose_method_override_wins_over_agent_count() -> None:
    assert isinstance(choose_method(2, "condorcet"), Condorcet)
    assert isinstance(choose_method(10, "Plurality"), Plurality)


def test_choose_method_unknown_override_lists_known_names() -> None:
    with pytest.raises(ValueError, match="known methods: borda"):
        choose_method(4, "dictator")


def test_choose_method_needs_an_agent() -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        choose_method(0)
