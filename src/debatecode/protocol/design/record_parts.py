"""Parts of the decision record taken from the debate itself, not from the moderator's retelling.

- ``round_summaries``: round by round, the moderator's summary, the scores,
  the gate reviewer's verdict, the guidance and what went off topic.
- ``participation``: the standing perspectives (the Contrarian and the
  Moonshot) that did not take part, and the perspectives muted for going
  off topic.
- ``responsibilities``: per perspective, what it owns and the interfaces it
  needs (seed 000's per-agent responsibilities): the moderator's
  ``## Responsibilities`` lines when it wrote them, else the perspective's
  declared focus and the interface-like points of its own speeches.
- ``implementation_notes``: the moderator's ``## Implementation notes``, else
  the reasons given by the debaters who hold the recommended position.
- ``dissents``: who holds what against the decision, each attributed to its
  own holder (``attributed_dissents``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from debatecode.agents._perspective_catalog import ALWAYS_PRESENT
from debatecode.agents.perspectives import Perspective, load_catalog
from debatecode.protocol.design.alternatives import Alternative, group_stances
from debatecode.protocol.design.escalation import chosen_option
from debatecode.protocol.design.gate import muted_perspectives
from debatecode.protocol.design.records import Dissent, Position, RoundSummary
from debatecode.protocol.design.replies import parse_speech
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.design.sections import bullets, dedupe_dissents, distinct
from debatecode.protocol.design.stances import stance_of

__all__ = [
    "attributed_dissents",
    "implementation_notes",
    "participation",
    "responsibilities",
    "round_summaries",
]

_INTERFACE = re.compile(
    r"\b(?:interfaces?|apis?|endpoints?|contracts?|schemas?|messages?|events?|queues?|topics?|protocols?|tables?|"
    r"webhooks?|rpc|sdk|formats?)\b",
    re.IGNORECASE,
)
_MAX_ITEMS = 5


def round_summaries(run: DesignRun) -> list[RoundSummary]:
    """Every response round: summary, scores by name, the gate's verdict, guidance, off-topic speeches and mutings."""
    names = run.state.names()
    verdicts = {d["round"]: f"{d['action']}: {d['reason']}" for d in run.state.decisions}
    found = []
    for record in run.state.rounds[: run.state.rounds_done or len(run.state.rounds)]:
        notes = []
        for flag in record.flags:
            who = ", ".join(names.get(a, a) for a in flag.agents)
            if flag.kind == "off_topic":
                notes.append(f"off topic: {who}'s {flag.speech or 'speech'} ({flag.detail.split(': ', 1)[-1]})")
            elif flag.kind == "muted":
                notes.append(f"muted: {who}, off topic {int(flag.value or 0)} times in a row")
        found.append(
            RoundSummary(
                round=record.round,
                summary=record.summary,
                scores={names.get(k, k): v for k, v in record.scores().items()},
                decision=verdicts.get(record.round, ""),
                guidance=record.guidance,
                notes=notes,
            )
        )
    return found


def participation(run: DesignRun) -> list[str]:
    """Who did not take part, or stopped: the Contrarian and the Moonshot when absent, and muted perspectives."""
    lines = []
    catalog = load_catalog()  # the built-in entries: their names and focus, whatever custom overrides say
    present = set(run.state.perspectives)
    switched_off: frozenset[str] = run.design.switched_off
    for key in ALWAYS_PRESENT:
        if key in present or key not in catalog:
            continue
        standing = catalog[key]
        why = f"switched off (design.{key} = false)" if key in switched_off else "not among this debate's perspectives"
        lines.append(
            f"The {standing.name} did not take part ({why}): nobody argued its side, "
            f"{standing.focus[0].lower()}{standing.focus[1:].rstrip('.')}."
        )
    names = run.state.names()
    for key, after in muted_perspectives(run.state.rounds).items():
        lines.append(
            f"{names.get(key, key)} was muted after round {after} for going off topic again and again; "
            "it said nothing more, and its earlier score does not count towards the decision."
        )
    return lines


