"""Off-topic speeches: judged on what they say, not on the reply format every speech shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from debatecode.memory.embeddings import normalise_rows
from debatecode.protocol.design.gate import GateThresholds, muted_perspectives, review_round
from debatecode.protocol.design.records import Position, RoundRecord
from debatecode.protocol.design.relevance import DebateRelevance, SpeechRelevance, strip_format

QUESTION = "Should we store session events in SQLite or PostgreSQL?"
NAMES = ("Data Integrity", "Simplicity", "Contrarian", "data-integrity", "simplicity", "contrarian")

CROISSANT = (
    "Stance: laminate the dough with cold butter.\n"
    "Reasons:\n- fold the butter block into the dough three times and chill it between folds\n"
    "- proof the shaped croissants until they wobble, then bake them golden at 200 degrees\n"
    "Challenge: Contrarian: your flour has too little protein for a flaky crumb.\n"
    "Satisfaction: 80\nReady for synthesis: no"
)


FOOTBALL = (
    "Stance: play a high press with the wingers tucked in.\n"
    "Reasons:\n- the striker should drop deep to pull their centre-backs out of shape\n"
    "- rotate the goalkeeper for the cup match and rest the captain's knee\n"
    "Challenge: Simplicity: your midfield leaves the flanks open on the counter.\n"
    "Satisfaction: 60\nReady for synthesis: no"
)


def _on_topic(key: str, round_no: int) -> str:
    return (
        f"Stance: keep SQLite in WAL mode for the session events.\n"
        f"Reasons:\n- one writer appends events; PostgreSQL adds a server to run (round {round_no})\n"
        f"- back up the SQLite file nightly and test the restore\n"
        f"Challenge: Contrarian: the write load claim needs numbers.\nSatisfaction: 70\nReady for synthesis: no"
    )


def _speech(key: str, round_no: int, kind: str, text: str) -> Position:
    return Position(perspective=key, agent=key, round=round_no, kind=kind, text=text, satisfaction=70)  # type: ignore[arg-type]


def _round(round_no: int, off: set[str], football: frozenset[str] = frozenset()) -> RoundRecord:
    def text(key: str) -> str:
        return FOOTBALL if key in football else CROISSANT if key in off else _on_topic(key, round_no)

    speeches = {
        kind: [_speech(key, round_no, kind, text(key)) for key in ("data-integrity", "simplicity", "contrarian")]
        for kind in ("argument", "rebuttal")
    }
    return RoundRecord(round=round_no, arguments=speeches["argument"], rebuttals=speeches["rebuttal"])


WORDS_ONLY = DebateRelevance(SpeechRelevance(), NAMES)


def _review(rounds: list[RoundRecord], relevance: DebateRelevance | None = WORDS_ONLY) -> list[RoundRecord]:
    for index in range(len(rounds)):
        rounds[index] = rounds[index].model_copy(
            update={
                "flags": review_round(
                    rounds[: index + 1], question=QUESTION, thresholds=GateThresholds(), relevance=relevance
                )
            }
        )
    return rounds


def test_the_format_and_the_names_are_not_what_a_speech_is_about() -> None:
    stripped = strip_format(CROISSANT, NAMES)
    for shared in ("Stance", "Reasons", "Challenge", "Satisfaction", "Ready", "Contrarian", "80"):
        assert shared not in stripped
    assert "laminate the dough with cold butter" in stripped


def test_a_croissant_recipe_in_a_database_debate_is_flagged_and_the_others_are_not() -> None:
    [round_one] = _review([_round(1, off={"simplicity"})])
    off = [f for f in round_one.flags if f.kind == "off_topic"]
    assert sorted((f.agents[0], f.speech) for f in off) == [("simplicity", "argument"), ("simplicity", "rebuttal")]
    assert all(f.value is not None and f.value < 0.1 for f in off)


def test_two_off_topic_speeches_in_a_row_mute_the_perspective_for_the_rest_of_the_debate() -> None:
    rounds = _review([_round(1, off=set()), _round(2, off={"contrarian"})])
    [muted] = [f for f in rounds[1].flags if f.kind == "muted"]
    assert muted.agents == ["contrarian"] and "round 2 argument, round 2 rebuttal" in muted.detail
    assert muted_perspectives(rounds) == {"contrarian": 2}
    assert muted_perspectives(rounds[:1]) == {}


def test_one_off_topic_speech_is_flagged_but_not_muted() -> None:
    first = _round(1, off=set())
    second = _round(2, off=set())
    second.rebuttals[0] = _speech("data-integrity", 2, "rebuttal", CROISSANT)
    rounds = _review([first, second])
    assert [f.agents for f in rounds[1].flags if f.kind == "off_topic"] == [["data-integrity"]]
    assert muted_perspectives(rounds) == {}


def test_nobody_is_muted_when_that_would_leave_fewer_than_two_debaters() -> None:
    rounds = _review([_round(1, off={"simplicity"}, football=frozenset({"contrarian"}))])
    assert {f.agents[0] for f in rounds[0].flags if f.kind == "off_topic"} == {"simplicity", "contrarian"}
    assert list(muted_perspectives(rounds)) == ["contrarian"], "one muted; the other still speaks with Data Integrity"


class _TopicEmbedder:
    """A fake embedder: texts mentioning a database word point one way, everything else another."""

    name = "fake-topic"
    dim = 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [
            [1.0, 0.1] if any(w in t.lower() for w in ("sqlite", "postgres", "database", "store")) else [0.0, 1.0]
            for t in texts
        ]
        return normalise_rows(np.array(rows, dtype=np.float32))


def test_the_embedder_decides_what_words_alone_cannot_and_loads_only_then() -> None:
    made: list[int] = []

    def factory() -> _TopicEmbedder:
        made.append(1)
        return _TopicEmbedder()

    judge = SpeechRelevance(factory)
    clearly = judge.judge("keep sqlite with wal mode", QUESTION, [], share=0.6)
    assert (clearly.measure, clearly.off_topic) == ("words", False) and not made, "plainly on topic: no embedder"
    paraphrase = judge.judge("a single file database is plenty for this store", QUESTION, [], share=0.05)
    assert (paraphrase.measure, paraphrase.off_topic) == ("fake-topic", False), "few shared words, same subject"
    tangent = judge.judge("bake the croissants golden", QUESTION, [], share=0.05)
    assert tangent.off_topic and tangent.value < 0.2
    assert made == [1], "created once"


@pytest.mark.slow
def test_minilm_tells_the_croissant_recipe_from_a_paraphrase() -> None:
    from debatecode.memory.embeddings import SentenceTransformerEmbedder

    judge = SpeechRelevance(SentenceTransformerEmbedder)
    tangent = judge.judge(strip_format(CROISSANT, NAMES), QUESTION, [], share=0.0)
    assert tangent.measure.startswith("sentence-transformers") or tangent.measure != "words"
    assert tangent.off_topic, tangent
    paraphrase = judge.judge(
        "one embedded file-based store is enough for a single writer appending records", QUESTION, [], share=0.0
    )
    assert not paraphrase.off_topic, paraphrase
