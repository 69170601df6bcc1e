"""Sections of model-written markdown: what a synthesizer or patchlist reviewer wrote, read back into records.

``parse_sections`` splits a reply into sections by heading; ``bullets`` reads
a section's items; ``parse_confidence``, ``parse_risks`` and
``parse_alternatives`` read the confidence, the risk register and the
rejected alternatives; ``parse_patchlist`` reads one reviewer's BLOCKING /
HIGH / MEDIUM/LOW items. ``dedupe_dissents`` and ``merge_patches`` fold
near-duplicates from several speakers into one list.

Models rarely follow the asked format exactly, so the reading is tolerant:
headings at any level (``#`` to ``####``), ``**Bold:**`` labels and plain
``Label:`` lines, tables or bullets or prose, sections missing, renamed or
reordered, emphasis anywhere, code fences that hide headings. Nothing here
raises on odd input: what cannot be read is left out, and placeholder items
(``None``, ``N/A``) are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, cast, get_args

from debatecode.protocol.design.records import (
    Confidence,
    Dissent,
    PatchItem,
    PatchSeverity,
    RejectedAlternative,
    RiskEntry,
)
from debatecode.protocol.design.words import ascii_words

__all__ = [
    "bullets",
    "dedupe_dissents",
    "distinct",
    "merge_patches",
    "parse_alternatives",
    "parse_confidence",
    "parse_patchlist",
    "parse_risks",
    "parse_sections",
    "similar",
]

Level = Literal["low", "medium", "high"]

# --- sections --------------------------------------------------------------------------------------

# Kept in step with adr.py's: what markdown_block keeps as a list item is what bullets reads as one.
_LIST_ITEM = re.compile(r"^(?:[-*+•]|(\d{1,9})[.)])\s+(.*)$")
_FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#{1,4})\s+(.*?)\s*#*\s*$")
_BOLD_LABEL = re.compile(
    r"^\s{0,3}(?:[-*+]\s+)?(?:\*\*|__)(?P<label>[^*_\n]{1,60}?)(?:\*\*|__)\s*(?P<colon>:?)\s*(?P<rest>.*)$"
)
_PLAIN_LABEL = re.compile(r"^\s{0,3}(?P<label>[A-Za-z][A-Za-z /()'-]{1,40}?)\s*:\s*(?P<rest>.*)$")

_ALIASES = {
    "decision": "recommendation",
    "final decision": "recommendation",
    "chosen approach": "recommendation",
    "recommended path": "recommendation",
    "background": "context",
    "topic": "question",
    "questions": "open_questions",
    "unresolved questions": "open_questions",
    "open issues": "open_questions",
    "conditions": "caveats",
    "consensus": "agreement",
    "common ground": "agreement",
}
# First match wins: "disagreement" must be read before "agreement".
_KEY_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dissents", ("dissent",)),
    ("tensions", ("tension", "disagree")),
    ("agreement", ("agreement", "convergence", "agree")),
    ("rejected", ("rejected", "alternative")),
    ("risks", ("risk",)),
    ("open_questions", ("open question",)),
    ("caveats", ("caveat",)),
    ("confidence", ("confidence",)),
    ("recommendation", ("recommend",)),
    ("context", ("context",)),
    ("perspectives", ("perspective",)),
    ("question", ("question",)),
)


def _clean_name(name: str) -> str:
    name = re.sub(r"[*_`]", "", name).replace("(s)", "").strip().rstrip(":").strip()
    name = re.sub(r"^(?:\d+[.)]|[ivx]+\.)\s*", "", name, flags=re.IGNORECASE)
    return " ".join(name.lower().split())


def _known_key(name: str) -> str | None:
    clean = _clean_name(name)
    if clean in _ALIASES:
        return _ALIASES[clean]
    if not clean or len(clean.split()) > 4:
        return None
    return next((key for key, words in _KEY_RULES if any(w in clean for w in words)), None)


def parse_sections(text: str) -> dict[str, str]:
    """Split model-written markdown into sections keyed by normalised heading.

    A section starts at a ``#``-``####`` heading, or at a ``**Label:**`` or
    ``Label:`` line whose label is a known section (the rest of such a line
    opens the section). Known names map to ``agreement``, ``tensions``,
    ``recommendation``, ``confidence``, ``caveats``, ``rejected``,
    ``dissents``, ``risks``, ``open_questions``, ``context``, ``question`` and
    ``perspectives``; other headings become their lower-case words joined by
    ``_``, except that an unknown heading deeper than the current section's
    stays part of it (``### Security`` under ``## Perspectives``). Text before
    the first heading is ``preamble``; a repeated section is appended to.
    """
    parts: dict[str, list[str]] = {}
    current, level = "preamble", 0
    fence: str | None = None
    for line in text.splitlines():
        fence_match = _FENCE_LINE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            fence = marker[0] * 3 if fence is None else (None if marker.startswith(fence) else fence)
        if fence is not None or fence_match:
            parts.setdefault(current, []).append(line)
            continue
        key, rest = None, ""
        heading = _HEADING.match(line)
        if heading:
            depth, name = len(heading.group(1)), heading.group(2)
            label, colon, after = name.partition(":")
            if not colon:
                key = _known_key(name)
            elif depth > 1:  # "## Confidence: HIGH"; a "# Decision: <topic>" title is not a section
                key = _known_key(label)
                rest = after if key else ""
            if key is None and not (current != "preamble" and level and depth > level):
                key = re.sub(r"[^a-z0-9]+", "_", _clean_name(heading.group(2))).strip("_") or "section"
            if key is not None:
                level = depth
        else:
            bold = _BOLD_LABEL.match(line)
            if bold and (bold.group("colon") or ":" in bold.group("label") or not bold.group("rest")):
                label, _, inside = bold.group("label").partition(":")  # "**Confidence: HIGH**" holds its value
                key, rest = _known_key(label), f"{inside} {bold.group('rest')}".strip()
            elif (plain := _PLAIN_LABEL.match(line)) and len(plain.group("label").split()) <= 4:
                key, rest = _known_key(plain.group("label")), plain.group("rest")
        if key is None:
            parts.setdefault(current, []).append(line)
            continue
        current = key
        parts.setdefault(current, [])
        if rest.strip():
            parts[current].append(rest)
    sections = {key: "\n".join(lines).strip() for key, lines in parts.items()}
    return {key: value for key, value in sections.items() if value or key != "preamble"}


# --- items, levels, risks, alternatives, dissents --------------------------------------------------

_STRONG = re.compile(r"(\*\*|__)(.+?)\1")
_EMPH = re.compile(r"(?<![\w*])([*_])(?!\s)(.+?)(?<!\s)\1(?![\w*])")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_PLACEHOLDERS = {"", "none", "n/a", "na", "nothing", "none recorded", "none identified", "-", "—", "no dissents"}


def _plain(text: str) -> str:
    text = _EMPH.sub(r"\2", _STRONG.sub(r"\2", text))
    return " ".join(text.replace("**", "").split())


def _cells(row: str) -> list[str]:
    inner = row.strip().removeprefix("|").removesuffix("|")
    return [_plain(cell) for cell in re.split(r"(?<!\\)\|", inner)]


def _table(lines: list[str]) -> tuple[list[str] | None, list[list[str]]]:
    """A markdown table's header (None when it has no rule line) and its body rows."""
    rows = [line for line in lines if _TABLE_ROW.match(line)]
    if len(rows) >= 2 and _TABLE_RULE.match(rows[1]):
        return _cells(rows[0]), [_cells(row) for row in rows[2:]]
    return None, [_cells(row) for row in rows if not _TABLE_RULE.match(row)]


def bullets(section: str) -> list[str]:
    """The items of a section: its list items (or table rows, cells joined by `` — ``), else its sentences.

    Markdown emphasis is stripped; placeholder items (``None``, ``N/A``) are dropped.
    """
    lines = section.splitlines()
    items: list[str] = []
    listed, blank_before = False, False
    for raw in lines:
        line = raw.strip()
        item = _LIST_ITEM.match(line)
        if item:
            items.append(item.group(2))
            listed = True
        elif listed and line and not _TABLE_ROW.match(line) and (not blank_before or raw[:1].isspace()):
            items[-1] += " " + line  # a continuation of the item above
        blank_before = not line
    if not listed:
        _, rows = _table(lines)
        if rows:
            items = [" — ".join(cell for cell in row if cell) for row in rows]
        else:
            prose = " ".join(line.strip() for line in lines if line.strip() and not _FENCE_LINE.match(line))
            items = _SENTENCE_END.split(prose)
    cleaned = (_plain(item) for item in items)
    return [item for item in cleaned if item.lower().strip(" .:!") not in _PLACEHOLDERS]


_LEVEL_WORDS = r"very high|very low|high|medium|med|moderate|low|critical|severe|minor"
_LEVELS: dict[str, Level] = {"critical": "high", "severe": "high", "med": "medium", "moderate": "medium"}


def _level(word: str) -> Level:
    word = word.lower().replace("very ", "")
    return _LEVELS.get(word, cast(Level, word) if word in get_args(Level) else "medium")


_CONFIDENCE_PATTERNS = (
    re.compile(r"confidence(?:\s+level)?[\s:=*_\-—–(]{0,8}\b(high|medium|low)\b", re.IGNORECASE),
    re.compile(r"\b(high|medium|low)\b[*_\s]+confidence\b[*_:]*", re.IGNORECASE),
    re.compile(r"\b(HIGH|MEDIUM|LOW)\b(?!-\w)"),
    re.compile(r"\b(high|medium|low)\b(?!-\w)", re.IGNORECASE),
)


def parse_confidence(text: str) -> tuple[Confidence | None, str]:
    """The confidence level named in ``text`` (any case) and the reason given after it.

    ``Confidence: high — all perspectives agree`` gives ``("HIGH", "all perspectives agree")``;
    a level next to the word *confidence* wins over a stray "low" elsewhere. ``(None, "")`` when none is named.
    """
    for pattern in _CONFIDENCE_PATTERNS:
        match = pattern.search(text)
        if match:
            level = cast(Confidence, match.group(1).upper())
            reason = _plain(text[match.end() :]).lstrip(" *_:;,.-—–=")
            if reason.startswith("(") and reason.endswith(")"):
                reason = reason[1:-1].strip()
            return level, reason.rstrip(" *_")
    return None, ""


_DASH_SPLIT = re.compile(r"\s+[—–]\s+|\s+-{1,2}\s+")
_LABELLED_LEVEL = re.compile(
    rf"\b(likelihood|probability|chance|impact|severity)\s*[:=]?\s*\b({_LEVEL_WORDS})\b", re.IGNORECASE
)
_LEVEL_PAIR = re.compile(rf"\b({_LEVEL_WORDS})\s*/\s*({_LEVEL_WORDS})\b", re.IGNORECASE)
_LONE_LEVEL = re.compile(rf"^\(?\s*({_LEVEL_WORDS})\s*\)?$", re.IGNORECASE)
_OWNER = re.compile(r"[(\[]\s*(?:owner|raised by)\s*[:=]\s*([^()\[\]]+?)\s*[)\]]", re.IGNORECASE)
_PREFIX = re.compile(r"^(mitigation|mitigated by|mitigate|owner|raised by)\s*[:=]?\s*", re.IGNORECASE)


def _risk_from_line(line: str, default_owner: str) -> RiskEntry | None:
    fields: dict[str, str] = {}
    levels: dict[str, Level] = {}

    def take_levels(part: str) -> str:
        for match in _LABELLED_LEVEL.finditer(part):
            is_likelihood = match.group(1).lower() in ("likelihood", "probability", "chance")
            levels["likelihood" if is_likelihood else "impact"] = _level(match.group(2))
        part = _LABELLED_LEVEL.sub("", part)
        pair = _LEVEL_PAIR.search(part)
        if pair:
            levels.setdefault("likelihood", _level(pair.group(1)))
            levels.setdefault("impact", _level(pair.group(2)))
            part = part[: pair.start()] + part[pair.end() :]
        return re.sub(r"\(\s*[,;/]*\s*\)", "", part).strip(" ,;:()")

    if owner := _OWNER.search(line):
        fields["owner"] = owner.group(1).strip()
        line = line[: owner.start()] + line[owner.end() :]
    parts = [p.strip() for p in _DASH_SPLIT.split(line) if p.strip()]
    risk = take_levels(parts[0]) if parts else ""
    for part in parts[1:]:
        prefix = _PREFIX.match(part)
        if prefix:
            name = "owner" if prefix.group(1).lower() in ("owner", "raised by") else "mitigation"
            fields[name] = part[prefix.end() :].strip()
        elif lone := _LONE_LEVEL.match(part):
            levels.setdefault("impact", _level(lone.group(1)))
        elif rest := take_levels(part):
            fields["mitigation"] = f"{fields['mitigation']}; {rest}" if fields.get("mitigation") else rest
    if not risk:
        return None
    return RiskEntry(
        risk=risk,
        likelihood=levels.get("likelihood", "medium"),
        impact=levels.get("impact", "medium"),
        mitigation=fields.get("mitigation", ""),
        owner=fields.get("owner") or default_owner,
    )


_RISK_COLUMNS = (
    ("likelihood", ("likelihood", "probability", "chance")),
    ("impact", ("impact", "severity")),
    ("mitigation", ("mitigation",)),
    ("owner", ("owner", "raised")),
    ("risk", ("risk", "description", "issue")),
)


def parse_risks(section: str, default_owner: str) -> list[RiskEntry]:
    """Risks from a table (columns found by their header), ``risk — likelihood/impact — mitigation`` lines or plain bullets.

    Missing levels default to medium, a missing owner to ``default_owner``.
    """
    header, rows = _table(section.splitlines())
    if header is not None and rows:
        columns: dict[str, int] = {}
        for index, name in enumerate(h.lower() for h in header):
            field = next((f for f, words in _RISK_COLUMNS if any(w in name for w in words)), None)
            if field and field not in columns:
                columns[field] = index
        columns.setdefault("risk", 0)
        found = []
        for row in rows:

            def cell(field: str, row: list[str] = row) -> str:
                index = columns.get(field)
                return row[index] if index is not None and index < len(row) else ""

            if cell("risk"):
                found.append(
                    RiskEntry(
                        risk=cell("risk"),
                        likelihood=_level(cell("likelihood") or "medium"),
                        impact=_level(cell("impact") or "medium"),
                        mitigation="" if cell("mitigation") in ("—", "-") else cell("mitigation"),
                        owner=cell("owner").strip("—- ") or default_owner,
                    )
                )
        return found
    entries = (_risk_from_line(item, default_owner) for item in bullets(section))
    return [entry for entry in entries if entry is not None]


_PAREN_REASON = re.compile(r"^(?P<option>.+?)\s*\((?P<reason>(?:rejected|because|since)\b.*)\)\s*\.?$", re.IGNORECASE)
_BECAUSE = re.compile(
    r"^(?P<option>.+?),?\s+(?:(?:was|is)\s+)?(?:rejected\s+)?because\s+(?P<reason>.+)$", re.IGNORECASE
)
_REASON_LEAD = re.compile(r"^(?:rejected\s*(?:because|since|as)?|because|since)\s*[:,-]?\s*", re.IGNORECASE)


def parse_alternatives(section: str) -> list[RejectedAlternative]:
    """Rejected alternatives from ``X: because Y``, ``X — Y``, ``X (rejected because Y)`` or ``X because Y`` items.

    An item with no reason keeps an empty reason.
    """
    found = []
    for item in bullets(section):
        option, reason = item, ""
        if match := _PAREN_REASON.match(item):
            option, reason = match.group("option"), match.group("reason")
        elif ":" in item and len(item.split(":", 1)[0]) <= 80:
            option, reason = item.split(":", 1)
        elif len(parts := _DASH_SPLIT.split(item, maxsplit=1)) == 2:
            option, reason = parts
        elif match := _BECAUSE.match(item):
            option, reason = match.group("option"), match.group("reason")
        option = option.strip(" .;,")
        if option:
            found.append(RejectedAlternative(option=option, reason=_REASON_LEAD.sub("", reason.strip()).strip()))
    return found


def similar(a: str, b: str) -> bool:
    """Near-duplicates: the same words, or distinct words shared at 80% or more (Jaccard)."""
    left, right = ascii_words(a), ascii_words(b)
    if left == right:
        return True
    sa, sb = set(left), set(right)
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) >= 0.8


