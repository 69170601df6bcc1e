"""Reading design-debate replies: stance, reasons, challenges, risks, satisfaction and the synthesis call.

Replies follow the labelled format of ``templates/design/_format.j2``, but a
small model drifts: labels come bold, in other case, or not at all. Every
reader here is tolerant and says what it could not find (``None`` or empty)
rather than guessing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from debatecode.protocol.replies import parse_satisfaction

__all__ = ["Speech", "parse_analysis", "parse_poll_answer", "parse_review_answer", "parse_speech"]

_LABEL = re.compile(r"^[ \t>*_#-]*\**\s*([A-Za-z][A-Za-z /]{1,30}?)\s*\**\s*:\s*\**\s*(.*)$")
_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d+[.)])[ \t]+(.+)$")
_YES = re.compile(r"^\W*(yes|yeah|agree|ready)\b", re.IGNORECASE)
_NO = re.compile(r"^\W*(no|not yet|disagree)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Speech:
    """What one reply says, as far as it could be read."""

    stance: str
    reasons: list[str] = field(default_factory=list)
    challenges: list[str] = field(default_factory=list)
    """Perspective keys the reply challenges."""
    challenge_text: str = ""
    challenge_line: bool = False
    """The reply has its own ``Challenge:`` line (whether or not it names anyone)."""
    risks: list[str] = field(default_factory=list)
    satisfaction: int | None = None
    ready: bool | None = None
    """The answer to "Ready for synthesis", when given."""


def _sections(text: str) -> dict[str, list[str]]:
    """Lines under each label (``stance``, ``reasons``, ``challenge``, ``risks``...), the label's own line first."""
    found: dict[str, list[str]] = {}
    current = "_lead"
    for line in text.splitlines():
        match = _LABEL.match(line)
        if match and not _ITEM.match(line):
            current = match.group(1).strip().lower()
            found.setdefault(current, []).append(match.group(2).strip().strip("*").strip())
            continue
        found.setdefault(current, []).append(line)
    return found


def _items(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        item = _ITEM.match(line)
        text = (item.group(1) if item else line).strip().strip("*").strip()
        if text:
            out.append(text)
    return out


def _first(sections: Mapping[str, list[str]], *names: str) -> list[str] | None:
    for key, lines in sections.items():
        if any(key == n or key.startswith(n) for n in names):
            return lines
    return None


def parse_speech(text: str, names: Mapping[str, str], *, own: str) -> Speech:
    """Read a debater's reply. ``names`` maps every perspective key to its display name; ``own`` is the speaker's key.

    A challenge counts when the reply names another perspective (by name or key) in its ``Challenge:`` line,
    or, without that line, next to a word of disagreement.
    """
    sections = _sections(text)
    stance_lines = _first(sections, "stance", "position", "recommend")
    if stance_lines and stance_lines[0]:
        stance = stance_lines[0]
    else:
        prose = " ".join(line.strip() for line in text.splitlines() if line.strip() and not _LABEL.match(line))
        stance = _SENTENCE.split(prose, 1)[0] if prose else ""
    challenge_lines = _first(sections, "challenge", "disagree")
    challenge_text = " ".join(line for line in (challenge_lines or []) if line.strip())
    if challenge_lines is None:
        disagreeing = [
            s for s in _SENTENCE.split(text) if re.search(r"\b(disagree|challenge|wrong|but|however)\b", s, re.I)
        ]
        challenge_text = " ".join(disagreeing)
    challenges = [
        key
        for key, name in names.items()
        if key != own and (_mentions(challenge_text, name) or _mentions(challenge_text, key))
    ]
    ready_lines = _first(sections, "ready", "synthesis", "move to synthesis")
    ready = None
    if ready_lines is not None:
        answer = " ".join(ready_lines).strip()
        ready = True if _YES.match(answer) else False if _NO.match(answer) else None
    sat_lines = _first(sections, "satisfaction")
    satisfaction = parse_satisfaction("Satisfaction: " + sat_lines[0]) if sat_lines else None
    return Speech(
        stance=_clip(stance, 300),
        reasons=_items((_first(sections, "reason") or [])[1:] or (_first(sections, "reason") or [])),
        challenges=challenges,
        challenge_text=_clip(challenge_text, 400),
        challenge_line=challenge_lines is not None and bool(challenge_text.strip(" -")),
        risks=_items(_first(sections, "risk") or []),
        satisfaction=satisfaction,
        ready=ready,
    )


def _mentions(text: str, name: str) -> bool:
    name = name.strip()
    if not name or not text:
        return False
    pattern = r"(?<![\w-])" + re.escape(name).replace(r"\-", r"[- ]").replace(r"\ ", r"[- ]") + r"(?![\w-])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def parse_analysis(text: str) -> tuple[str, list[str]]:
    """The moderator's reading: the decision in one sentence, and the constraints it names."""
    sections = _sections(text)
    decision = (_first(sections, "decision") or [""])[0]
    constraints = _items((_first(sections, "constraint") or [""])[1:]) or _items(
        (_first(sections, "constraint") or [])[:1]
    )
    return _clip(decision, 300), [_clip(c, 200) for c in constraints[:6]]


def parse_poll_answer(text: str) -> bool | None:
    """A yes or no on the first line of a poll answer (None when it gives neither)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    if _YES.match(first):
        return True
    if _NO.match(first):
        return False
    return None


def parse_review_answer(text: str) -> tuple[bool, str]:
    """``ACCURATE`` → (True, ''); ``MISREPRESENTED: <view>`` → (False, the corrected view).

    Only an answer that *starts* with the verdict counts as a complaint: a small model musing about
    accuracy somewhere in its reply is not a participant saying its view was misrepresented.
    """
    match = re.match(r"\W*misrepresent\w*[\s*_:\-–—]*(.*)", text, re.IGNORECASE | re.DOTALL)
    if match:
        return False, _clip(" ".join(match.group(1).split()), 400)
    return True, ""


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
