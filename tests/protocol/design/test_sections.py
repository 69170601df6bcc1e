"""Reading model-written markdown: sections, items, confidence, risks, alternatives, dissents and patchlists."""

from __future__ import annotations

import pytest

from debatecode.protocol.design.records import Dissent, RejectedAlternative, RiskEntry
from debatecode.protocol.design.sections import (
    bullets,
    dedupe_dissents,
    merge_patches,
    parse_alternatives,
    parse_confidence,
    parse_patchlist,
    parse_risks,
    parse_sections,
)

HEADED = """# Decision: Redis or Postgres

## Question
Redis or Postgres?

## Perspectives Considered
### Performance Advocate
- latency matters
### Operational Simplicity
- one system

## Points of Agreement
- Caching is needed
- Common ground on **TTL-based** expiry

## Key Tensions
- Latency vs operations

## Recommendation
Use Postgres.

### Confidence
Medium — estimates only

## Rejected Alternatives
- Redis: a second system

## Dissenting Views
- Security: poisoning

## Risk Register
| Risk | Likelihood | Impact | Mitigation | Owner |
|---|---|---|---|---|
| Bloat | high | low | vacuum | Ops |

## Open Questions
- What TTL?
"""

BOLD = """Here is my synthesis.

**Recommendation:** Adopt REST for the public API.
**Confidence:** high (all perspectives converged)
**Caveats:**
- Revisit if clients need joins
**Rejected alternatives:**
- GraphQL (rejected because the team lacks experience)
**Dissent(s):**
- Contrarian: REST will sprawl
**Risks:**
- Over-fetching — likelihood: high, impact: low — mitigation: sparse fieldsets
"""

PLAIN = """Recommendation: use a monorepo.
Confidence: LOW because nobody measured the build times
Open questions: how large will it get?
"""


def test_parse_sections_reads_headings_and_keeps_subheadings_inside() -> None:
    sections = parse_sections(HEADED)
    for key in ("question", "perspectives", "agreement", "tensions", "recommendation", "confidence"):
        assert key in sections
    for key in ("rejected", "dissents", "risks", "open_questions"):
        assert key in sections
    assert sections["recommendation"] == "Use Postgres."
    assert "### Operational Simplicity" in sections["perspectives"]
    assert sections["confidence"] == "Medium — estimates only"


def test_parse_sections_reads_bold_labels_with_text_on_the_same_line() -> None:
    sections = parse_sections(BOLD)
    assert sections["preamble"] == "Here is my synthesis."
    assert sections["recommendation"] == "Adopt REST for the public API."
    assert sections["confidence"] == "high (all perspectives converged)"
    assert bullets(sections["caveats"]) == ["Revisit if clients need joins"]
    assert bullets(sections["dissents"]) == ["Contrarian: REST will sprawl"]


def test_parse_sections_reads_plain_labels_and_tolerates_missing_sections() -> None:
    sections = parse_sections(PLAIN)
    assert sections == {
        "recommendation": "use a monorepo.",
        "confidence": "LOW because nobody measured the build times",
        "open_questions": "how large will it get?",
    }
    assert "risks" not in sections
    assert parse_sections("") == {}


def test_parse_sections_ignores_headings_inside_code_fences_and_unknown_labels() -> None:
    text = "## Recommendation\nDo X.\n```\n## Risks\n```\nNote: keep it small.\n## Risks\n- r1"
    sections = parse_sections(text)
    assert "## Risks" in sections["recommendation"]
    assert "Note: keep it small." in sections["recommendation"]
    assert sections["risks"] == "- r1"


def test_parse_sections_reads_values_inside_headings_and_bold_labels() -> None:
    text = "# Decision: Which risk model\nintro\n## Recommendation: Use Postgres\n**Confidence: HIGH** — measured\n"
    text += "## 2. Dissent(s)\n- Security: no"
    assert parse_sections(text) == {
        "decision_which_risk_model": "intro",  # a document title, not a section named by its topic
        "recommendation": "Use Postgres",
        "confidence": "HIGH — measured",
        "dissents": "- Security: no",
    }


def test_bullets_lists_tables_sentences_and_placeholders() -> None:
    assert bullets("- **one**\n- two\n  continued\n* _three_") == ["one", "two continued", "three"]
    assert bullets("1. first\n2) second") == ["first", "second"]
    assert bullets("First point. Second point! Third?") == ["First point.", "Second point!", "Third?"]
    assert bullets("| a | b |\n|---|---|\n| x | y |") == ["x — y"]
    assert bullets("- None\n- N/A") == []
    assert bullets("None.") == []
    assert bullets("- keeps snake_case_names") == ["keeps snake_case_names"]


@pytest.mark.parametrize(
    ("text", "level", "reason"),
    [
        ("HIGH — all perspectives agree", "HIGH", "all perspectives agree"),
        ("**Confidence:** medium (estimates only)", "MEDIUM", "estimates only"),
        ("confidence level: Low; nobody measured it", "LOW", "nobody measured it"),
        ("The low-latency path wins. High confidence: the benchmarks agree.", "HIGH", "the benchmarks agree."),
        ("At low load it works; Confidence: MEDIUM", "MEDIUM", ""),
    ],
)
def test_parse_confidence(text: str, level: str, reason: str) -> None:
    assert parse_confidence(text) == (level, reason)


