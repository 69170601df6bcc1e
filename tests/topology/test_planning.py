"""CPDE / DPDE selection: override, agent count, difficulty, text heuristic."""

from __future__ import annotations

import pytest

from debatecode.topology import PlanningStyle, select_planning_style

SHORT = "Return the sum of two integers."
MULTI_PART = """Build a small inventory service.

1. Parse the CSV input into records.
2. Keep an in-memory cache of stock levels.
3. Expose an API class with add, remove and query methods.
4. Then report the totals per warehouse.
"""


@pytest.mark.parametrize(("override", "style"), [("cpde", PlanningStyle.CPDE), ("DPDE", PlanningStyle.DPDE)])
def test_override_wins_over_everything(override: str, style: PlanningStyle) -> None:
    chosen, reason = select_planning_style(MULTI_PART if style is PlanningStyle.DPDE else SHORT, 1, "complex", override)
    assert chosen is style
    assert reason.startswith("override")


@pytest.mark.parametrize("override", [None, "auto", "AUTO"])
def test_auto_means_the_heuristic(override: str | None) -> None:
    assert select_planning_style(MULTI_PART, 4, None, override)[0] is PlanningStyle.CPDE
    assert select_planning_style(SHORT, 4, None, override)[0] is PlanningStyle.DPDE


def test_unknown_override_lists_styles() -> None:
    with pytest.raises(ValueError, match="known styles: auto, cpde, dpde"):
        select_planning_style(SHORT, 3, None, "anarchy")


def test_needs_at_least_one_agent() -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        select_planning_style(SHORT, 0, None, None)


def test_too_few_agents_means_dpde_even_for_complex_tasks() -> None:
    style, reason = select_planning_style(MULTI_PART, 2, "complex", None)
    assert style is PlanningStyle.DPDE
    assert "too few" in reason


@pytest.mark.parametrize(
    ("difficulty", "style"),
    [
        ("complex", PlanningStyle.CPDE),
        ("Hard", PlanningStyle.CPDE),
        ("trivial", PlanningStyle.DPDE),
        ("simple", PlanningStyle.DPDE),
        ("easy", PlanningStyle.DPDE),
    ],
)
def test_declared_difficulty_decides(difficulty: str, style: PlanningStyle) -> None:
    text = SHORT if style is PlanningStyle.CPDE else MULTI_PART
    chosen, reason = select_planning_style(text, 4, difficulty, None)
    assert chosen is style
    assert difficulty.lower() in reason


def test_multi_part_task_with_complex_vocabulary_is_cpde() -> None:
    style, reason = select_planning_style(MULTI_PART, 3, "medium", None)
    assert style is PlanningStyle.CPDE
    assert "multi-part" in reason
    assert "complex vocabulary" in reason


def test_long_task_with_many_agents_is_cpde() -> None:
    long_text = " ".join(["word"] * 300)
    style, reason = select_planning_style(long_text, 6, None, None)
    assert style is PlanningStyle.CPDE
    assert "long (300 words)" in reason
    assert "many agents" in reason


def test_one_signal_alone_stays_dpde() -> None:
    long_text = " ".join(["word"] * 300)
    style, reason = select_planning_style(long_text, 3, None, None)
    assert style is PlanningStyle.DPDE
    assert "only long" in reason


def test_code_blocks_do_not_count_towards_length_or_vocabulary() -> None:
    code = "```python\n" + "\n".join(f"class C{i}: api = 'async database cache'" for i in range(200)) + "\n```"
    style, _ = select_planning_style(SHORT + "\n\n" + code, 4, None, None)
    assert style is PlanningStyle.DPDE


def test_planning_style_values_are_config_names() -> None:
    assert [style.value for style in PlanningStyle] == ["cpde", "dpde"]