def distinct(lines: Sequence[str]) -> list[str]:
    """``lines`` without near-duplicates (``similar``), first occurrence kept, in order."""
    kept: list[str] = []
    for line in lines:
        if line and not any(similar(line, seen) for seen in kept):
            kept.append(line)
    return kept


def _names(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a whole word (any case; ``-`` and spaces alike)."""
    pattern = r"(?<![\w-])" + r"[- ]".join(re.escape(part) for part in re.split(r"[- ]+", name.strip())) + r"(?![\w-])"
    return bool(name.strip()) and re.search(pattern, text, re.IGNORECASE) is not None


def dedupe_dissents(dissents: Sequence[Dissent]) -> list[Dissent]:
    """Merge near-duplicate dissents: the same words, or a word overlap (shared / all distinct words) of at least 0.8.

    The first-seen text is kept; holders are merged in first-seen order. A holder is never merged under a
    text that names it ("I disagree with Contrarian" is not the Contrarian's dissent): it keeps its own entry.
    """
    merged: list[Dissent] = []
    for dissent in dissents:
        twin = next(
            (
                i
                for i, kept in enumerate(merged)
                if similar(kept.text, dissent.text) and not any(_names(kept.text, h) for h in dissent.perspectives)
            ),
            None,
        )
        if twin is None:
            merged.append(Dissent(perspectives=list(dict.fromkeys(dissent.perspectives)), text=dissent.text))
            continue
        holders = list(dict.fromkeys([*merged[twin].perspectives, *dissent.perspectives]))
        merged[twin] = merged[twin].model_copy(update={"perspectives": holders})
    return merged


# --- patchlists -------------------------------------------------------------------------------------

_SEVERITY_ORDER: tuple[PatchSeverity, ...] = ("BLOCKING", "HIGH", "MEDIUM-LOW")
_ID_LETTER: dict[PatchSeverity, str] = {"BLOCKING": "B", "HIGH": "H", "MEDIUM-LOW": "M"}
_LETTER_SEVERITY: dict[str, PatchSeverity] = {"B": "BLOCKING", "H": "HIGH", "M": "MEDIUM-LOW", "L": "MEDIUM-LOW"}
_SEVERITY_LINE = re.compile(
    r"^\s{0,3}(?:#{1,4}\s*)?[*_]*\s*(blocking|critical|high|medium\s*[/&-]?\s*low|medium|low)"
    r"(?:\s+(?:priority|severity|issues?|items?))?\s*[*_]*\s*:?\s*[*_]*\s*:?\s*$",
    re.IGNORECASE,
)
_PATCH_ID = re.compile(r"^[*_]*\s*([BHML])(\d+)\s*[*_]*\s*[:.)\]—–-]\s*[*_]*\s*", re.IGNORECASE)
_LABEL_ONLY = re.compile(r"^(?:\*\*|__)[^*_]{1,60}(?:\*\*|__)\s*:?$|^[A-Za-z][\w /()-]{0,40}:$")
_ARROW = re.compile(r"\s*(?:→|->|=>)\s*")


def _severity(word: str) -> PatchSeverity:
    word = word.lower()
    if word in ("blocking", "critical"):
        return "BLOCKING"
    return "HIGH" if word == "high" else "MEDIUM-LOW"


def parse_patchlist(text: str, raised_by: str) -> list[PatchItem]:
    """Patch items from one reviewer's reply, numbered B1.., H1.., M1.. in order of appearance.

    An item is a list item under a BLOCKING / HIGH / MEDIUM/LOW heading, or any
    line prefixed ``B1:``, ``H2:``, ``M3:`` (the prefix's letter wins over the
    heading). ``issue → change`` (or ``->``) splits the proposed change off.
    """
    raw_items: list[tuple[PatchSeverity, str]] = []
    current: PatchSeverity | None = None
    for raw in text.splitlines():
        line = raw.strip()
        heading = _SEVERITY_LINE.match(line)
        if heading:
            current = _severity(heading.group(1))
            continue
        item = _LIST_ITEM.match(line)
        body = item.group(2) if item else line
        prefixed = _PATCH_ID.match(body)
        if prefixed:
            raw_items.append((_LETTER_SEVERITY[prefixed.group(1).upper()], body[prefixed.end() :]))
        elif item and current is not None:
            raw_items.append((current, body))
        elif line and raw[:1].isspace() and raw_items and not _HEADING.match(line):
            severity, previous = raw_items[-1]
            raw_items[-1] = (severity, f"{previous} {line}")
        elif _HEADING.match(line) or _LABEL_ONLY.match(line):
            current = None  # another section: its list items are not patches
    items = []
    for severity, body in raw_items:
        issue, change = _split_change(body)
        if issue.lower().strip(" .") in _PLACEHOLDERS:
            continue
        items.append(PatchItem(id="", severity=severity, issue=issue, change=change, raised_by=[raised_by]))
    return _renumber(items)


def _split_change(body: str) -> tuple[str, str]:
    """``issue → change`` as (issue, change); the change is empty when there is no arrow."""
    parts = _ARROW.split(_plain(body), maxsplit=1)
    return parts[0].strip(" .;"), parts[1].strip() if len(parts) > 1 else ""


def _renumber(items: Sequence[PatchItem]) -> list[PatchItem]:
    counts = dict.fromkeys(_SEVERITY_ORDER, 0)
    ordered = sorted(items, key=lambda item: _SEVERITY_ORDER.index(item.severity))
    numbered = []
    for item in ordered:
        counts[item.severity] += 1
        numbered.append(item.model_copy(update={"id": f"{_ID_LETTER[item.severity]}{counts[item.severity]}"}))
    return numbered


def merge_patches(lists: Sequence[Sequence[PatchItem]]) -> list[PatchItem]:
    """One patchlist from every reviewer's: the same issue (normalised text) once, raisers merged, renumbered.

    When reviewers rate one issue differently the highest severity wins; the
    first non-empty proposed change is kept.
    """
    merged: dict[str, PatchItem] = {}
    for items in lists:
        for item in items:
            key = " ".join(ascii_words(item.issue))
            kept = merged.get(key)
            if kept is None:
                merged[key] = item.model_copy(update={"raised_by": list(dict.fromkeys(item.raised_by))})
                continue
            severity = min(kept.severity, item.severity, key=_SEVERITY_ORDER.index)
            raisers = list(dict.fromkeys([*kept.raised_by, *item.raised_by]))
            change = kept.change or item.change
            merged[key] = kept.model_copy(update={"severity": severity, "raised_by": raisers, "change": change})
    return _renumber(list(merged.values()))
