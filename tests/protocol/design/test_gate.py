"""The design-debate gate reviewer: each flag, each decision, on hand-built rounds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debatecode.protocol.design.gate import (
    GateDecision,
    GateThresholds,
    decide,
    fundamental_disagreement,
    overlap,
    review_round,
    round_overlap,
    tally_poll,
)
from debatecode.protocol.design.records import GateFlag, GateFlagKind, PollResult, Position, RoundRecord
from debatecode.protocol.satisfaction import SatisfactionTracker

T = GateThresholds()
NATO = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo", "lima"]
COLOURS = ["red", "orange", "yellow", "green", "blue", "indigo", "violet"]
QUESTION = "Should we store user sessions in Redis or in PostgreSQL?"
CONTEXT = "Sessions expire after thirty minutes; the team already runs PostgreSQL in production."


def say(
    perspective: str,
    round_no: int,
    text: str,
    *,
    kind: str = "argument",
    satisfaction: int | None = None,
    stance: str = "",
) -> Position:
    return Position.model_validate(
        {
            "perspective": perspective,
            "agent": f"{perspective}-agent",
            "round": round_no,
            "kind": kind,
            "text": text,
            "satisfaction": satisfaction,
            "stance": stance,
        }
    )


def rnd(round_no: int, *speeches: Position, poll: PollResult | None = None) -> RoundRecord:
    return RoundRecord(
        round=round_no,
        arguments=[s for s in speeches if s.kind == "argument"],
        rebuttals=[s for s in speeches if s.kind == "rebuttal"],
        poll=poll,
    )


def of_kind(flags: list[GateFlag], kind: GateFlagKind) -> list[GateFlag]:
    return [flag for flag in flags if flag.kind == kind]


def review(rounds: list[RoundRecord], tracker: SatisfactionTracker | None = None) -> list[GateFlag]:
    return review_round(rounds, question=QUESTION, context=CONTEXT, thresholds=T, tracker=tracker)


def scored(round_no: int, scores: dict[str, int]) -> RoundRecord:
    """A round in which each perspective says something new and gives its score."""
    return rnd(
        round_no,
        *(
            say(
                key, round_no, f"Redis sessions, {key}: " + " ".join(f"{w}{round_no}" for w in NATO), satisfaction=score
            )
            for key, score in scores.items()
        ),
    )


# -- overlap -------------------------------------------------------------------------------------------------------


def test_overlap_is_the_share_of_current_trigrams_found_in_previous() -> None:
    previous = " ".join(NATO[:10])
    assert overlap(" ".join(NATO[:9] + COLOURS[:3]), previous) == pytest.approx(0.7)
    assert overlap(" ".join(NATO[:7] + COLOURS[:5]), previous) == pytest.approx(0.5)


def test_overlap_ignores_case_and_punctuation_and_is_zero_for_empty_text() -> None:
    assert overlap("Use Redis, for sessions!", "use redis for sessions") == 1.0
    assert overlap("", "anything at all") == 0.0
    assert overlap("...", "anything at all") == 0.0


def test_overlap_of_short_text_compares_words() -> None:
    assert overlap("use redis", "we use postgres") == 0.5


@given(st.text(), st.text())
def test_overlap_is_a_share(current: str, previous: str) -> None:
    assert 0.0 <= overlap(current, previous) <= 1.0


@given(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC", min_size=1, max_size=8), min_size=3, max_size=40))
def test_overlap_of_a_text_with_itself_is_one(words: list[str]) -> None:
    text = " ".join(words)
    assert overlap(text, text) == 1.0


def test_round_overlap_averages_over_perspectives_that_spoke_twice() -> None:
    previous = rnd(1, say("ops", 1, " ".join(NATO[:10])), say("sec", 1, " ".join(COLOURS)))
    current = rnd(
        2,
        say("ops", 2, " ".join(NATO[:5]), kind="argument"),
        say("ops", 2, " ".join(NATO[5:10]), kind="rebuttal"),
        say("sec", 2, "something else entirely different here"),
        say("new", 2, " ".join(NATO[:10])),
    )
    value, per = round_overlap(current, previous)
    assert set(per) == {"ops", "sec"}
    assert per["sec"] == 0.0
    assert per["ops"] > 0.9  # its argument and rebuttal joined repeat last round's speech
    assert value == pytest.approx((per["ops"] + per["sec"]) / 2)


# -- repetition and circular -----------------------------------------------------------------------------------------


def test_repetition_flagged_above_sixty_percent() -> None:
    rounds = [rnd(1, say("ops", 1, " ".join(NATO[:10]))), rnd(2, say("ops", 2, " ".join(NATO[:9] + COLOURS[:3])))]
    [flag] = of_kind(review(rounds), "repetition")
    assert flag.value == pytest.approx(0.7)
    assert flag.agents == ["ops"]
    assert flag.round == 2


@pytest.mark.parametrize("kept", [7, 8], ids=["50%", "exactly 60%"])
def test_repetition_not_flagged_at_or_below_sixty_percent(kept: int) -> None:
    current = " ".join(NATO[:kept] + COLOURS[: 12 - kept])
    rounds = [rnd(1, say("ops", 1, " ".join(NATO[:10]))), rnd(2, say("ops", 2, current))]
    assert of_kind(review(rounds), "repetition") == []


def test_two_repetition_rounds_in_a_row_are_circular_and_force_synthesis() -> None:
    same = " ".join(NATO)
    rounds = [rnd(n, say("ops", n, same), say("sec", n, QUESTION + " " + same)) for n in (1, 2, 3)]

    second = review(rounds[:2])
    assert of_kind(second, "repetition") and not of_kind(second, "circular")

    third = review(rounds)
    [circular] = of_kind(third, "circular")
    assert circular.round == 3
    assert circular.agents == ["ops", "sec"]

    decision = decide([[], second, third], round_no=3, min_rounds=2, max_rounds=10, disagreement=False)
    assert decision.action == "synthesize"
    assert decision.reason.startswith("circular")
    assert "dissents recorded" in decision.reason


def test_repetition_after_a_fresh_round_is_not_circular() -> None:
    rounds = [
        rnd(1, say("ops", 1, " ".join(NATO))),
        rnd(2, say("ops", 2, " ".join(COLOURS))),
        rnd(3, say("ops", 3, " ".join(COLOURS))),
    ]
    flags = review(rounds)
    assert of_kind(flags, "repetition")
    assert of_kind(flags, "circular") == []


def test_circular_with_fundamental_disagreement_escalates() -> None:
    circular = GateFlag(kind="circular", round=3, detail="arguments repeated for 2 rounds in a row (rounds 2-3)")
    decision = decide([[circular]], round_no=3, min_rounds=2, max_rounds=10, disagreement=True)
    assert decision.action == "escalate"
    assert decision.reason.startswith("circular")


# -- stalemate and consensus -----------------------------------------------------------------------------------------


def test_stalemate_after_three_flat_rounds_escalates() -> None:
    rounds = [scored(1, {"a": 50, "b": 50}), scored(2, {"a": 52, "b": 51}), scored(3, {"a": 53, "b": 52})]
    assert of_kind(review(rounds[:2]), "stalemate") == []  # fewer rounds than the window

    flags = review(rounds)
    [stalemate] = of_kind(flags, "stalemate")
    assert stalemate.value == pytest.approx(2.5)
    assert stalemate.agents == ["a", "b"]

    decision = decide([flags], round_no=3, min_rounds=2, max_rounds=10, disagreement=False)
    assert decision == GateDecision("escalate", "stalemate: average satisfaction rose 2.5 over 3 rounds")


def test_rising_satisfaction_is_no_stalemate() -> None:
    rounds = [scored(1, {"a": 50, "b": 50}), scored(2, {"a": 55, "b": 54}), scored(3, {"a": 60, "b": 58})]
    assert of_kind(review(rounds), "stalemate") == []


def test_given_tracker_history_is_used_and_left_unchanged() -> None:
    tracker = SatisfactionTracker(window=3)
    tracker.record(1, {"a": 50, "b": 50, "c": 50})
    tracker.record(2, {"a": 51, "b": 51, "c": 51})
    rounds = [scored(2, {"a": 51, "b": 51}), scored(3, {"a": 52, "b": 52})]
    flags = review(rounds, tracker=tracker)
    # c's carried-over 51 comes from the tracker alone; with only these two rounds there would be no window.
    assert of_kind(flags, "stalemate")[0].agents == ["a", "b", "c"]
    assert len(tracker.history) == 2


def test_converged_when_everyone_reaches_the_target() -> None:
    flags = review([scored(1, {"a": 90, "b": 95})])
    [converged] = of_kind(flags, "converged")
    assert converged.value == 90
    decision = decide([flags], round_no=2, min_rounds=2, max_rounds=10, disagreement=False)
    assert decision.action == "synthesize"
    assert decision.reason.startswith("consensus")


def test_not_converged_when_one_perspective_is_below_the_target() -> None:
    assert of_kind(review([scored(1, {"a": 89, "b": 95})]), "converged") == []


# -- polls -------------------------------------------------------------------------------------------------------------


def test_two_of_three_yes_passes_the_poll() -> None:
    poll = tally_poll(2, "ops", {"ops": True, "sec": True, "dba": False}, T)
    assert poll.passed
    assert poll.share == pytest.approx(2 / 3)
    assert (poll.round, poll.called_by) == (2, "ops")


def test_one_of_three_yes_fails_the_poll() -> None:
    poll = tally_poll(2, "ops", {"ops": True, "sec": False, "dba": False}, T)
    assert not poll.passed
    assert poll.share == pytest.approx(1 / 3)


def test_a_poll_nobody_answered_fails() -> None:
    assert not tally_poll(2, "ops", {}, T).passed


def test_passed_poll_is_flagged_and_synthesizes() -> None:
    poll = tally_poll(2, "ops", {"ops": True, "sec": True, "dba": False}, T)
    flags = review([scored(1, {"ops": 70}), rnd(2, say("ops", 2, "Redis fits sessions."), poll=poll)])
    [flag] = of_kind(flags, "poll")
    assert flag.agents == ["ops", "sec"]
    decision = decide([[], flags], round_no=2, min_rounds=2, max_rounds=10, disagreement=False)
    assert decision.action == "synthesize"
    assert decision.reason.startswith("convergence poll: 2/3 yes")


def test_failed_poll_is_not_flagged() -> None:
    poll = tally_poll(2, "ops", {"ops": True, "sec": False, "dba": False}, T)
    assert of_kind(review([rnd(2, say("ops", 2, "Redis fits sessions."), poll=poll)]), "poll") == []


# -- off topic and scope creep -----------------------------------------------------------------------------------------

ON_TOPIC = [
    say("cache", 1, "Redis keeps sessions in memory, so session lookups stay fast and expiry is built in with a TTL."),
    say(
        "dba",
        1,
        "PostgreSQL already runs in production; storing sessions there avoids a new service and eases backups.",
    ),
]


def test_off_topic_speech_is_flagged_and_on_topic_ones_are_not() -> None:
    tangent = say("moonshot", 1, "The quarterly marketing offsite needs catering, a downtown venue and bus tickets.")
    flags = review([rnd(1, *ON_TOPIC, tangent)])
    [flag] = of_kind(flags, "off_topic")
    assert flag.agents == ["moonshot"]
    assert flag.value == 0.0


def test_scope_creep_phrase_with_new_vocabulary_is_flagged() -> None:
    creep = say(
        "moonshot",
        1,
        "Redis suits sessions. While we're at it, we should also build a billing dashboard with invoice exports.",
    )
    [flag] = of_kind(review([rnd(1, *ON_TOPIC, creep)]), "scope_creep")
    assert flag.agents == ["moonshot"]
    assert "billing dashboard" in flag.detail


@pytest.mark.parametrize(
    "text",
    [
        "We should also consider the migration cost of moving sessions to Redis.",
        "While we're at it, measure the migration cost of moving sessions to Redis.",
        "Billing dashboards and invoice exports are out of scope.",
    ],
    ids=["no trigger", "trigger with on-topic words", "keeping the scope"],
)
def test_on_topic_proposals_are_not_scope_creep(text: str) -> None:
    question = "Should we move user sessions to Redis, and what is the migration cost?"
    flags = review_round([rnd(1, say("ops", 1, text))], question=question, thresholds=T)
    assert of_kind(flags, "scope_creep") == []


# -- decisions and disagreement ----------------------------------------------------------------------------------------


def test_min_rounds_are_respected_even_when_converged() -> None:
    converged = GateFlag(kind="converged", round=1, detail="every perspective at or above 90 (lowest 92)")
    decision = decide([[converged]], round_no=1, min_rounds=2, max_rounds=10, disagreement=False)
    assert decision.action == "continue"


def test_max_rounds_without_consensus_escalates() -> None:
    decision = decide([[], []], round_no=10, min_rounds=2, max_rounds=10, disagreement=False)
    assert decision == GateDecision("escalate", "max rounds (10) without consensus")


def test_no_flags_before_max_rounds_continue() -> None:
    assert decide([[]], round_no=4, min_rounds=2, max_rounds=10, disagreement=False).action == "continue"


def test_fundamental_disagreement_needs_two_unhappy_perspectives_with_different_stances() -> None:
    split = rnd(
        3,
        say("scale", 3, "We must split now.", satisfaction=40, stance="Split into microservices now"),
        say("simple", 3, "Stay as we are.", satisfaction=35, stance="Keep the modular monolith"),
        say("ops", 3, "Either works.", satisfaction=80, stance="Keep the modular monolith for a year"),
    )
    assert fundamental_disagreement(split, 90)


def test_same_stance_or_one_unhappy_perspective_is_no_fundamental_disagreement() -> None:
    same = rnd(
        3,
        say("a", 3, "x", satisfaction=40, stance="Use Redis for sessions"),
        say("b", 3, "y", satisfaction=40, stance="Use Redis for sessions now"),
    )
    lonely = rnd(
        3,
        say("a", 3, "x", satisfaction=40, stance="Split into microservices now"),
        say("b", 3, "y", satisfaction=75, stance="Keep the modular monolith"),
    )
    assert not fundamental_disagreement(same, 90)
    assert not fundamental_disagreement(lonely, 90)


def test_thresholds_reject_impossible_values() -> None:
    with pytest.raises(ValueError, match="repetition"):
        GateThresholds(repetition=1.5)
    with pytest.raises(ValueError, match="progress_window"):
        GateThresholds(progress_window=1)
