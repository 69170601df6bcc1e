"""At the terminal, "Continue with guidance" at an escalation runs another round with the person's guidance.

The split of ``test_debate_escalation_cli``: the debaters hold their sides for two rounds and the debate
escalates. The person picks the last option, C ("Continue with guidance"), and types guidance. The debate then
runs round 3 with that guidance in every debater's prompt; there every debater is satisfied, so the gate
synthesizes. The ADR keeps the escalation the person continued, and the session's feed has one ``Escalated``
and one ``EscalationDecided``, emitted by the debate itself (no server involved).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import yaml
from tests.cli.test_debate_escalation_cli import (
    MAJORITY,
    MAJORITY_STANCE,
    MINORITY,
    MINORITY_STANCE,
    QUESTION,
    Terminal,
)

GUIDANCE = "measure the database under the sale-day load first"
SETTLED = "Keep PostgreSQL now and add Redis only if the sale-day measurement demands it"


def _speech(stance: str, target: str, satisfaction: int) -> str:
    return (
        f"Stance: {stance}.\n"
        "Reasons:\n- product pages are read far more often than they change\n"
        f"Challenge: {target}: the invalidation cost of cached prices needs numbers.\n"
        "Risks:\n- stale prices after an update\n"
        f"Satisfaction: {satisfaction}\nReady for synthesis: no\n"
    )


def _script(path: Path) -> Path:
    """Both sides hold until the escalation; in round 3, the guided round, every debater settles."""
    replies: list[dict[str, object]] = []
    for agent in (*MAJORITY, *MINORITY):
        target = "Performance" if agent in MINORITY else "Operational Simplicity"
        replies += [
            {"agent": agent, "round": 3, "content": _speech(SETTLED, target, 95)} for _ in range(4)
        ]  # listed first: a reply filtered on round 3 is taken before the unfiltered ones
    for agent in (*MAJORITY, *MINORITY):
        stance = MINORITY_STANCE if agent in MINORITY else MAJORITY_STANCE
        target = "Performance" if agent in MINORITY else "Operational Simplicity"
        replies += [{"agent": agent, "content": _speech(stance, target, 50)} for _ in range(12)]
    replies.append({"agent": "moderator", "phase": "synthesis", "content": f"## Recommendation\n- {SETTLED}.\n"})
    default = "Decision: whether to cache product pages.\nSummary: the sides hold their positions."
    path.write_text(yaml.safe_dump({"replies": replies, "default": default}, sort_keys=False))
    return path


def test_continue_with_guidance_at_the_terminal_runs_a_guided_round_that_settles_the_debate(tmp_path: Path) -> None:
    script = _script(tmp_path / "split.yaml")
    term = Terminal(["debate", QUESTION, "--model", f"scripted:{script}"], cwd=tmp_path)
    at = term.expect(r"\[C\]ontinue\s+\[G\]uide\s+\[E\]nd early", after=0)
    term.type("c\n")
    at = term.expect(r"Your decision \(Enter to leave it open\)", after=at)
    options = dict(re.findall(r"^\s*([A-Z])\) (.+)$", term.seen[:at], re.MULTILINE))
    assert set(options) == {"A", "B", "C"}, options
    assert options["C"].startswith("Continue with guidance: none of these as it stands; the debate runs one more")
    term.type("c\n")
    at = term.expect(r"Your guidance for the next round", after=at)
    term.type(f"{GUIDANCE}\n")
    code = term.finish()
    assert code == 0, term.seen[-3000:]
    assert "Your decision" not in term.seen[at:], "the guided round settled it: nobody is asked again"

    [adr] = (tmp_path / "docs" / "decisions").glob("adr-0001-*.md")
    text = adr.read_text()
    continued = text.split("\n## Escalation after round 2, continued with guidance\n")[1].split("\n## ")[0]
    assert "**Choice:** C: Continue with guidance" in continued and "(decided by human)" in continued
    assert f"**Guidance:** {GUIDANCE}" in continued
    assert "**Continued:** the debate ran round 3 with this guidance" in continued
    assert "\n## Escalation\n" not in text, "the guided round settled it: no escalation stands"
    recommendation = text.split("\n## Recommendation\n")[1].split("\n## ")[0]
    assert SETTLED in recommendation and "chosen by a person" not in recommendation
    rounds = text.split("\n## Round-by-round summary\n")[1].split("\n## ")[0]
    assert "**Round 3**" in rounds and f"Human guidance: {GUIDANCE}" in rounds

    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as db:
        guided = db.execute(
            "select key, prompt from debate_turns where round = 3 and phase in ('arguments', 'rebuttals')"
        ).fetchall()
        events = db.execute("select type, data from session_events order by id").fetchall()
    assert len(guided) == 2 * len(MAJORITY + MINORITY), "every debater argued and rebutted in round 3"
    assert all(GUIDANCE in prompt for _, prompt in guided), "the guidance is in every guided prompt"
    kinds = [kind for kind, _ in events]
    assert kinds.count("Escalated") == 1 and kinds.count("EscalationDecided") == 1
    escalated = json.loads(events[kinds.index("Escalated")][1])
    decided = json.loads(events[kinds.index("EscalationDecided")][1])
    assert escalated["awaiting"] is True and [o["label"] for o in escalated["options"]] == ["A", "B", "C"]
    assert decided["choice"] == "C" and decided["guidance"] == GUIDANCE and decided["decided_by"] == "human"
    assert kinds.index("Escalated") < kinds.index("EscalationDecided") < kinds.index("SessionFinished")
