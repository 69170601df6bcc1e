"""ADRs: rendering, numbering and writing, and the parsing of model-written synthesis."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from debatecode.protocol.design.adr import (
    NONE_RECORDED,
    bullets,
    dedupe_dissents,
    markdown_block,
    merge_patches,
    next_adr_number,
    parse_alternatives,
    parse_confidence,
    parse_patchlist,
    parse_risks,
    parse_sections,
    render,
    render_adr,
    render_patchlist,
    slugify,
    write_adr,
)
from debatecode.protocol.design.records import (
    DecisionRecord,
    Dissent,
    Escalation,
    EscalationOption,
    PatchItem,
    PerspectiveSummary,
    Recommendation,
    RejectedAlternative,
    RiskEntry,
)

ADR_SECTIONS = [
    "Question",
    "Context",
    "Perspectives",
    "Points of agreement",
    "Key tensions",
    "Recommendation",
    "Rejected alternatives",
    "Dissents",
    "Risk register",
    "Open questions",
]


def make_record(**changes: object) -> DecisionRecord:
    base = DecisionRecord(
        number=4,
        slug="redis-or-postgres",
        title="Redis or PostgreSQL for caching",
        date="2025-12-05",
        debate_id="DEB-abc123",
        question="Should we use Redis or PostgreSQL for caching?",
        context="A small team that already runs PostgreSQL.",
        perspectives=[
            PerspectiveSummary(
                name="Performance Advocate",
                key_arguments=["Redis answers in microseconds"],
                trade_offs="more moving parts",
                final_satisfaction=72,
            ),
            PerspectiveSummary(name="Operational Simplicity", key_arguments=["one database to run"]),
        ],
        agreement=["Caching is needed"],
        tensions=["Latency against operations"],
        recommendation=Recommendation(
            text="Use PostgreSQL UNLOGGED tables.",
            confidence="MEDIUM",
            confidence_reason="load numbers are estimates",
            caveats=["Revisit if p99 passes 5 ms"],
        ),
        rejected=[RejectedAlternative(option="Redis", reason="a second system to operate")],
        dissents=[Dissent(perspectives=["Security", "Contrarian"], text="cache poisoning is not addressed")],
        risks=[RiskEntry(risk="table bloat", likelihood="high", mitigation="tune autovacuum", owner="Operations")],
        open_questions=["What TTL?"],
        rounds=3,
        stop_reason="converged",
        scores={"Performance Advocate": 72, "Operational Simplicity": 95},
    )
    return base.model_copy(update=changes)


def empty_record() -> DecisionRecord:
    return DecisionRecord(
        number=1,
        slug="",
        title="Empty",
        date="2025-12-05",
        debate_id="d1",
        question="Q?",
        perspectives=[],
        recommendation=Recommendation(text="", confidence="LOW", confidence_reason=""),
    )


def headings(markdown: str) -> list[str]:
    return re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)


def section(markdown: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, flags=re.MULTILINE | re.DOTALL)
    assert match, f"no section {title!r}"
    return match.group(1).strip()


# --- rendering ---------------------------------------------------------------------------------------


def test_adr_has_title_metadata_and_every_section_in_order() -> None:
    text = render_adr(make_record())
    assert text.startswith("# ADR 0004: Redis or PostgreSQL for caching\n")
    for label in ("Status", "Date", "Debate ID", "Rounds", "Stop reason", "Perspectives", "Final satisfaction"):
        assert f"- **{label}:**" in text.split("## Question")[0]
    assert "Performance Advocate 72/100, Operational Simplicity 95/100" in text
    assert headings(text) == ADR_SECTIONS


def test_every_section_heading_is_present_even_when_empty() -> None:
    text = render_adr(empty_record())
    assert headings(text) == ADR_SECTIONS
    for title in ("Context", "Perspectives", "Points of agreement", "Key tensions", "Rejected alternatives"):
        assert section(text, title) == NONE_RECORDED
    for title in ("Dissents", "Risk register", "Open questions"):
        assert section(text, title) == NONE_RECORDED
    assert "**Caveats:** _none recorded._" in section(text, "Recommendation")


def test_perspectives_show_arguments_trade_offs_and_satisfaction() -> None:
    body = section(render_adr(make_record()), "Perspectives")
    assert "### Performance Advocate\n\n- Redis answers in microseconds" in body
    assert "**Trade-offs accepted:** more moving parts" in body
    assert "**Final satisfaction:** 72/100" in body
    assert "**Final satisfaction:** _not scored_" in body


def test_recommendation_confidence_dissents_and_risk_table() -> None:
    text = render_adr(make_record())
    rec = section(text, "Recommendation")
    assert rec.index("Use PostgreSQL") < rec.index("**Confidence:** MEDIUM — load numbers are estimates")
    assert rec.endswith("- Revisit if p99 passes 5 ms")
    assert section(text, "Rejected alternatives") == "- **Redis:** a second system to operate"
    assert section(text, "Dissents") == "- **Security, Contrarian:** cache poisoning is not addressed"
    table = section(text, "Risk register").splitlines()
    assert table[0] == "| Risk | Likelihood | Impact | Mitigation | Owner |"
    assert table[2] == "| table bloat | high | medium | tune autovacuum | Operations |"


def test_escalation_and_corrections_appear_only_when_present() -> None:
    assert "## Escalation" not in render_adr(make_record())
    escalation = Escalation(
        reason="stalemate: no progress in 3 rounds",
        positions={"Security": "encrypt the cache", "Performance Advocate": "no encryption"},
        options=[EscalationOption(label="A", text="encrypt"), EscalationOption(label="B", text="do not")],
    )
    text = render_adr(make_record(escalation=escalation, corrections=["Security's dissent restated"]))
    assert headings(text) == [*ADR_SECTIONS, "Escalation", "Corrections"]
    body = section(text, "Escalation")
    assert "- **Security:** encrypt the cache" in body
    assert "- **A.** encrypt" in body and "- **B.** do not" in body
    assert "**Choice:** no decision: non-interactive run" in body
    chosen = escalation.model_copy(update={"choice": "B", "decided_by": "human"})
    assert "**Choice:** B: do not (decided by human)" in render_adr(make_record(escalation=chosen))
    assert section(text, "Corrections") == "- Security's dissent restated"


def test_model_text_cannot_break_the_markdown_structure() -> None:
    hostile = "fine\n# Injected heading\n## Recommendation\n```\n<script>alert(1)</script>\nsetext\n==="
    record = make_record(
        question=hostile,
        agreement=["## not a heading"],
        risks=[RiskEntry(risk="a | b", mitigation="c|d", owner="x")],
        recommendation=Recommendation(text=hostile, confidence="HIGH", confidence_reason="# why"),
    )
    text = render_adr(record)
    assert headings(text) == ADR_SECTIONS
    lines = text.splitlines()
    assert all(not line.startswith("#") or line.startswith(("# ADR", "## ", "### ")) for line in lines)
    assert all(not line.lstrip().startswith(("```", "~~~", "<", "===")) for line in lines)
    assert "| a \\| b | medium | medium | c\\|d | x |" in text
    assert "\\# Injected heading" in text


def test_markdown_block_keeps_lists_and_defuses_block_syntax() -> None:
    out = markdown_block("- one\n1. two\n> quote\n---\n    indented code\n+ plus")
    assert out.splitlines() == ["- one", "1. two", "\\> quote", "\\---", "indented code", "- plus"]


def test_patchlist_has_severity_sections_and_no_essay_sections() -> None:
    patches = [
        PatchItem(id="B1", severity="BLOCKING", issue="no auth", change="add OAuth", raised_by=["Security", "Ops"]),
        PatchItem(id="M1", severity="MEDIUM-LOW", issue="typo"),
    ]
    text = render(make_record(mode="patchlist", patches=patches))
    assert headings(text) == [
        "Question",
        "Context",
        "BLOCKING",
        "HIGH",
        "MEDIUM/LOW",
        "Dissents",
        "Risk register",
        "Open questions",
    ]
    assert section(text, "BLOCKING") == "- **B1** no auth → add OAuth (raised by: Security, Ops)"
    assert section(text, "HIGH") == NONE_RECORDED
    assert section(text, "MEDIUM/LOW") == "- **M1** typo"
    assert render_patchlist(make_record(mode="patchlist", patches=patches)) == text


def test_render_dispatches_on_mode() -> None:
    assert render(make_record()) == render_adr(make_record())
    assert "## BLOCKING" in render(make_record(mode="patchlist"))


# --- naming, numbering, writing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Should we use Redis or PostgreSQL?", "should-we-use-redis-or-postgresql"),
        ("Ünïcödé façade", "unicode-facade"),
        ("###", "decision"),
        ("", "decision"),
        ("日本語", "decision"),
    ],
)
def test_slugify(title: str, expected: str) -> None:
    assert slugify(title) == expected


def test_slugify_cuts_at_a_word_boundary() -> None:
    slug = slugify("Should we use Redis or PostgreSQL for caching in the ingestion pipeline", max_len=30)
    assert slug == "should-we-use-redis-or"
    assert len(slugify("x" * 80, max_len=20)) == 20


def test_next_adr_number_follows_both_naming_styles(tmp_path: Path) -> None:
    assert next_adr_number(tmp_path / "missing") == 1
    assert next_adr_number(tmp_path) == 1
    for name in ("adr-0003-x.md", "0007-y.md", "2024-05-01-notes.md", "README.md", "adr-0009-z.txt"):
        (tmp_path / name).write_text("x")
    assert next_adr_number(tmp_path) == 8


def test_write_adr_numbers_after_existing_records(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "decisions"
    folder.mkdir(parents=True)
    (folder / "adr-0003-x.md").write_text("x")
    (folder / "0007-y.md").write_text("y")
    path = write_adr(tmp_path, make_record(number=0))
    assert path == folder / "adr-0008-redis-or-postgres.md"
    assert path.read_text().startswith("# ADR 0008: ")


def test_write_adr_creates_the_folder(tmp_path: Path) -> None:
    path = write_adr(tmp_path, make_record(number=0, slug=""), directory="adr")
    assert path == tmp_path / "adr" / "adr-0001-redis-or-postgresql-for-caching.md"
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_write_adr_never_overwrites_and_takes_the_next_number(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "decisions"
    folder.mkdir(parents=True)
    taken = folder / "adr-0004-redis-or-postgres.md"
    taken.write_text("somebody else's decision")
    path = write_adr(tmp_path, make_record(number=4))
    assert taken.read_text() == "somebody else's decision"
    assert path.name == "adr-0005-redis-or-postgres.md"
    assert path.read_text().startswith("# ADR 0005: ")
    again = write_adr(tmp_path, make_record(number=0))
    assert again.name == "adr-0006-redis-or-postgres.md"


# --- parsing -----------------------------------------------------------------------------------------

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
