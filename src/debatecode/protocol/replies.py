"""Read structured answers out of free-text replies, leniently.

Base models and chat models both answer loosely; every parser here returns
``None`` or an empty result rather than raising, and the phases treat a
missing value as "no opinion" (an abstention, a neutral score).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from debatecode.llm.parsing import code_fences, extract_choice

__all__ = [
    "CATEGORIES",
    "Review",
    "parse_answers",
    "parse_confidence",
    "parse_objection",
    "parse_questions",
    "parse_ranking",
    "parse_review",
    "parse_satisfaction",
    "parse_verdicts",
    "python_blocks",
]

CATEGORIES = ("requirements", "constraints", "edge_cases", "performance", "integration")
_CATEGORY_WORDS = {
    "edge_cases": ("empty", "negative", "zero", "none", "null", "edge", "boundary", "duplicate", "overflow", "invalid"),
    "performance": ("fast", "slow", "complexity", "performance", "large", "memory", "time limit", "big"),
    "constraints": ("must", "allowed", "limit", "range", "type", "constraint", "mutat", "modif"),
    "integration": ("import", "library", "module", "api", "interface", "return type", "format"),
}
_TAG = re.compile(r"\[\s*([a-z _-]+?)\s*\]", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(?:#\s*)?(?:Q|A)?\s*(\d+)\s*[.):]\s*", re.IGNORECASE)


def _category(question: str, tag: str | None) -> str:
    if tag:
        normal = tag.strip().lower().replace(" ", "_").replace("-", "_")
        if normal in CATEGORIES:
            return normal
        if normal.rstrip("s") + "s" in CATEGORIES:
            return normal.rstrip("s") + "s"
    lowered = question.lower()
    for category, words in _CATEGORY_WORDS.items():
        if any(word in lowered for word in words):
            return category
    return "requirements"


def parse_questions(text: str, limit: int = 5) -> list[dict[str, str]]:
    """Clarifying questions, one per line, with their category (``[edge_cases] ...``). ``NONE`` gives []."""
    if text.strip().upper().startswith("NONE"):
        return []
    questions: list[dict[str, str]] = []
    seen: set[str] = set()
    for raw in text.splitlines():
        line = raw.strip().lstrip("#-* ").strip()
        line = _NUMBERED.sub("", line)
        if "?" not in line:
            continue
        tag_match = _TAG.search(line)
        tag = tag_match.group(1) if tag_match else None
        question = _TAG.sub("", line).strip(" :-")
        question = question[: question.index("?") + 1].strip()
        key = question.lower()
        if len(question) < 8 or key in seen:
            continue
        seen.add(key)
        questions.append({"category": _category(question, tag), "question": question})
        if len(questions) >= limit:
            break
    return questions


def parse_answers(text: str, count: int) -> list[str]:
    """``count`` answers from a numbered reply (``1.``, ``A1:``); missing ones are empty strings."""
    answers: dict[int, list[str]] = {}
    current: int | None = None
    for raw in text.splitlines():
        line = raw.strip().lstrip("#").strip()
        if line.lower().startswith("confidence"):
            continue
        match = _NUMBERED.match(line)
        if match:
            current = int(match.group(1))
            line = line[match.end() :]
        if current is not None and line:
            answers.setdefault(current, []).append(line)
    if not answers and text.strip():
        lines = [ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()]
        return (lines + [""] * count)[:count]
    return [" ".join(answers.get(i, [])) for i in range(1, count + 1)]


def parse_confidence(text: str) -> float | None:
    """``Confidence: 0.8`` or ``Confidence: 80%``, as 0-1."""
    match = re.search(r"confidence\s*[:=]?\s*(\d+(?:\.\d+)?)\s*(%?)", text, re.IGNORECASE)
    if not match:
        return None
    value = float(match.group(1))
    if match.group(2) or value > 1:
        value /= 100
    return max(0.0, min(1.0, value))


def parse_satisfaction(text: str) -> int | None:
    """``Satisfaction: 85`` (or a leading number), clamped to 0-100."""
    match = re.search(r"satisfaction\s*(?:\(\s*0\s*-\s*100\s*\))?\s*[:=]?\s*\**\s*(\d{1,3})", text, re.IGNORECASE)
    if not match:
        match = re.match(r"\s*(\d{1,3})\b", text)
    if not match:
        return None
    return max(0, min(100, int(match.group(1))))


@dataclass
class Review:
    """A reviewer's verdict on one candidate."""

    satisfaction: int | None
    rationale: str = ""
    concerns: list[str] = field(default_factory=list)
    suggestions: str = ""

    @property
    def summary(self) -> str:
        parts = [self.rationale] + [f"Concern: {c}" for c in self.concerns]
        return " ".join(p for p in parts if p).strip()


def _section(text: str, name: str, following: tuple[str, ...]) -> str:
    pattern = rf"{name}\s*:\s*(.*?)(?=^\s*(?:{'|'.join(following)})\s*:|\Z)"
    match = re.search(pattern, text, re.IGNORECASE | re.DOTALL | re.MULTILINE)
    return match.group(1).strip() if match else ""


def parse_review(text: str) -> Review:
    """A review in the format the review prompt asks for; tolerant of missing parts."""
    heads = ("Satisfaction", "Rationale", "Blocking concerns", "Suggested changes")
    rationale = _section(text, "Rationale", heads)
    concerns_text = _section(text, "Blocking concerns", heads)
    suggestions = _section(text, "Suggested changes", heads)
    concerns = []
    if concerns_text and not concerns_text.lower().startswith("none"):
        for line in concerns_text.splitlines():
            item = _NUMBERED.sub("", line.strip().lstrip("-*# ")).strip()
            if item:
                concerns.append(item)
    if not rationale:
        rationale = " ".join(line.strip("# ").strip() for line in text.splitlines()[1:4] if line.strip()).strip()
    return Review(parse_satisfaction(text), rationale[:1000], concerns[:8], suggestions[:1000])


def parse_objection(text: str) -> str:
    """The Contrarian's strongest objection (its ``Objection:`` line, else its first sentence)."""
    match = re.search(r"objection\s*:\s*(.+)", text, re.IGNORECASE)
    if match:
        return match.group(1).strip().strip("#").strip()[:500]
    first = re.split(r"(?<=[.!?])\s", " ".join(text.split()), maxsplit=1)[0]
    return first.strip("# ")[:500]


def parse_ranking(text: str, n_options: int) -> list[int]:
    """0-based option indices, best first, from ``Ranking: 2 > 1 > 3``; else the single ``Vote``."""
    match = re.search(r"ranking\s*:\s*([^\n]+)", text, re.IGNORECASE)
    ranking: list[int] = []
    if match:
        for token in re.findall(r"\d+", match.group(1)):
            index = int(token) - 1
            if 0 <= index < n_options and index not in ranking:
                ranking.append(index)
    if not ranking:
        choice = extract_choice(text, n_options)
        if choice is not None:
            ranking = [choice]
    return ranking


def parse_verdicts(text: str) -> dict[str, bool]:
    """Blue's ``VALID: name`` / ``INVALID: name`` verdicts on Red's attacks."""
    verdicts: dict[str, bool] = {}
    for match in re.finditer(r"\b(INVALID|VALID)\s*:\s*`?([A-Za-z_][A-Za-z0-9_]*)", text):
        verdicts[match.group(2)] = match.group(1) == "VALID"
    return verdicts


def python_blocks(text: str) -> list[str]:
    """Every closed fenced code block in ``text``, in order (its info string is not checked)."""
    return [fence.code.strip() + "\n" for fence in code_fences(text) if fence.closed and fence.code.strip()]
