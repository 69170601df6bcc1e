"""A person decides an escalated design debate at the terminal: the ADR records that choice as the decision.

``debatecode debate`` asks the person at the terminal (stdin and stdout a TTY, checkpoints on): Continue /
Guide / End after each round, and the options A, B, ... when the debate escalates. The test runs the real
console script in a pseudo-terminal, answers those prompts as a person would, and picks the MINORITY
position: the record's recommendation must be that option, decided by a person, with the moderator's
(majority) draft kept only as context.
"""

from __future__ import annotations

import os
import pty
import re
import select
import sqlite3
import subprocess
import time
from pathlib import Path

import yaml
from tests.cli.helpers import EXE, HASHING_MEMORY

QUESTION = "Should we cache product pages in Redis?"
MAJORITY = ("performance", "moonshot", "observability", "operations", "test", "security")
MINORITY = ("operational-simplicity", "contrarian")
MAJORITY_STANCE = "Add Redis in front of PostgreSQL for the product pages"
MINORITY_STANCE = "Keep everything in PostgreSQL and do not add Redis"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _speech(stance: str, target: str) -> str:
    return (
        f"Stance: {stance}.\n"
        "Reasons:\n- product pages are read far more often than they change\n"
        f"Challenge: {target}: the invalidation cost of cached prices needs numbers.\n"
        "Risks:\n- stale prices after an update\n"
        "Satisfaction: 50\nReady for synthesis: no\n"
    )


def _script(path: Path) -> Path:
    """Each debater holds its side in every speech; the moderator drafts the MAJORITY position."""
    replies: list[dict[str, object]] = []
    for agent in (*MAJORITY, *MINORITY):
        stance = MINORITY_STANCE if agent in MINORITY else MAJORITY_STANCE
        target = "Performance" if agent in MINORITY else "Operational Simplicity"
        replies += [{"agent": agent, "content": _speech(stance, target)} for _ in range(12)]
    replies.append(
        {
            "agent": "moderator",
            "phase": "synthesis",
            "content": f"## Recommendation\n- {MAJORITY_STANCE}, with a short TTL.\n## Points of agreement\n"
            "- Product pages are read-heavy\n",
        }
    )
    default = "Decision: whether to cache product pages.\nSummary: the sides hold their positions."
    path.write_text(yaml.safe_dump({"replies": replies, "default": default}, sort_keys=False))
    return path


class Terminal:
    """The console script in a pseudo-terminal: read what it prints, type answers."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
        env.update({**HASHING_MEMORY, "COLUMNS": "200", "LINES": "50", "TERM": "xterm", "NO_COLOR": "1"})
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [str(EXE), *args], cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
        )
        os.close(slave)
        self.seen = ""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        if not chunk:
            return False
        self.seen += ANSI.sub("", chunk.decode("utf-8", "replace"))
        return True

    def expect(self, pattern: str, *, after: int, timeout: float = 240) -> int:
        """Wait until ``pattern`` appears past offset ``after``; return the offset just past it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.compile(pattern).search(self.seen, after)
            if match:
                return match.end()
            if not self._read(0.5) and self.proc.poll() is not None:
                break
        raise AssertionError(f"never saw {pattern!r}; the terminal showed:\n{self.seen[-3000:]}")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 240) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.5)
        while self._read(0.1) and self.proc.poll() is not None and select.select([self.master], [], [], 0)[0]:
            pass
        code = self.proc.wait(timeout=5)
        os.close(self.master)
        return code


def test_the_person_picks_the_minority_option_and_the_adr_records_that_decision(tmp_path: Path) -> None:
    script = _script(tmp_path / "split.yaml")
    term = Terminal(["debate", QUESTION, "--model", f"scripted:{script}"], cwd=tmp_path)
    at = term.expect(r"\[C\]ontinue\s+\[G\]uide\s+\[E\]nd early", after=0)
    term.type("c\n")
    at = term.expect(r"Your decision \(Enter to leave it open\)", after=at)
    menu = term.seen[:at]
    options = dict(re.findall(r"^\s*([A-Z])\) (.+)$", menu, re.MULTILINE))
    assert set(options) == {"A", "B", "C"}, options
    assert MAJORITY_STANCE in options["A"] and MINORITY_STANCE in options["B"], "one option per opposing position"
    assert "Operational Simplicity" in options["B"] and "Contrarian" in options["B"]
    assert options["C"].startswith("Continue with guidance")
    term.type("b\n")
    term.expect(r"Anything the record should say about it", after=at)
    term.type("measure the database first\n")
    code = term.finish()
    assert code == 0, term.seen[-3000:]

    [adr] = (tmp_path / "docs" / "decisions").glob("adr-0001-*.md")
    text = adr.read_text()
    recommendation = text.split("\n## Recommendation\n")[1].split("\n## ")[0]
    assert recommendation.lstrip().startswith(f"Option B, chosen by a person at the escalation: {MINORITY_STANCE}")
    assert "The person added: measure the database first" in recommendation
    assert "**Confidence:** decided by a person at the escalation" in recommendation
    assert MAJORITY_STANCE not in recommendation
    draft = text.split("\n## Moderator's draft (context only, not the decision)\n")[1].split("\n## ")[0]
    assert MAJORITY_STANCE in draft, "the moderator's majority draft is kept, as context"
    assert "- **Status:** accepted" in text
    assert "**Choice:** B: Operational Simplicity, Contrarian: " in text and "(decided by human)" in text
    dissents = text.split("\n## Dissents\n")[1].split("\n## ")[0]
    assert MAJORITY_STANCE in dissents and "Performance" in dissents and "Contrarian" not in dissents

    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as db:
        [(outcome,)] = db.execute("select outcome from debate_sessions").fetchall()
    assert '"choice": "B"' in outcome and '"decided_by": "human"' in outcome
