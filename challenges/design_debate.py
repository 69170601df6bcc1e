"""A team argues a design question with `debatecode debate`: a convergence poll ends it in a decision record.

Scripted debaters all take the same stance at satisfaction 85 (below the
consensus target of 90) and ask for synthesis; once the minimum two rounds
are done the poll is taken, every debater answers yes, and the debate moves
to synthesis. The record has every section docs/design-debates.md promises.
"""

from __future__ import annotations

import re

import yaml

from challenges._harness import Journey, expect, write_config
from challenges._sessions import session_id_in, shown

NEEDS_DOCKER = False
QUESTION = "Should we cache product pages in Redis?"
"""Low complexity: two rounds planned, with Performance, Operational Simplicity, the four specialists every debate
has (Observability, Operations, Testability, Security), the Contrarian and the Moonshot."""
DEBATERS = 8
DEBATE_ID = re.compile(r"debate id ([0-9a-f]{12})")
SPEECH = """\
Stance: cache the rendered pages in Redis with a short TTL.
Reasons:
- the product pages are read far more than written
Challenge: Contrarian and Moonshot: the invalidation cost needs numbers.
Risks:
- stale prices after an update
Satisfaction: 85
Ready for synthesis: yes
"""
POLL_ANSWER = "Yes: the positions have converged on Redis with a short TTL."
ADR_SECTIONS = (
    "## Question",
    "## Context",
    "## Perspectives",
    "## Points of agreement",
    "## Key tensions",
    "## Recommendation",
    "## Rejected alternatives",
    "## Dissents",
    "## Risk register",
    "## Open questions",
)
"""The sections every decision record has (docs/design-debates.md, "The decision record")."""


def run(journey: Journey) -> str:
    script = {"replies": [{"content": POLL_ANSWER, "phase": "poll"}] * DEBATERS, "default": SPEECH}
    (journey.workdir / "debaters.yaml").write_text(yaml.safe_dump(script, sort_keys=False))
    write_config(journey)
    debated = journey.cli("debate", QUESTION, "--model", "scripted:debaters.yaml", "--no-checkpoints")
    output = debated.stdout + debated.stderr
    expect(debated.returncode == 0, f"debate exited {debated.returncode}", output)
    polled = [line for line in debated.stdout.splitlines() if line.strip().startswith("poll · ")]
    expect(len(polled) == DEBATERS, f"{len(polled)} poll answers shown, wanted {DEBATERS}", debated.stdout)
    verdict = f"synthesize: convergence poll: {DEBATERS}/{DEBATERS} yes"
    expect(verdict in debated.stdout, f"the gate reviewer's {verdict!r} is not shown", debated.stdout)

    records = sorted((journey.workdir / "docs" / "decisions").glob("adr-0001-*.md"))
    expect(len(records) == 1, f"{len(records)} decision records written, wanted adr-0001-*.md", output)
    expect(f"Decision record: {records[0]}" in "".join(debated.stdout.splitlines()), "the record is not named")
    adr = records[0].read_text()
    for section in ADR_SECTIONS:
        expect(section in adr, f"the decision record lacks {section}", adr)
    expect("**Stop reason:** convergence poll" in adr, "the record does not say the poll ended the debate", adr)
    expect("**Confidence:** MEDIUM" in adr, "a passed poll should give MEDIUM confidence", adr)
    rounds = re.search(r"\*\*Rounds:\*\* (\d+)", adr)
    expect(rounds is not None and int(rounds.group(1)) >= 2, "the record shows fewer than the 2 minimum rounds", adr)
    assert rounds is not None

    session_id = session_id_in(debated, DEBATE_ID)
    listed = journey.cli("debate", "--list")
    rows = [line for line in listed.stdout.splitlines() if session_id in line]
    expect(len(rows) == 1 and "completed" in rows[0], "debate --list does not show it completed", listed.stdout)
    expect("MEDIUM" in rows[0], "debate --list does not show its MEDIUM confidence", listed.stdout)
    document = shown(journey, session_id)
    expect(document["session"]["kind"] == "design", f"the session is of kind {document['session']['kind']}")
    votes = [turn for turn in document["turns"] if turn["phase"] == "poll"]
    expect(len(votes) == DEBATERS, f"{len(votes)} poll turns stored, wanted {DEBATERS}")
    return (
        f"debate {session_id}: poll {DEBATERS}/{DEBATERS} yes after {rounds.group(1)} rounds; "
        f"{records[0].name} with every section"
    )
