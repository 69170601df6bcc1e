"""Question files: the front matter is read as in task files (issue 31, item 14: a UTF-8 BOM)."""

from __future__ import annotations

from pathlib import Path

from debatecode.protocol.design.question import load_question


def test_a_utf8_byte_order_mark_does_not_hide_the_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "question.md"
    path.write_bytes(b"\xef\xbb\xbf---\ntitle: Caching\nmode: patchlist\n---\nShould we cache pages in Redis?\n")
    question = load_question(str(path))
    assert question.title == "Caching"
    assert question.mode == "patchlist"
    assert question.text == "Should we cache pages in Redis?"
