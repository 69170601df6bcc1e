"""ADRs: rendering, numbering and writing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from debatecode.protocol.design.adr import (
    NONE_RECORDED,
    markdown_block,
    next_adr_number,
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

from .conftest import ADR_SECTIONS


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
    assert headings(text) == list(ADR_SECTIONS)


def test_every_section_heading_is_present_even_when_empty() -> None:
    text = render_adr(empty_record())
    assert headings(text) == list(ADR_SECTIONS)
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
    assert headings(text) == list(ADR_SECTIONS)
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
        "Recommendation",
        "Confidence",
        "BLOCKING",
        "HIGH",
        "MEDIUM/LOW",
        "Dissents",
        "Risk register",
        "Open questions",
        "Round-by-round summary",
        "Participation",
    ]
    assert section(text, "Recommendation").startswith("Use PostgreSQL UNLOGGED tables.")
    assert section(text, "Confidence").startswith("MEDIUM")
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