def _named(line: str, perspective: Perspective) -> str | None:
    """The rest of ``line`` when it starts with the perspective's name or key (``Security: owns ...``)."""
    for name in (perspective.name, perspective.key):
        match = re.match(rf"\s*\**{re.escape(name)}\**\s*[:—–-]\s*(.+)$", line, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return None


def responsibilities(
    run: DesignRun, key: str, sections: Mapping[str, str], spoken: Sequence[Position]
) -> tuple[list[str], list[str]]:
    """What perspective ``key`` owns, and the interfaces it needs (see the module docstring)."""
    perspective = run.state.perspectives[key]
    owns: list[str] = []
    interfaces: list[str] = []
    for line in bullets(sections.get("responsibilities", "")):
        rest = _named(line, perspective)
        if rest is None:
            continue
        owned, _, needed = rest.partition("|")
        owns += [owned.strip()] if owned.strip() else []
        interfaces += [needed.strip()] if needed.strip() else []
    if not owns:
        owns = [f"{perspective.focus.rstrip('.')} (its declared focus)"] if perspective.focus else []
    if not interfaces:
        names = run.state.names()
        for speech in spoken:
            parsed = parse_speech(speech.text, names, own=key)
            interfaces += [reason for reason in parsed.reasons if _INTERFACE.search(reason)]
    return distinct(owns)[:_MAX_ITEMS], distinct(interfaces)[:_MAX_ITEMS]


def _holders_of_recommendation(run: DesignRun, final: Mapping[str, Position], recommendation: str) -> list[str]:
    """Keys of the debaters whose position is the recommended one."""
    escalation = run.state.escalation
    option = chosen_option(escalation)
    names = run.state.names()
    if option is not None and option.kind == "position":
        return [k for k in final if names.get(k, k) in option.holders]
    stances = {key: stance_of(run, speech) for key, speech in final.items()}
    grouped = group_stances({**stances, "\0recommendation": recommendation}, question=run.state.question.text)
    group = next((g for g in grouped if "\0recommendation" in g.holders), None)
    return [k for k in group.holders if k != "\0recommendation"] if group else []


def implementation_notes(
    run: DesignRun, sections: Mapping[str, str], final: Mapping[str, Position], recommendation: str
) -> list[str]:
    """The moderator's implementation notes, else the reasons the holders of the recommendation gave."""
    drafted = [line for line in bullets(sections.get("implementation_notes", "")) if len(line.split()) >= 3]
    if drafted:
        return distinct(drafted)[:_MAX_ITEMS]
    names = run.state.names()
    notes = []
    for key in _holders_of_recommendation(run, final, recommendation):
        parsed = parse_speech(final[key].text, names, own=key)
        notes += [f"{reason} ({names.get(key, key)})" for reason in parsed.reasons]
    return distinct(notes)[:_MAX_ITEMS]


_AIMED_AT = r"(?:disagree(?:s|d)?\s+with|challeng(?:e|es|ed|ing)|against|doubt(?:s)?|reject(?:s)?|question(?:s)?|to)\s+(?:the\s+)?"


def _aimed_at(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` argues against one of ``names``: "I disagree with X", "X: ...", "challenge the X"."""
    for name in names:
        spelled = r"[- ]".join(re.escape(part) for part in re.split(r"[- ]+", name.strip()))
        if re.search(rf"(?:^|[.;!?]\s*)\**{spelled}\**\s*:|\b{_AIMED_AT}{spelled}(?![\w-])", text, re.IGNORECASE):
            return True
    return False


def attributed_dissents(
    run: DesignRun, final: Mapping[str, Position], scores: Mapping[str, int], target: int
) -> list[Dissent]:
    """Each dissent under the perspectives that hold it, in their own words, never under one it argues against.

    After a person chose a position at an escalation, the holders of every other position dissent with
    their stance. Otherwise a perspective below ``target`` dissents: with its stance when its position
    differs from the others', else with its remaining challenge. A challenge aimed at its own speaker ("I
    disagree with Contrarian" said by the Contrarian: a small model copying another's words) is not that
    speaker's dissent: its stance is used instead.
    Near-identical dissents are merged, but a holder is never listed under a text that challenges it.
    """
    names = run.state.names()
    option = chosen_option(run.state.escalation)
    stances = {key: stance_of(run, speech) for key, speech in final.items()}
    found: list[Dissent] = []
    if option is not None and option.kind == "position":
        alternatives: list[Alternative] = group_stances(stances, question=run.state.question.text, scores=scores)
        for alternative in alternatives:
            holders = [names.get(k, k) for k in alternative.holders]
            if not set(holders) & set(option.holders):
                found.append(Dissent(perspectives=holders, text=alternative.stance))
        return dedupe_dissents(found)
    groups = group_stances(stances, question=run.state.question.text, scores=scores)
    alone = {
        key
        for g in groups
        if len(groups) > 1 and len(g.holders) < max(len(x.holders) for x in groups)
        for key in g.holders
    }
    for key, speech in final.items():
        score = scores.get(key)
        if score is not None and score >= target:
            continue
        own = names.get(key, key)
        parsed = parse_speech(speech.text, names, own=key)
        challenge = parsed.challenge_text
        copied = _aimed_at(challenge, [own, key])  # its challenge argues against itself: another's words
        own_words = key in alone or not challenge or copied
        text = (stances[key] or parsed.stance) if own_words else challenge
        if text:
            found.append(Dissent(perspectives=[own], text=text))
    return dedupe_dissents(found)
