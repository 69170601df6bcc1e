"""Code fences in model replies, as markdown-it-py (CommonMark) finds them (llm/parsing.py code_fences)."""

from __future__ import annotations

from debatecode.llm.parsing import CodeFence, code_fences, extract_code
from debatecode.protocol.replies import python_blocks


def test_fences_carry_their_tag_code_and_whether_they_closed() -> None:
    reply = "Here:\n```Python3 title\nx = 1\n```\nthen\n```\ny = 2\n"
    assert code_fences(reply) == [
        CodeFence(tag="python3", code="x = 1\n", closed=True),
        CodeFence(tag="", code="y = 2\n", closed=False),
    ]


def test_a_heading_or_a_short_fence_inside_a_block_is_code() -> None:
    reply = "````python\n```\n## not a heading\n```\n````\n"
    assert code_fences(reply) == [CodeFence(tag="python", code="```\n## not a heading\n```\n", closed=True)]


def test_tildes_stay_text_and_a_fence_in_a_list_item_loses_the_items_indent() -> None:
    assert code_fences("~~~python\nx = 1\n~~~\n") == []
    reply = "1. The code:\n   ```python\n   def add(a, b):\n       return a + b\n   ```\n"
    assert extract_code(reply, entry_point="add") == "def add(a, b):\n    return a + b\n"


def test_python_blocks_takes_closed_blocks_only_and_not_backticks_in_a_sentence() -> None:
    text = "Reply in one ```python block.\n\n```python\nx = 1\n```\n\n```\nopen = True\n"
    assert python_blocks(text) == ["x = 1\n"]
