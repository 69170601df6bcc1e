"""The history a debater is shown names each round by its own number (round 1's replies under "Round 1")."""

from __future__ import annotations

import re

from tests.protocol.design.conftest import DebateScript, DebateWorld

from debatecode.protocol.design.run import history_label
from debatecode.protocol.transcript import ContextWindow


def _sections(prompt: str) -> dict[str, str]:
    """``### heading`` → the text under it."""
    parts = re.split(r"^### (.+)$", prompt, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


async def test_round_two_shows_round_ones_replies_under_round_1(design_world: DebateWorld) -> None:
    result = await design_world.debate(script=DebateScript(satisfaction=95))
    assert result.status == "completed", result.error

    [call, *_] = design_world.last.of("arguments", round_no=2)
    prompt = str(call.messages[-1]["content"])
    sections = _sections(prompt)
    assert "Independent positions" in sections
    assert "Round 1" in sections, f"no 'Round 1' heading in: {list(sections)}"
    assert "Round 2" not in sections, "round 1's replies were labelled Round 2"
    # The fresh words of round 1 end in "1a" (arguments) and "1r" (rebuttals): they sit under "Round 1".
    assert re.search(r"\w+1a\b", sections["Round 1"]) and re.search(r"\w+1r\b", sections["Round 1"])
    assert not re.search(r"\w+1a\b", sections["Independent positions"])


def test_summarised_rounds_keep_their_design_names() -> None:
    window = ContextWindow(label=history_label)
    for n in range(1, 6):
        window.add_round([("Simplicity", "argument", f"Stance: option {n}.", 60 + n)])
    view = window.build(6)
    text = view.render()
    assert "- Independent positions (scores: Simplicity=61):" in text
    assert "- Round 1 (scores: Simplicity=62):" in text
    assert "### Round 4" in text and "### Round 3" in text and "### Round 5" not in text