def test_parse_confidence_without_a_level() -> None:
    assert parse_confidence("we are fairly sure") == (None, "")


def test_parse_risks_from_a_table_with_reordered_columns() -> None:
    table = "| Owner | Risk | Impact | Likelihood | Mitigation |\n|--|--|--|--|--|\n| Ops | Bloat | low | critical | vacuum |\n| | Cold start | | | — |"
    assert parse_risks(table, "Moderator") == [
        RiskEntry(risk="Bloat", likelihood="high", impact="low", mitigation="vacuum", owner="Ops"),
        RiskEntry(risk="Cold start", owner="Moderator"),
    ]


def test_parse_risks_from_dash_lines_and_plain_bullets() -> None:
    section_text = (
        "- Over-fetching — likelihood: high, impact: low — mitigation: sparse fieldsets\n"
        "- Versioning pain — medium/high — URL versioning (owner: Future Flexibility)\n"
        "- Vendor lock-in"
    )
    assert parse_risks(section_text, "Contrarian") == [
        RiskEntry(
            risk="Over-fetching", likelihood="high", impact="low", mitigation="sparse fieldsets", owner="Contrarian"
        ),
        RiskEntry(
            risk="Versioning pain",
            likelihood="medium",
            impact="high",
            mitigation="URL versioning",
            owner="Future Flexibility",
        ),
        RiskEntry(risk="Vendor lock-in", owner="Contrarian"),
    ]


def test_parse_alternatives_in_every_shape() -> None:
    text = (
        "- GraphQL: because the team lacks experience\n"
        "- gRPC — browsers need a proxy\n"
        "- SOAP (rejected because it is verbose)\n"
        "- Thrift was rejected because nobody knows it\n"
        "- CORBA"
    )
    assert parse_alternatives(text) == [
        RejectedAlternative(option="GraphQL", reason="the team lacks experience"),
        RejectedAlternative(option="gRPC", reason="browsers need a proxy"),
        RejectedAlternative(option="SOAP", reason="it is verbose"),
        RejectedAlternative(option="Thrift", reason="nobody knows it"),
        RejectedAlternative(option="CORBA", reason=""),
    ]


def test_dedupe_dissents_merges_holders_in_first_seen_order() -> None:
    dissents = [
        Dissent(perspectives=["Security"], text="The cache is not encrypted at rest."),
        Dissent(perspectives=["Performance"], text="Latency budget is too tight."),
        Dissent(perspectives=["Contrarian", "Security"], text="the cache is NOT encrypted at rest"),
        Dissent(perspectives=["Moonshot"], text="The cache is not encrypted at rest today."),
    ]
    merged = dedupe_dissents(dissents)
    assert merged == [
        Dissent(perspectives=["Security", "Contrarian", "Moonshot"], text="The cache is not encrypted at rest."),
        Dissent(perspectives=["Performance"], text="Latency budget is too tight."),
    ]


def test_dedupe_dissents_keeps_different_ones_apart() -> None:
    dissents = [
        Dissent(perspectives=["A"], text="missing index on the users table"),
        Dissent(perspectives=["B"], text="missing index on the orders table"),
    ]
    assert len(dedupe_dissents(dissents)) == 2


PATCHLIST = """**BLOCKING:**
- B1: No auth on /admin → add OAuth scopes
**HIGH:**
- H1: Missing index -> add an index on user_id
  (the join scans 10M rows)
**MEDIUM/LOW:**
- M1: Typos in the docs
- None
H7: a prefixed item outside its heading
## Notes
- not a patch item
**Summary:**
- not one either
"""


def test_parse_patchlist_reads_headings_prefixes_and_arrows() -> None:
    items = parse_patchlist(PATCHLIST, "Security")
    assert [(i.id, i.severity, i.issue, i.change) for i in items] == [
        ("B1", "BLOCKING", "No auth on /admin", "add OAuth scopes"),
        ("H1", "HIGH", "Missing index", "add an index on user_id (the join scans 10M rows)"),
        ("H2", "HIGH", "a prefixed item outside its heading", ""),
        ("M1", "MEDIUM-LOW", "Typos in the docs", ""),
    ]
    assert all(i.raised_by == ["Security"] for i in items)


def test_parse_patchlist_with_markdown_headings() -> None:
    text = "## Blocking\n- Data loss on restart -> fsync the journal\n### Medium / Low\n- naming"
    items = parse_patchlist(text, "Ops")
    assert [(i.id, i.issue, i.change) for i in items] == [
        ("B1", "Data loss on restart", "fsync the journal"),
        ("M1", "naming", ""),
    ]


def test_merge_patches_dedupes_merges_raisers_and_renumbers_by_severity() -> None:
    security = parse_patchlist("HIGH:\n- Missing index -> add index\n- Typos", "Security")
    ops = parse_patchlist("BLOCKING:\n- missing INDEX. -> other change\nHIGH:\n- No backups", "Ops")
    merged = merge_patches([security, ops])
    assert [(i.id, i.severity, i.issue, i.raised_by) for i in merged] == [
        ("B1", "BLOCKING", "Missing index", ["Security", "Ops"]),
        ("H1", "HIGH", "Typos", ["Security"]),
        ("H2", "HIGH", "No backups", ["Ops"]),
    ]
    assert merged[0].change == "add index"
