"""Architecture decision records: the markdown a design debate ends in.

``render`` turns a ``DecisionRecord`` into an ADR (deliberative mode) or a
patchlist; ``write_adr`` files it as ``docs/decisions/adr-NNNN-slug.md``,
numbered after the ADRs already there. Every ADR section is always present;
an empty one says ``_None recorded._`` so readers and tools can rely on the
headings. A decision a person made at an escalation says so in its
confidence line, and the moderator's draft it replaced is kept in a section
of its own, labelled as context.

Model text is untrusted markdown: rendered text can neither open a heading,
a fence, a table or an HTML block, nor close one of ours.

Reading model-written synthesis back into records is ``sections.py``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from debatecode.protocol.design.files import write_text_atomic
from debatecode.protocol.design.records import (
    DecisionRecord,
    Dissent,
    Escalation,
    PatchSeverity,
    PerspectiveSummary,
    Recommendation,
    RiskEntry,
    RoundSummary,
)
from debatecode.safe_paths import path_under

__all__ = [
    "NONE_RECORDED",
    "adr_filename",
    "confidence_label",
    "markdown_block",
    "markdown_inline",
    "next_adr_number",
    "render",
    "render_adr",
    "render_patchlist",
    "slugify",
    "write_adr",
]

NONE_RECORDED = "_None recorded._"
"""What an empty section says."""

# --- markdown safety -------------------------------------------------------------------------------

_INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>|~&#])")
_LIST_ITEM = re.compile(r"^(?:[-*+•]|(\d{1,9})[.)])\s+(.*)$")
_BLOCK_START = re.compile(r"^(?:[-+=]|\d+(?=[.)]))")


def markdown_inline(text: object) -> str:
    """Model text for one line (a list item, a table cell): whitespace collapsed, every markdown and HTML sign escaped."""
    return _INLINE_MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _defuse_start(line: str) -> str:
    # A leading '-', '+', '=' or '1.' could start a list or underline the line above into a heading.
    match = _BLOCK_START.match(line)
    if not match:
        return line
    if match.group(0).isdigit():
        return line[: match.end()] + "\\" + line[match.end() :]
    return "\\" + line


def markdown_block(text: object) -> str:
    """Model text for a paragraph: line breaks and plain lists kept, anything structural escaped.

    Headings, fences, block quotes, tables, HTML, setext underlines and
    indented code all come out as literal text; ``- item`` and ``1. item``
    lines stay list items.
    """
    out: list[str] = []
    for raw in str(text).splitlines():
        line = raw.strip()
        if not line:
            if out and out[-1]:
                out.append("")
            continue
        item = _LIST_ITEM.match(line)
        if item:
            marker = f"{item.group(1)}." if item.group(1) else "-"
            out.append(f"{marker} {_defuse_start(markdown_inline(item.group(2)))}")
        else:
            out.append(_defuse_start(markdown_inline(line)))
    return "\n".join(out).strip()


# --- rendering -------------------------------------------------------------------------------------


def _section(title: str, body: Sequence[str]) -> list[str]:
    return [f"## {title}", "", *(body or [NONE_RECORDED]), ""]


def _list(items: Sequence[str]) -> list[str]:
    return [f"- {markdown_inline(item)}" for item in items if item.strip()]


def confidence_label(rec: Recommendation) -> str:
    """How the confidence reads: the level, or that a person decided at an escalation."""
    return "decided by a person at the escalation" if rec.confidence == "HUMAN" else rec.confidence


def _head(record: DecisionRecord) -> list[str]:
    title = record.title.strip() or record.question.strip() or "Untitled decision"
    scores = ", ".join(f"{markdown_inline(name)} {score}/100" for name, score in record.scores.items())
    names = ", ".join(markdown_inline(p.name) for p in record.perspectives)
    lines = [
        f"# ADR {record.number:04d}: {markdown_inline(title)}",
        "",
        f"- **Status:** {record.status}",
        f"- **Date:** {markdown_inline(record.date)}",
        f"- **Debate ID:** {markdown_inline(record.debate_id)}",
        f"- **Mode:** {record.mode}",
        f"- **Rounds:** {record.rounds}",
        f"- **Stop reason:** {markdown_inline(record.stop_reason) or '_not recorded_'}",
        f"- **Confidence:** {confidence_label(record.recommendation)}",
        f"- **Perspectives:** {names or '_none_'}",
        f"- **Final satisfaction:** {scores or '_not scored_'}",
        "",
    ]
    lines += _section("Question", [markdown_block(record.question)] if record.question.strip() else [])
    lines += _section("Context", [markdown_block(record.context)] if record.context.strip() else [])
    return lines


def _perspectives(summaries: Sequence[PerspectiveSummary]) -> list[str]:
    lines: list[str] = []
    for summary in summaries:
        lines += [f"### {markdown_inline(summary.name)}", ""]
        lines += _list(summary.key_arguments) or ["_No key arguments recorded._"]
        trade_offs = markdown_inline(summary.trade_offs) or "_none stated_"
        score = "_not scored_" if summary.final_satisfaction is None else f"{summary.final_satisfaction}/100"
        lines += ["", f"**Trade-offs accepted:** {trade_offs}", "", f"**Final satisfaction:** {score}", ""]
        owns = "; ".join(markdown_inline(item) for item in summary.responsibilities) or "_none recorded_"
        needs = "; ".join(markdown_inline(item) for item in summary.interfaces) or "_none named_"
        lines += [f"**Responsibilities:** {owns}", "", f"**Interfaces:** {needs}", ""]
    return lines[:-1]


def _confidence_line(rec: Recommendation) -> str:
    reason = f" — {markdown_inline(rec.confidence_reason)}" if rec.confidence_reason.strip() else ""
    return f"**Confidence:** {confidence_label(rec)}{reason}"


def _caveats(rec: Recommendation) -> list[str]:
    caveats = _list(rec.caveats)
    return ["**Caveats:**", "", *caveats] if caveats else ["**Caveats:** _none recorded._"]


def _recommendation(rec: Recommendation) -> list[str]:
    text = markdown_block(rec.text) or NONE_RECORDED
    return [text, "", _confidence_line(rec), "", *_caveats(rec)]


def _round_summaries(rounds: Sequence[RoundSummary]) -> list[str]:
    lines = []
    for r in rounds:
        scores = ", ".join(f"{markdown_inline(name)} {score}" for name, score in r.scores.items())
        lines.append(
            f"- **Round {r.round}**"
            + (f" (satisfaction: {scores})" if scores else "")
            + f": {markdown_inline(r.summary) or '_no summary_'}"
        )
        if r.decision:
            lines.append(f"  - Gate reviewer: {markdown_inline(r.decision)}")
        if r.guidance:
            lines.append(f"  - Human guidance: {markdown_inline(r.guidance)}")
        lines += [f"  - {markdown_inline(note)}" for note in r.notes]
    return lines


def _dissents(dissents: Sequence[Dissent]) -> list[str]:
    return [
        f"- **{markdown_inline(', '.join(d.perspectives) or 'Unattributed')}:** {markdown_inline(d.text)}"
        for d in dissents
    ]


def _risks(risks: Sequence[RiskEntry]) -> list[str]:
    if not risks:
        return []
    lines = ["| Risk | Likelihood | Impact | Mitigation | Owner |", "|---|---|---|---|---|"]
    for r in risks:
        cells = [r.risk, r.likelihood, r.impact, r.mitigation or "—", r.owner or "—"]
        lines.append("| " + " | ".join(markdown_inline(cell) for cell in cells) + " |")
    return lines


def _escalation(esc: Escalation) -> list[str]:
    lines = [f"**Reason:** {markdown_inline(esc.reason)}", "", "**Positions:**", ""]
    lines += [f"- **{markdown_inline(name)}:** {markdown_inline(stance)}" for name, stance in esc.positions.items()]
    lines += ["", "**Options:**", ""]
    lines += [f"- **{markdown_inline(o.label)}.** {markdown_inline(o.text)}" for o in esc.options]
    if esc.choice is None:
        choice = "no decision: non-interactive run"
    else:
        text = next((o.text for o in esc.options if o.label == esc.choice), "")
        choice = f"{markdown_inline(esc.choice)}" + (f": {markdown_inline(text)}" if text else "")
        choice += f" (decided by {esc.decided_by})"
    lines += ["", f"**Choice:** {choice}"]
    if esc.guidance:
        lines += ["", f"**Guidance:** {markdown_inline(esc.guidance)}"]
    if esc.continued_in_round is not None:
        lines += [
            "",
            f"**Continued:** the debate ran round {esc.continued_in_round} with this guidance in every debater's "
            "prompt, then the gate reviewer decided again.",
        ]
    return lines


def _tail(record: DecisionRecord) -> list[str]:
    lines = _section("Dissents", _dissents(record.dissents))
    lines += _section("Risk register", _risks(record.risks))
    lines += _section("Open questions", _list(record.open_questions))
    lines += _section("Round-by-round summary", _round_summaries(record.round_summaries))
    lines += _section("Participation", _list(record.participation) or ["Every perspective took part throughout."])
    for earlier in record.continued:
        after = (earlier.continued_in_round or 1) - 1
        lines += _section(f"Escalation after round {after}, continued with guidance", _escalation(earlier))
    if record.escalation is not None:
        lines += _section("Escalation", _escalation(record.escalation))
    if record.moderator_draft.strip():
        lines += _section(
            "Moderator's draft (context only, not the decision)",
            [
                "_A person decided at the escalation; this is what the moderator had drafted before, kept for "
                "context._",
                "",
                markdown_block(record.moderator_draft),
            ],
        )
    if record.corrections:
        lines += _section("Corrections", _list(record.corrections))
    return lines


def render_adr(record: DecisionRecord) -> str:
    """The ADR of a deliberative debate, every section present (``_None recorded._`` when empty).

    Escalation, the moderator's draft (when a person decided) and Corrections appear only when the record has them;
    so does one "Escalation after round N, continued with guidance" section per escalation a person continued.
    """
    lines = _head(record)
    lines += _section("Perspectives", _perspectives(record.perspectives))
    lines += _section("Points of agreement", _list(record.agreement))
    lines += _section("Key tensions", _list(record.tensions))
    lines += _section("Recommendation", _recommendation(record.recommendation))
    rejected = [
        f"- **{markdown_inline(alt.option)}:** {markdown_inline(alt.reason) or '_no reason recorded_'}"
        for alt in record.rejected
    ]
    lines += _section("Rejected alternatives", rejected)
    lines += _section("Implementation notes", _list(record.implementation_notes))
    lines += _tail(record)
    return "\n".join(lines).rstrip() + "\n"


_SEVERITY_HEADINGS: dict[PatchSeverity, str] = {"BLOCKING": "BLOCKING", "HIGH": "HIGH", "MEDIUM-LOW": "MEDIUM/LOW"}


def render_patchlist(record: DecisionRecord) -> str:
    """A patchlist review: recommendation and confidence, the items by severity, then dissents, risks and open
    questions (no essay sections)."""
    lines = _head(record)
    rec = record.recommendation
    lines += _section("Recommendation", [markdown_block(rec.text) or NONE_RECORDED, "", *_caveats(rec)])
    lines += _section("Confidence", [_confidence_line(rec).removeprefix("**Confidence:** ")])
    for severity, heading in _SEVERITY_HEADINGS.items():
        items = []
        for item in record.patches:
            if item.severity != severity:
                continue
            change = f" → {markdown_inline(item.change)}" if item.change.strip() else ""
            raisers = f" (raised by: {markdown_inline(', '.join(item.raised_by))})" if item.raised_by else ""
            items.append(f"- **{markdown_inline(item.id)}** {markdown_inline(item.issue)}{change}{raisers}")
        lines += _section(heading, items)
    lines += _tail(record)
    return "\n".join(lines).rstrip() + "\n"


def render(record: DecisionRecord) -> str:
    """``render_patchlist`` or ``render_adr``, by ``record.mode``."""
    return render_patchlist(record) if record.mode == "patchlist" else render_adr(record)


# --- naming and writing ----------------------------------------------------------------------------

_ADR_NAME = re.compile(r"^(?:adr-)?(\d{4,})-.+\.md$", re.IGNORECASE)
_DATED_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}")  # 2024-05-01-notes.md is a date, not ADR 2024


def slugify(title: str, max_len: int = 50) -> str:
    """``title`` as a file-name slug: ASCII, lower case, words joined by dashes, at most ``max_len`` characters.

    Cut at a word boundary when possible; never empty (``decision``).

    Raises:
        ValueError: ``max_len`` is below 1.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1, got {max_len}")
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > max_len:
        cut = slug[: max_len + 1]
        slug = cut[: cut.rfind("-")] if "-" in cut[1:] else slug[:max_len]
        slug = slug.strip("-")
    return slug or "decision"


