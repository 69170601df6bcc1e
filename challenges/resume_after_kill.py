"""A power cut in the middle of a debate: `solve` is killed with SIGKILL, and `--resume` finishes it.

The model is a slow local OpenAI-compatible provider (every answer takes a
moment), so the debate is killed while it is asking, once some of its turns
are stored. ``solve --resume ID`` then completes it: the provider's request
log shows that no stored turn was asked again, and the report is written.
"""

from __future__ import annotations

import re
import signal
import sqlite3
import time
from pathlib import Path

from challenges._harness import REPO, Journey, expect, stop, write_config
from challenges._provider import ADD_REPLY, API_KEY_ENV, MODEL, FakeProvider
from challenges._sessions import model_turns, shown

NEEDS_DOCKER = True
ADD = str(REPO / "examples" / "tasks" / "add.md")
STARTED = re.compile(r"^session ([0-9a-f]{12}) · ", re.MULTILINE)
"""The first line ``solve`` prints: the session's id, which ``--resume`` takes."""
KILL_AFTER_TURNS = 8
"""Stored turns (of any kind) after which the debate is killed."""


def stored_turns(database: Path) -> int:
    """Turns in the SQLite store so far (0 while it is being created); read only, as an onlooker."""
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM debate_turns").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def run(journey: Journey) -> str:
    args = ["solve", ADD, "--model", MODEL, "--sandbox", "docker", "--no-checkpoints", "--out", "out"]
    database = journey.workdir / ".debatecode" / "debatecode.db"
    with FakeProvider(journey, ADD_REPLY, delay=0.3) as provider:
        # Without the early stop the whole debate runs: critique, review, optimization, adversarial.
        write_config(journey, provider.config(request_timeout_s=30), "[convergence]\nearly_stop = false\n")
        with journey.background(*args, name="killed-solve", env=API_KEY_ENV) as solving:
            deadline = time.monotonic() + 300
            while stored_turns(database) < KILL_AFTER_TURNS and solving.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            expect(solving.poll() is None, "solve ended before it could be killed", journey.output_of("killed-solve"))
            expect(stored_turns(database) >= KILL_AFTER_TURNS, f"no {KILL_AFTER_TURNS} turns stored within 300 s")
            status = stop(solving, signal.SIGKILL)
        expect(status == -signal.SIGKILL, f"solve ended with {status}, not by the SIGKILL")
        asked_before = provider.answered()

        started = STARTED.search(journey.output_of("killed-solve"))
        expect(started is not None, "the killed solve never printed its session", journey.output_of("killed-solve"))
        assert started is not None
        session_id = started.group(1)
        killed = shown(journey, session_id)
        expect(killed["session"]["status"] == "running", f"the killed session is {killed['session']['status']}")
        kept = {turn["id"]: turn["key"] for turn in model_turns(killed)}

        resumed = journey.cli(*args, "--resume", session_id, env=API_KEY_ENV)
        output = resumed.stdout + resumed.stderr
        expect(resumed.returncode == 0, f"the resumed solve exited {resumed.returncode}", output)
        replayed = f"resumed: {len(killed['turns'])} stored turns replayed"
        expect(replayed in resumed.stdout, f"the resume did not say {replayed!r}", resumed.stdout)
        asked_after = provider.answered() - asked_before

    done = shown(journey, session_id)
    turns = model_turns(done)
    expect(done["session"]["status"] == "completed", f"the resumed session is {done['session']['status']}")
    expect(all(kept.get(t["id"], t["key"]) == t["key"] for t in turns), "a stored turn changed on resume")
    expect(set(kept) <= {t["id"] for t in turns}, "turns stored before the kill were lost")
    keys = sorted(t["key"] for t in turns)
    expect(len(set(keys)) == len(keys), "a turn is stored twice", "\n".join(keys))
    missing = len(turns) - len(kept)
    expect(asked_after == missing, f"the resume asked the provider {asked_after} times for {missing} missing turns")
    report = (journey.workdir / "out" / "report.md").read_text()
    for section in ("## Final code", "## Chosen approach", "## Confidence"):
        expect(section in report, f"report.md lacks {section}")
    return (
        f"killed after {len(killed['turns'])} stored turns ({asked_before} answers given); "
        f"--resume asked {asked_after} for the {missing} missing model turns, none twice; report written"
    )
