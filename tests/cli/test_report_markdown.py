"""Model text pasted into report.md stays text: no headings, rules, HTML or links of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")

HOSTILE = (
    "# Injected heading\n"
    "---\n"
    "<script>alert('report')</script>\n"
    "Setext injected\n"
    "===\n"
    "```\n"
    "````\n"
    "> injected quote\n"
    "[injected link](https://example.com/x) and *injected emphasis* | a pipe\n"
)
"""Markdown that would restructure the report if it were pasted in as is."""


def _script(tmp_path: Path) -> Path:
    """examples/replies/add.yaml with the hostile text in the Teacher's reply, an objection and a concern."""
    script: dict[str, Any] = yaml.safe_load((REPO / "examples" / "replies" / "add.yaml").read_text())
    for reply in script["replies"]:
        who = (reply.get("agent"), reply.get("kind"))
        if who == ("teacher", "explain"):
            reply["content"] = reply["content"] + "\n" + HOSTILE
        elif who == ("contrarian", "object"):
            reply["content"] = "Objection: nothing checks the types. " + HOSTILE.replace("\n", " ")
        elif who == ("contrarian", "review"):
            reply["content"] = reply["content"].replace(
                "1. No type validation for non-integer inputs.", "1. <b>No type validation</b> | # not a heading"
            )
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(script, sort_keys=False))
    return path


def test_model_text_cannot_restructure_the_report(tmp_path: Path) -> None:
    script = _script(tmp_path)
    proc = run_cli(
        "solve",
        ADD,
        "--model",
        f"scripted:{script}",
        "--sandbox",
        "local",
        "--out",
        "out",
        cwd=tmp_path,
        env=HASHING_MEMORY,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "out" / "report.md").read_text()

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = md.parse(report)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0] == "debatecode report: Add two numbers"
    assert not [h for h in headings if "njected" in h or "heading" in h], headings
    assert not [t for t in tokens if t.type == "hr"]
    assert not [t for t in tokens if t.type == "blockquote_open"]
    html = md.render(report)
    assert "<script" not in html and "<b>" not in html
    links = [c for t in tokens for c in t.children or [] if c.type == "link_open"]
    assert not [link for link in links if "example.com" in str(link.attrs.get("href"))]
    assert "<em>injected" not in html

    # The text itself is all there: in fences (the reply, the explanation) or escaped (the objection, the concern).
    fenced = [t.content for t in tokens if t.type == "fence"]
    assert sum(HOSTILE.strip() in block for block in fenced) == 2  # the transcript and "Reasoning (Teacher)"
    assert "<script>alert('report')</script>" in html.replace("&lt;", "<").replace("&gt;", ">").replace("&#x27;", "'")
    dissents = report.split("## Dissents", 1)[1].split("\n## ", 1)[0]
    assert "injected quote" in dissents and "\\# Injected heading" in dissents
    reviews = report.split("## Reviews", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in reviews.splitlines() if line.startswith("| 1 | contrarian")]
    assert rows == ["| 1 | contrarian | 80 | \\<b\\>No type validation\\</b\\> \\| \\# not a heading |"]
