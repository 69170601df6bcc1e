"""The gate reviewer of a design debate: flags after every round and the decision they lead to.

``review_round`` reads the rounds so far and flags the newest one:

- ``repetition``: the round repeats the previous one (word 3-gram overlap above
  the threshold, 60% by default);
- ``circular``: repetition ``circular_after`` rounds in a row (2 by default);
- ``stalemate``: the average satisfaction gained less than ``min_progress`` over
  the last ``progress_window`` rounds;
- ``converged``: every perspective is at or above the target satisfaction;
- ``poll``: a convergence poll passed (at least two thirds said yes);
- ``off_topic``: a speech is not about the question: it shares almost no
  vocabulary with the question, the context and the rest of the debate, and
  (when an embedder is available) its meaning is far from them too
  (``relevance.py``);
- ``muted``: a perspective whose last ``mute_after`` speeches (2 by default)
  were all off topic; it says nothing more in this debate
  (``muted_perspectives``);
- ``scope_creep``: a speech proposes extra work with vocabulary the question
  and context never use.

``decide`` turns the flags into continue, synthesize or escalate. Everything
here is deterministic: text statistics, and at most a sentence embedding for
a speech whose words alone cannot tell; nothing calls a language model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from debatecode.protocol.design.records import GateFlag, PollResult, Position, RoundRecord
from debatecode.protocol.design.relevance import DebateRelevance, SpeechRelevance, strip_format
from debatecode.protocol.design.words import split_words, strip_suffix
from debatecode.protocol.satisfaction import SatisfactionTracker
from debatecode.voting import Ballot, get_method

__all__ = [
    "GateDecision",
    "GateThresholds",
    "decide",
    "fundamental_disagreement",
    "muted_perspectives",
    "overlap",
    "review_round",
    "round_overlap",
    "tally_poll",
]

_STOP_TEXT = """
    a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers him his how i if in into is it its itself just lets let me more most my no nor not now of off on once only
    or other our ours out over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up us very was we were what when where which while who whom why will
    with would you your yours yes think agree disagree point still really well
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that say nothing about a topic (function words and debate filler)."""

_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")

_MIN_CONTENT_WORDS = 5
"""Speeches with fewer distinct content words are too short to judge as off topic."""

_SAME_STANCE = 0.6
"""Two stance lines whose content-word Jaccard similarity reaches this count as the same stance."""

_CREEP_TRIGGERS: tuple[tuple[str, ...], ...] = tuple(
    tuple(phrase.split())
    for phrase in (
        # Apostrophes are removed before matching: "we're" → "were", "let's" → "lets".
        "while were at it",
        "while we are at it",
        "we should also build",
        "we should also add",
        "we could also build",
        "we could also add",
        "lets also add",
        "lets also build",
        "additionally lets add",
        "additionally lets build",
        "another feature",
        "out of scope but",
        "outside the scope but",
    )
)
"""Word sequences with which a debater proposes work beyond the question."""

_CREEP_MIN_NEW_WORDS = 2
_CREEP_MIN_NEW_SHARE = 0.5


@dataclass(frozen=True)
class GateThresholds:
    """The numbers the gate reviewer judges by (the engine fills them from its design settings).

    Raises:
        ValueError: from the constructor, when a value is outside its range.
    """

    target: int = 90
    """Satisfaction (0-100) every perspective must reach for consensus."""
    repetition: float = 0.6
    """Round overlap above which a round repeats the previous one."""
    min_progress: float = 5
    """Average satisfaction gain below which the debate is stuck."""
    progress_window: int = 3
    """Rounds over which ``min_progress`` is measured."""
    poll_share: float = 2 / 3
    """Yes share with which a convergence poll passes."""
    off_topic: float = 0.1
    """Share of a speech's vocabulary found elsewhere in the debate below which it is off topic, when no
    embedder judges (see ``relevance.py``)."""
    mute_after: int = 2
    """Off-topic speeches in a row after which a perspective is muted for the rest of the debate."""
    circular_after: int = 2
    """Repetition rounds in a row that make the debate circular."""

    def __post_init__(self) -> None:
        if not 0 <= self.target <= 100:
            raise ValueError(f"target must be between 0 and 100, got {self.target}")
        for name in ("repetition", "poll_share", "off_topic"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")
        if self.min_progress < 0:
            raise ValueError(f"min_progress must not be negative, got {self.min_progress}")
        if self.progress_window < 2:
            raise ValueError(f"progress_window must be at least 2 rounds, got {self.progress_window}")
        if self.mute_after < 1:
            raise ValueError(f"mute_after must be at least 1 speech, got {self.mute_after}")
        if self.circular_after < 1:
            raise ValueError(f"circular_after must be at least 1 round, got {self.circular_after}")


@dataclass(frozen=True)
class GateDecision:
    """What the debate does after a round, and why (the reason starts with a stable word the ADR shows)."""

    action: Literal["continue", "synthesize", "escalate"]
    reason: str


# -- text statistics ---------------------------------------------------------------------------------------------


def _stem(word: str) -> str:
    """A crude stem: one common suffix off, then a final "e" ("caching", "caches", "cache" → "cach")."""
    word = strip_suffix(word, _SUFFIXES)
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _content(words: Iterable[str]) -> set[str]:
    """Stems of the words that are not stop words (nor bare numbers)."""
    return {_stem(w) for w in words if w not in _STOP_WORDS and not w.isdigit()}


def _shingles(words: Sequence[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def overlap(current: str, previous: str) -> float:
    """The share of ``current`` that ``previous`` already said, from 0.0 to 1.0.

    Both texts are lower-cased and stripped of punctuation; stop words are kept
    (they carry the phrasing). The share is the number of distinct word
    3-grams (shingles) of ``current`` that also occur in ``previous``, divided
    by the number of distinct 3-grams of ``current``. A ``current`` of fewer
    than 3 words is compared word by word instead. An empty ``current`` gives
    0.0. Not symmetric: a short text fully quoted inside a long one has
    overlap 1.0 with it, the long one a small overlap with the short one.
    """
    words = split_words(current)
    if not words:
        return 0.0
    size = 3 if len(words) >= 3 else 1
    mine = _shingles(words, size)
    return len(mine & _shingles(split_words(previous), size)) / len(mine)


def _speeches(round_: RoundRecord) -> list[Position]:
    return [*round_.arguments, *round_.rebuttals]


def _texts_by_perspective(round_: RoundRecord) -> dict[str, str]:
    texts: dict[str, list[str]] = {}
    for speech in _speeches(round_):
        texts.setdefault(speech.perspective, []).append(speech.text)
    return {key: "\n".join(parts) for key, parts in texts.items()}


def round_overlap(round: RoundRecord, previous: RoundRecord) -> tuple[float, dict[str, float]]:
    """How much of ``round`` repeats ``previous``: the mean and each perspective's ``overlap``.

    A perspective's speeches of a round (arguments and rebuttals) are joined
    and compared with its speeches of the previous round. Only perspectives
    that spoke in both rounds count; with none the result is ``(0.0, {})``.
    """
    now, before = _texts_by_perspective(round), _texts_by_perspective(previous)
    per = {key: overlap(text, before[key]) for key, text in now.items() if key in before}
    return (sum(per.values()) / len(per) if per else 0.0), per


# -- polls and disagreement --------------------------------------------------------------------------------------


def tally_poll(round_no: int, called_by: str, votes: Mapping[str, bool], thresholds: GateThresholds) -> PollResult:
    """Count a convergence poll with the plurality method over ``["yes", "no"]``.

    It passes when the yes share is at least ``thresholds.poll_share`` (2 of 3
    passes the default two thirds). A poll nobody answered fails.
    """
    ballots = [Ballot(voter=voter, ranking=["yes" if yes else "no"]) for voter, yes in votes.items()]
    tallies = get_method("plurality").tally(["yes", "no"], ballots).tallies
    counted = tallies["yes"] + tallies["no"]
    share = tallies["yes"] / counted if counted else 0.0
    # The tolerance keeps 2/3 == 2/3 (and 4/6) passing despite float rounding.
    passed = counted > 0 and share + 1e-9 >= thresholds.poll_share
    return PollResult(round=round_no, called_by=called_by, votes=dict(votes), share=share, passed=passed)


def _stance(speeches: Sequence[Position]) -> str:
    """The latest stated stance, or the first sentence of the latest speech when none was stated."""
    for speech in reversed(speeches):
        if speech.stance.strip():
            return speech.stance
    text = speeches[-1].text.strip() if speeches else ""
    return re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0]


def _stances_differ(first: str, second: str) -> bool:
    a, b = _content(split_words(first)), _content(split_words(second))
    if not a or not b:
        return False
    return len(a & b) / len(a | b) < _SAME_STANCE


def fundamental_disagreement(round: RoundRecord, target: int) -> bool:
    """At least two perspectives are far from satisfied (below ``target - 30``) and hold different stances.

    A perspective's stance is its latest ``stance`` line in the round (the
    first sentence of its latest speech when it stated none). Two stances
    differ when the Jaccard similarity of their content words (stop words
    removed, crudely stemmed) is below 0.6: "Split into microservices now" and
    "Keep the modular monolith" share nothing, "Use Redis for sessions" and
    "Use Redis for sessions now" are the same stance. Lexical only: two
    paraphrases of one stance can look different, which is why both sides
    must also be unhappy before the debate counts as fundamentally split.
    """
    unhappy = [key for key, score in round.scores().items() if score < target - 30]
    stances = {key: _stance([s for s in _speeches(round) if s.perspective == key]) for key in unhappy}
    return any(_stances_differ(stances[a], stances[b]) for a, b in combinations(unhappy, 2))


# -- review ------------------------------------------------------------------------------------------------------


def _repeated(round_: RoundRecord, previous: RoundRecord, thresholds: GateThresholds) -> GateFlag | None:
    value, per = round_overlap(round_, previous)
    if value <= thresholds.repetition:
        return None
    above = sorted(key for key, share in per.items() if share > thresholds.repetition)
    detail = ", ".join(f"{key} {per[key]:.0%}" for key in sorted(per))
    return GateFlag(
        kind="repetition",
        round=round_.round,
        detail=f"round {round_.round} repeats round {previous.round}: {value:.0%} overlap ({detail})",
        agents=above,
        value=value,
    )


def _circular(rounds: Sequence[RoundRecord], current: GateFlag, thresholds: GateThresholds) -> GateFlag | None:
    needed = thresholds.circular_after
    if len(rounds) < needed + 1:
        return None
    # Earlier rounds are re-measured, not read from their stored flags, so the answer depends on the text alone.
    for back in range(2, needed + 1):
        if _repeated(rounds[-back], rounds[-back - 1], thresholds) is None:
            return None
    first = rounds[-needed].round
    return GateFlag(
        kind="circular",
        round=current.round,
        detail=f"arguments repeated for {needed} rounds in a row (rounds {first}-{current.round})",
        agents=current.agents,
        value=current.value,
    )


def _tracker(
    rounds: Sequence[RoundRecord], thresholds: GateThresholds, given: SatisfactionTracker | None
) -> SatisfactionTracker:
    tracker = SatisfactionTracker(thresholds.target, thresholds.min_progress, thresholds.progress_window)
    last = -1
    for past in given.history if given is not None else []:
        tracker.record(past.round_no, past.scores)
        last = past.round_no
    for round_ in rounds:
        if round_.round > last:
            tracker.record(round_.round, round_.scores())
    return tracker


def _progress_flags(round_no: int, tracker: SatisfactionTracker, thresholds: GateThresholds) -> list[GateFlag]:
    latest = tracker.latest
    if tracker.consensus():
        lowest = min(latest.values())
        return [
            GateFlag(
                kind="converged",
                round=round_no,
                detail=f"every perspective at or above {thresholds.target} (lowest {lowest})",
                agents=sorted(latest),
                value=float(lowest),
            )
        ]
    history = tracker.history
    if len(history) < thresholds.progress_window or tracker.is_progressing():
        return []
    recent = history[-thresholds.progress_window :]
    gain = recent[-1].average - recent[0].average
    return [
        GateFlag(
            kind="stalemate",
            round=round_no,
            detail=f"average satisfaction rose {gain:.1f} over {thresholds.progress_window} rounds",
            agents=tracker.blocking(),
            value=gain,
        )
    ]


def _poll_flag(round_: RoundRecord) -> list[GateFlag]:
    poll = round_.poll
    if poll is None or not poll.passed:
        return []
    yes = sorted(key for key, vote in poll.votes.items() if vote)
    return [
        GateFlag(
            kind="poll",
            round=round_.round,
            detail=f"{len(yes)}/{len(poll.votes)} yes (called by {poll.called_by})",
            agents=yes,
            value=poll.share,
        )
    ]


def _off_topic_flags(
    rounds: Sequence[RoundRecord],
    framing: str,
    thresholds: GateThresholds,
    relevance: DebateRelevance | None,
) -> list[GateFlag]:
    """Speeches of the newest round that are not about the debate (see ``relevance.py``).

    The references are the question, the context and every speech of the
    debate by the other perspectives (a debater cannot vouch for its own
    tangent), all without the reply format and the debaters' names. Speeches
    with fewer than 5 distinct content words are not judged.
    """
    names = relevance.names if relevance is not None else ()
    judge = relevance.judge if relevance is not None else SpeechRelevance()
    framing_words = _content(split_words(framing))
    said: dict[str, list[str]] = {}
    for round_ in rounds:
        for speech in _speeches(round_):
            said.setdefault(speech.perspective, []).append(strip_format(speech.text, names))
    vocabularies = {key: _content(split_words(" ".join(texts))) for key, texts in said.items()}
    flags = []
    for speech in _speeches(rounds[-1]):
        text = strip_format(speech.text, names)
        vocabulary = _content(split_words(text))
        if len(vocabulary) < _MIN_CONTENT_WORDS:
            continue
        others = [text for key, texts in said.items() if key != speech.perspective for text in texts]
        reference = framing_words.union(*(words for key, words in vocabularies.items() if key != speech.perspective))
        share = len(vocabulary & reference) / len(vocabulary)
        verdict = judge.judge(text, framing, others, share)
        off = share < thresholds.off_topic if verdict.measure == "words" else verdict.off_topic
        if off:
            measure = (
                "of its vocabulary with the debate" if verdict.measure == "words" else f"similarity ({verdict.measure})"
            )
            flags.append(
                GateFlag(
                    kind="off_topic",
                    round=speech.round,
                    detail=f"{speech.perspective}'s {speech.kind} is off topic: {verdict.value:.0%} {measure}",
                    agents=[speech.perspective],
                    value=round(verdict.value, 4),
                    speech=speech.kind,
                )
            )
    return flags


def _spoken(rounds: Sequence[RoundRecord], key: str) -> list[tuple[int, str]]:
    """(round, kind) of every speech ``key`` made in ``rounds``, in order."""
    return [(s.round, s.kind) for r in rounds for s in _speeches(r) if s.perspective == key]


def _muted_flags(
    rounds: Sequence[RoundRecord], newest: Sequence[GateFlag], thresholds: GateThresholds
) -> list[GateFlag]:
    """``muted`` for every perspective whose last ``mute_after`` speeches were all flagged off topic.

    Flags of earlier rounds are read from their records, the newest round's from ``newest``. A perspective
    is muted once; none is muted when that would leave fewer than two debaters speaking.
    """
    already = muted_perspectives(rounds[:-1])
    off = {
        (flag.round, flag.speech, agent)
        for flag in [*(f for r in rounds[:-1] for f in r.flags), *newest]
        if flag.kind == "off_topic"
        for agent in flag.agents
    }
    speaking = {s.perspective for s in _speeches(rounds[-1])} - set(already)
    flags: list[GateFlag] = []
    for key in sorted(speaking):
        recent = _spoken(rounds, key)[-thresholds.mute_after :]
        if len(recent) < thresholds.mute_after or not all((r, kind, key) in off for r, kind in recent):
            continue
        if len(speaking) - len(flags) - 1 < 2:
            break
        where = ", ".join(f"round {r} {kind}" for r, kind in recent)
        flags.append(
            GateFlag(
                kind="muted",
                round=rounds[-1].round,
                detail=f"{key} went off topic {len(recent)} times in a row ({where}); muted for the rest of the debate",
                agents=[key],
                value=float(len(recent)),
            )
        )
    return flags


def muted_perspectives(rounds: Sequence[RoundRecord]) -> dict[str, int]:
    """Perspectives muted for going off topic, and the round after which they were muted."""
    return {agent: flag.round for r in rounds for flag in r.flags if flag.kind == "muted" for agent in flag.agents}


def _find(words: Sequence[str], phrase: Sequence[str]) -> int:
    """Index just after the first occurrence of ``phrase`` in ``words``, or -1."""
    for i in range(len(words) - len(phrase) + 1):
        if tuple(words[i : i + len(phrase)]) == tuple(phrase):
            return i + len(phrase)
    return -1


def _scope_creep_flags(round_: RoundRecord, framing: set[str]) -> list[GateFlag]:
    """Speeches proposing work the question and context never mention.

    Heuristic, deliberately conservative: a sentence must contain a trigger
    phrase ("while we're at it", "we should also build", "additionally, let's
    add", "another feature", "out of scope, but" ...; a bare "X is out of
    scope" is a debater keeping the scope and does not count), and the content
    words after the trigger must be mostly new: at least 2 of them, and at
    least half, absent from the question and context. "While we're at it,
    measure the migration cost" in a debate about a migration is not flagged.
    """
    flags = []
    for speech in _speeches(round_):
        for sentence in re.split(r"[.!?;\n]+", speech.text):
            words = split_words(sentence)
            ends = [_find(words, trigger) for trigger in _CREEP_TRIGGERS]
            hits = [end for end in ends if end >= 0]
            if not hits:
                continue
            proposed = _content(words[min(hits) :])
            new = sorted(proposed - framing)
            share = len(new) / len(proposed) if proposed else 0.0
            if len(new) >= _CREEP_MIN_NEW_WORDS and share >= _CREEP_MIN_NEW_SHARE:
                flags.append(
                    GateFlag(
                        kind="scope_creep",
                        round=speech.round,
                        detail=f"{speech.perspective} proposes work outside the question: {sentence.strip()!r}",
                        agents=[speech.perspective],
                        value=share,
                    )
                )
                break
    return flags


def review_round(
    rounds: Sequence[RoundRecord],
    *,
    question: str,
    context: str = "",
    thresholds: GateThresholds,
    tracker: SatisfactionTracker | None = None,
    relevance: DebateRelevance | None = None,
) -> list[GateFlag]:
    """The gate reviewer's flags for the last round in ``rounds`` (oldest first; empty gives no flags).

    ``relevance`` judges off-topic speeches (``relevance.relevance_for(names, memory)``: the config's embedder and
    the debaters' names); without it, word overlap alone judges, names left in.

    ``tracker`` is the engine's satisfaction tracker, if it keeps one: its
    history is taken as is and the rounds after its last recorded round are
    added to a copy (the given tracker is not changed). Without it, the scores
    come from ``rounds`` alone. Progress is measured with ``thresholds``, not
    with the tracker's own settings. A converged round is not also flagged as
    a stalemate.

    Raises:
        ValueError: round numbers in ``rounds`` (or after the tracker's history) do not increase,
            or a satisfaction score is outside 0-100.
    """
    if not rounds:
        return []
    current = rounds[-1]
    flags: list[GateFlag] = []
    if len(rounds) >= 2:
        repetition = _repeated(current, rounds[-2], thresholds)
        if repetition is not None:
            flags.append(repetition)
            circular = _circular(rounds, repetition, thresholds)
            if circular is not None:
                flags.append(circular)
    flags += _progress_flags(current.round, _tracker(rounds, thresholds, tracker), thresholds)
    flags += _poll_flag(current)
    framing = _content(split_words(f"{question}\n{context}"))
    off_topic = _off_topic_flags(rounds, f"{question}\n{context}", thresholds, relevance)
    flags += off_topic
    flags += _muted_flags(rounds, off_topic, thresholds)
    flags += _scope_creep_flags(current, framing)
    return flags


# -- decision ----------------------------------------------------------------------------------------------------


def decide(
    flags_by_round: Sequence[Sequence[GateFlag]],
    *,
    round_no: int,
    min_rounds: int,
    max_rounds: int,
    disagreement: bool,
) -> GateDecision:
    """Continue, synthesize or escalate after round ``round_no``, from the newest round's flags.

    In order: before ``min_rounds`` always continue; consensus or a passed
    convergence poll synthesizes; a circular debate synthesizes with its
    dissents recorded, or escalates when ``disagreement`` (see
    ``fundamental_disagreement``); a stalemate escalates; reaching
    ``max_rounds`` escalates; otherwise continue. Reasons start with
    ``consensus``, ``convergence poll``, ``circular``, ``stalemate`` or
    ``max rounds``.
    """
    if round_no < min_rounds:
        return GateDecision("continue", f"min rounds ({min_rounds}) not reached")
    latest = {flag.kind: flag for flag in (flags_by_round[-1] if flags_by_round else [])}
    if "converged" in latest:
        return GateDecision("synthesize", f"consensus: {latest['converged'].detail}")
    if "poll" in latest:
        return GateDecision("synthesize", f"convergence poll: {latest['poll'].detail}")
    if "circular" in latest:
        detail = latest["circular"].detail
        if disagreement:
            return GateDecision("escalate", f"circular: {detail}; fundamental disagreement, escalated to a human")
        return GateDecision("synthesize", f"circular: {detail}; forced synthesis with dissents recorded")
    if "stalemate" in latest:
        return GateDecision("escalate", f"stalemate: {latest['stalemate'].detail}")
    if round_no >= max_rounds:
        return GateDecision("escalate", f"max rounds ({max_rounds}) without consensus")
    return GateDecision("continue", "no stop condition")