def _number_of(name: str) -> int | None:
    match = _ADR_NAME.match(name)
    if not match or _DATED_NAME.match(name):
        return None
    return int(match.group(1))


def next_adr_number(directory: Path) -> int:
    """One more than the highest number among ``adr-NNNN-*.md`` and ``NNNN-*.md`` (adr-tools) files; 1 when none."""
    folder = Path(directory)
    if not folder.is_dir():
        return 1
    numbers = [n for path in folder.iterdir() if (n := _number_of(path.name)) is not None]
    return max(numbers, default=0) + 1


def adr_filename(number: int, slug: str) -> str:
    """``adr-NNNN-slug.md``."""
    return f"adr-{number:04d}-{slugify(slug)}.md"


def write_adr(repo: Path, record: DecisionRecord, *, directory: str = "docs/decisions") -> Path:
    """Write the rendered record to ``<repo>/<directory>/adr-NNNN-slug.md`` and return that path.

    A ``record.number`` of 0 takes the next free number. An existing file is
    never overwritten, nor is a number reused: when the name or its number is
    taken (say, a concurrent debate got there first), the next number is used.

    Raises:
        OSError: the folder cannot be created or written.
    """
    folder = Path(repo) / directory
    folder.mkdir(parents=True, exist_ok=True)
    number = record.number or next_adr_number(folder)
    slug = record.slug or record.title
    for _ in range(10_000):
        taken = {n for path in folder.iterdir() if (n := _number_of(path.name)) is not None}
        if number in taken:
            number = max(number + 1, next_adr_number(folder))
            continue
        numbered = record.model_copy(update={"number": number, "slug": slugify(slug)})
        target = path_under(folder, adr_filename(number, slug), what="ADR")  # slugify keeps it one plain name
        if write_text_atomic(target, render(numbered), overwrite=False):
            return target
        number += 1
    raise OSError(f"no free ADR number in {folder}")
