"""Reading design-debate replies as small models write them: labels bold or plain, lines missing."""

from __future__ import annotations

from debatecode.protocol.design.replies import parse_analysis, parse_poll_answer, parse_review_answer, parse_speech

NAMES = {"simplicity": "Simplicity", "data-integrity": "Data Integrity", "contrarian": "Contrarian"}


def test_a_well_formed_speech_is_read_field_by_field() -> None:
    text = (
        "**Stance:** Use SQLite now.\nChallenge: I disagree with Data Integrity because the write load is small.\n"
        "Risk: lock contention at peak.\nSatisfaction: 72\nReady for synthesis: no\nReasons:\n- one file\n- no server"
    )
    speech = parse_speech(text, NAMES, own="simplicity")
    assert speech.stance == "Use SQLite now."
    assert speech.challenges == ["data-integrity"] and speech.challenge_line
    assert speech.risks == ["lock contention at peak."]
    assert (speech.satisfaction, speech.ready) == (72, False)
    assert speech.reasons == ["one file", "no server"]


def test_a_challenge_line_naming_nobody_still_counts_as_a_challenge_line() -> None:
    speech = parse_speech("Stance: SQLite.\nChallenge: - PostgreSQL is slower to operate.", NAMES, own="simplicity")
    assert speech.challenges == [] and speech.challenge_line


def test_the_speaker_never_challenges_itself_and_a_reply_without_labels_keeps_its_first_sentence() -> None:
    speech = parse_speech("I agree with Simplicity. It all looks fine to me.", NAMES, own="simplicity")
    assert speech.challenges == [] and not speech.challenge_line
    assert speech.stance == "I agree with Simplicity."
    assert speech.satisfaction is None and speech.ready is None


def test_poll_review_and_analysis_answers() -> None:
    assert parse_poll_answer("Yes, the positions have converged.") is True
    assert parse_poll_answer("no - Security is not convinced") is False
    assert parse_poll_answer("Perhaps later.") is None
    assert parse_review_answer("ACCURATE") == (True, "")
    assert parse_review_answer("MISREPRESENTED: I want PostgreSQL from day one.") == (
        False,
        "I want PostgreSQL from day one.",
    )
    decision, constraints = parse_analysis(
        "Decision: choose between SQLite and PostgreSQL\nConstraints:\n- small team\n- ship fast"
    )
    assert decision == "choose between SQLite and PostgreSQL"
    assert constraints == ["small team", "ship fast"]


def test_only_an_answer_that_starts_with_the_verdict_is_a_complaint() -> None:
    assert parse_review_answer("The record is fine; nothing here is misrepresented.") == (True, "")
    assert parse_review_answer("**Misrepresented** - I said PostgreSQL.") == (False, "I said PostgreSQL.")
