"""The live design-debate display shows what the gate reviewer flagged about speeches: off topic, muted."""

from __future__ import annotations

import io

from rich.console import Console

from debatecode.cli.debate_render import DebateRenderer
from debatecode.protocol.events import TurnCompleted
from debatecode.store.records import TurnRecord


def test_off_topic_and_muted_flags_are_shown() -> None:
    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200, color_system=None))
    flags = [
        {"kind": "off_topic", "detail": "moonshot's argument is off topic: 0% of its vocabulary with the debate"},
        {"kind": "muted", "detail": "moonshot went off topic 2 times in a row; muted for the rest of the debate"},
        {"kind": "converged", "detail": "every perspective at or above 90"},
    ]
    turn = TurnRecord(
        id="t1",
        session_id="s",
        seq=1,
        key="r1/gate/gate-reviewer/review",
        round=1,
        phase="gate",
        agent_id="gate-reviewer",
        agent_role="gate",
        content="continue",
        metadata={"flags": flags},
    )
    renderer(TurnCompleted("s", turn))
    shown = out.getvalue()
    assert "moonshot's argument is off topic" in shown and "muted for the rest of the debate" in shown
    assert "every perspective at or above 90" not in shown
