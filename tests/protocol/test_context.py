"""Context management: satisfaction and stalemate, the context window, token allowance, reply quality."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debatecode.errors import DebatecodeError
from debatecode.llm.types import estimate_tokens
from debatecode.protocol.allowance import RoundBudgetExceeded, TokenAllowance
from debatecode.protocol.reply_quality import is_rubber_stamp
from debatecode.protocol.satisfaction import SatisfactionTracker
from debatecode.protocol.transcript import ContextWindow, TranscriptEntry

# -- satisfaction ------------------------------------------------------------------------------


def test_consensus_needs_every_agent_at_target() -> None:
    tracker = SatisfactionTracker(target=90)
    assert not tracker.consensus()
    tracker.record(1, {"a": 95, "b": 89})
    assert not tracker.consensus()
    assert tracker.blocking() == ["b"]
    tracker.record(2, {"b": 90})
    assert tracker.consensus()
    assert tracker.blocking() == []


def test_scores_carry_over_for_agents_that_did_not_score() -> None:
    tracker = SatisfactionTracker()
    tracker.record(1, {"a": 40, "b": 60})
    tracker.record(2, {"a": 70})
    assert tracker.latest == {"a": 70, "b": 60}
    assert [r.scores for r in tracker.history] == [{"a": 40, "b": 60}, {"a": 70, "b": 60}]
    assert tracker.history[1].average == 65.0


def test_progressing_is_true_until_a_full_window_is_recorded() -> None:
    tracker = SatisfactionTracker(min_progress=5, window=3)
    assert tracker.is_progressing()
    tracker.record(1, {"a": 50})
    tracker.record(2, {"a": 50})
    assert tracker.is_progressing()


@pytest.mark.parametrize(
    ("averages", "progressing"),
    [
        ([50, 52, 55], True),  # +5 over the window: enough
        ([50, 60, 54], False),  # +4: not enough, whatever happened in between
        ([60, 50, 40], False),
        ([10, 20, 30, 31, 33], False),  # only the last 3 rounds count: +3
        ([10, 20, 30, 31, 36], True),
    ],
)
def test_progress_is_last_minus_first_average_of_the_window(averages: list[int], progressing: bool) -> None:
    tracker = SatisfactionTracker(min_progress=5, window=3)
    for round_no, value in enumerate(averages, start=1):
        tracker.record(round_no, {"a": value, "b": value})
    assert tracker.is_progressing() is progressing


def test_stalemate_only_after_round_3() -> None:
    tracker = SatisfactionTracker()
    for round_no in (1, 2, 3):
        tracker.record(round_no, {"a": 50})
    assert not tracker.is_progressing()
    assert not tracker.stalemate(3)
    tracker.record(4, {"a": 50})
    assert tracker.stalemate(4)


def test_window_and_min_progress_are_configurable() -> None:
    tracker = SatisfactionTracker(min_progress=1, window=2)
    tracker.record(1, {"a": 50})
    tracker.record(2, {"a": 51})
    assert tracker.is_progressing()
    tracker.record(3, {"a": 51})
    assert not tracker.is_progressing()


def test_tracker_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="target"):
        SatisfactionTracker(target=101)
    with pytest.raises(ValueError, match="min_progress"):
        SatisfactionTracker(min_progress=-1)
    with pytest.raises(ValueError, match="window"):
        SatisfactionTracker(window=1)
    tracker = SatisfactionTracker()
    with pytest.raises(ValueError, match="0-100"):
        tracker.record(1, {"a": 120})
    tracker.record(2, {"a": 10})
    with pytest.raises(ValueError, match="not after round 2"):
        tracker.record(2, {"a": 20})


@given(st.lists(st.dictionaries(st.sampled_from("abcd"), st.integers(0, 100), min_size=1), min_size=1, max_size=8))
def test_consensus_matches_its_definition(rounds: list[dict[str, int]]) -> None:
    tracker = SatisfactionTracker(target=80)
    merged: dict[str, int] = {}
    for round_no, scores in enumerate(rounds, start=1):
        tracker.record(round_no, scores)
        merged.update(scores)
    assert tracker.consensus() is all(score >= 80 for score in merged.values())


# -- the context window ------------------------------------------------------------------------


def _round(n: int, *, low: str = "b") -> list[tuple[str, str, str, int | None]]:
    return [
        ("a", "generator", f"Round {n} plan from a. It uses a heap. More detail follows.", 60 + n),
        (
            low,
            "security",
            f"## Proposal\nRound {n} concern from {low}. Input is unchecked.\n\n"
            f"## Blocking Concerns\n1. eval on user input (r{n})\n2. no size limit\n\n## Suggested Changes\nValidate.",
            40 + n,
        ),
    ]


def _window(n_rounds: int, **kwargs: object) -> ContextWindow:
    return ContextWindow([_round(n) for n in range(1, n_rounds + 1)], **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("round_no", [1, 2, 3])
def test_rounds_1_to_3_see_everything_verbatim(round_no: int) -> None:
    view = _window(10).build(round_no)
    assert [r.round_no for r in view.verbatim_rounds] == list(range(1, round_no))
    assert view.summary_text == ""
    assert view.summarized_rounds == ()


@pytest.mark.parametrize("round_no", [4, 5, 6, 7])
def test_rounds_4_to_7_keep_two_verbatim_and_summarise_the_rest(round_no: int) -> None:
    view = _window(10).build(round_no)
    assert [r.round_no for r in view.verbatim_rounds] == [round_no - 2, round_no - 1]
    assert view.summarized_rounds == tuple(range(1, round_no - 2))
    assert view.summary_text.startswith("Early rounds summary:")
    assert "- Round 1 (scores: a=61, b=41):" in view.summary_text
    assert "  - a (generator): Round 1 plan from a." in view.summary_text
    assert "  - b (security): Round 1 concern from b." in view.summary_text
    assert "It uses a heap" not in view.summary_text  # only the first sentence
    assert f"Round {round_no - 2} plan" not in view.summary_text


@pytest.mark.parametrize("round_no", [8, 9, 11])
def test_rounds_8_on_keep_one_verbatim_plus_trajectory_and_blocking_concerns(round_no: int) -> None:
    view = _window(10).build(round_no)
    last = min(round_no - 1, 10)
    assert [r.round_no for r in view.verbatim_rounds] == [last]
    assert view.summarized_rounds == tuple(range(1, last))
    assert "- Round 1: average 51.0 (a=61, b=41)" in view.summary_text
    assert "Blocking concerns (agents below 90):" in view.summary_text
    assert f"- b (security, {40 + last} in round {last}): eval on user input (r{last}); no size limit" in (
        view.summary_text
    )
    assert f"- a (generator, {60 + last} in round {last}): Round {last} plan from a." in view.summary_text


def test_trajectory_says_when_nobody_is_blocking() -> None:
    rounds = [[("a", "generator", f"Fine {n}.", 95)] for n in range(1, 9)]
    view = ContextWindow(rounds).build(9)
    assert "No blocking concerns" in view.summary_text


def test_summary_is_deterministic_and_respects_limits() -> None:
    window = _window(7, entry_chars=15, summary_chars=120)
    first, second = window.build(7), window.build(7)
    assert first == second
    assert len(first.summary_text) <= 120
    assert first.summary_text.endswith("…")
    assert "  - a (generator): Round 1 plan f…" in first.summary_text


def test_more_sentences_can_be_kept() -> None:
    view = _window(5, sentences=2).build(5)
    assert "Round 1 plan from a. It uses a heap." in view.summary_text


def test_code_blocks_are_skipped_in_summaries() -> None:
    rounds = [[("a", "generator", "```python\nx = 1\n```\nUses a dict. Then more.", 50)]] * 4
    view = ContextWindow(rounds).build(5)
    assert "  - a (generator): Uses a dict." in view.summary_text


def test_pluggable_summarizer_receives_the_summarised_rounds() -> None:
    seen: list[str] = []

    def summarizer(text: str) -> str:
        seen.append(text)
        return "SUMMARY"

    view = _window(5, summarizer=summarizer).build(6)
    assert view.summary_text == "SUMMARY"
    assert len(seen) == 1
    assert "### Round 1" in seen[0] and "### Round 3" in seen[0]
    assert "### Round 4" not in seen[0]


def test_token_limit_moves_older_verbatim_rounds_into_the_summary() -> None:
    window = _window(3, token_limit=60)
    view = window.build(3)
    assert [r.round_no for r in view.verbatim_rounds] == [2]
    assert view.summarized_rounds == (1,)
    tiny = _window(3, token_limit=1).build(3)
    assert len(tiny.verbatim_rounds) == 1  # at least one round stays verbatim


def test_render_has_recent_history_and_summary_sections() -> None:
    text = _window(6).build(6).render()
    assert text.index("## Recent History") < text.index("## Earlier Rounds Summary")
    assert "#### a (generator) (satisfaction 65)" in text
    assert _window(1).build(1).render() == ""


def test_add_round_numbers_rounds_and_accepts_plain_tuples() -> None:
    window = ContextWindow()
    window.add_round([("a", "judge", "text", None)])
    assert window.rounds[0].round_no == 1
    assert window.rounds[0].entries == (TranscriptEntry("a", "judge", "text", None),)


def test_context_window_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ContextWindow(entry_chars=0)
    with pytest.raises(ValueError, match="numbered from 1"):
        ContextWindow().build(0)


@given(st.integers(min_value=1, max_value=15), st.integers(min_value=0, max_value=14))
def test_every_earlier_round_is_verbatim_or_summarised_exactly_once(round_no: int, stored: int) -> None:
    view = _window(stored).build(round_no)
    shown = [r.round_no for r in view.verbatim_rounds] + list(view.summarized_rounds)
    assert sorted(shown) == list(range(1, min(round_no - 1, stored) + 1))
    assert len(shown) == len(set(shown))


# -- token allowance ---------------------------------------------------------------------------


def test_estimate_tokens_is_characters_over_four_rounded_up() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


def test_allowance_charges_per_agent_and_round() -> None:
    allowance = TokenAllowance(per_round=100)
    allowance.charge("a", 1, 60)
    assert allowance.remaining("a", 1) == 40
    assert allowance.remaining("b", 1) == 100
    assert allowance.remaining("a", 2) == 100
    allowance.charge("a", 1, 40)
    assert allowance.remaining("a", 1) == 0


def test_going_over_the_allowance_raises_with_context_and_still_records() -> None:
    allowance = TokenAllowance(per_round=100)
    allowance.charge("a", 3, 90)
    with pytest.raises(RoundBudgetExceeded, match="a spent 110 tokens in round 3") as caught:
        allowance.charge("a", 3, 20)
    assert (caught.value.agent, caught.value.round_no, caught.value.spent, caught.value.allowance) == ("a", 3, 110, 100)
    assert allowance.spent("a", 3) == 110
    assert allowance.remaining("a", 3) == 0
    assert not isinstance(caught.value, DebatecodeError)


def test_unlimited_allowance_never_raises() -> None:
    allowance = TokenAllowance(per_round=None)
    allowance.charge("a", 1, 10**9)
    assert allowance.remaining("a", 1) is None


def test_allowance_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="per_round"):
        TokenAllowance(per_round=0)
    with pytest.raises(ValueError, match="negative"):
        TokenAllowance(per_round=10).charge("a", 1, -1)


# -- rubber stamps -----------------------------------------------------------------------------

RUBBER_STAMPS = [
    "",
    "LGTM",
    "lgtm 👍",
    "+1, ship it!",
    "Looks good to me!",
    "Looks good, so approve.",
    "Approved.",
    "I agree with the proposal.",
    "No issues found. Great work!",
    "Perfect, no changes needed.",
    "Handles empty input correctly.",
    "Looks great! Really nice work on this one, I love the clean style and the naming, very readable and elegant overall, good job team!",
    "## Proposal\nLooks good\n## Satisfaction Score\n95\n## Rationale\nLGTM",
    "Satisfaction score: 95\n\nAll good.",
]

REASONED = [
    "LGTM because the tests pass.",
    "This fails for n=0 since range(0) is empty.",
    "Looks good, but the empty list case returns None instead of [].",
    "The implementation handles negative inputs and empty lists correctly, and the tests cover overflow for large values.",
    "Risk: recursion depth exceeds the limit on inputs above 1000.",
    "However, the sort is not stable, so ties come out in the wrong order.",
    "Edge case: duplicate keys overwrite each other silently.",
    "```python\ndef add(a, b):\n    return a + b\n```",
    "LGTM\n```python\ndef add(a, b):\n    return a + b\n```",
    "## Rationale\nScores are computed wrongly because the loop skips the last element.",
]


@pytest.mark.parametrize("text", RUBBER_STAMPS)
def test_rubber_stamps_are_detected(text: str) -> None:
    assert is_rubber_stamp(text) is True


@pytest.mark.parametrize("text", REASONED)
def test_replies_with_reasoning_are_not_rubber_stamps(text: str) -> None:
    assert is_rubber_stamp(text) is False


def test_an_empty_code_block_does_not_count_as_code() -> None:
    assert is_rubber_stamp("LGTM\n```\n```") is True
