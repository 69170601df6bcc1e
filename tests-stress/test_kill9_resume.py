"""kill -9 under load, then ``--resume``: no stored turn lost or changed, and no turn asked twice.

Several real ``debatecode solve`` processes run at once against one SQLite store,
each with its own fake OpenAI-compatible provider (``FakeProvider``) that answers
after a delay, so model calls are in flight when the processes are SIGKILLed
(each once some of its turns are stored). Each session is then resumed with
``debatecode solve --resume``, all at once again. The fake providers saw every
model request, so "asked twice" is checked where it would happen: every request
of a resume must have become exactly one new stored turn with the same prompt,
so none of them can have asked again for a turn stored before the kill.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import EXE, REPO, run_cli
from tests.support.fake_provider import FakeProvider, ReceivedRequest, answer

pytestmark = pytest.mark.slow

RUNS = 3
MODEL = "openai/fake-model"
ADD = str(REPO / "examples" / "tasks" / "add.md")
DELAY_S = 0.4
KILL_AFTER_TURNS = 4
REPLY = (
    "Adding is exact for Python ints, so the operator is all we need.\n"
    "```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```\n"
    "Satisfaction: 95\nRanking: 1 > 2 > 3\nVote: Candidate 1\n"
)
SOLVE = ["solve", ADD, "--model", MODEL, "--sandbox", "local", "--no-checkpoints"]
SOLVE += ["--agents", "2", "--phases", "proposal,critique,review,convergence"]
ENV = {
    "DEBATECODE_ALLOW_MODEL_REQUESTS": "1",
    "DEBATECODE_MEMORY__ENABLED": "false",
    "DEBATECODE_CONVERGENCE__EARLY_STOP": "false",  # every run goes through critique and review
    "OPENAI_API_KEY": "sk-fake-for-tests",
}
TURN_COLUMNS = "id, seq, key, agent_id, model, prompt, content, code, status, prompt_tokens, completion_tokens"


def slow_reply(body: dict[str, Any]) -> str:
    time.sleep(DELAY_S)  # the fake provider serves each request on its own thread
    return REPLY


def prompt_of(request: ReceivedRequest) -> str:
    """The request's messages as the engine stores a chat prompt (``Prompt.text``)."""
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in request.body.get("messages", []))


def answered(requests: list[ReceivedRequest]) -> Counter[str]:
    return Counter(prompt_of(r) for r in requests if r.behaviour.kind == "answer")


def env_for(fake: FakeProvider) -> dict[str, str]:
    return {**ENV, "DEBATECODE_LLM__API_BASE": fake.api_base}


def start_solve(cwd: Path, out: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``debatecode solve`` in the background, with the clean environment of ``run_cli`` plus ``env``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    full.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", **env})
    command = [str(EXE), *SOLVE, "--out", out]
    return subprocess.Popen(command, cwd=cwd, env=full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Store:
    """Read-only looks into the shared SQLite store, tolerant of it not existing yet."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def rows(self, query: str, *params: object) -> list[tuple[Any, ...]]:
        if not self.path.exists():
            return []
        with sqlite3.connect(self.path, timeout=30) as conn:
            try:
                return list(conn.execute(query, params))
            except sqlite3.OperationalError:
                return []  # the schema is still being created

    def session_of(self, out: Path) -> str | None:
        found = self.rows("select id from debate_sessions where out_dir = ?", str(out.resolve()))
        return str(found[0][0]) if found else None

    def turns(self, session_id: str) -> list[tuple[Any, ...]]:
        return self.rows(f"select {TURN_COLUMNS} from debate_turns where session_id = ? order by seq", session_id)

    def status(self, session_id: str) -> str:
        return str(self.rows("select status from debate_sessions where id = ?", session_id)[0][0])


@pytest.fixture
def providers() -> Iterator[list[FakeProvider]]:
    """One slow fake provider per run, so that every request is known to come from its run."""
    with ExitStack() as stack:
        yield [stack.enter_context(FakeProvider(default=answer(slow_reply))) for _ in range(RUNS)]


def kill_each_mid_debate(procs: list[subprocess.Popen[bytes]], outs: list[Path], store: Store) -> list[str]:
    """SIGKILL each process once its session has stored ``KILL_AFTER_TURNS`` turns; the session ids."""
    sessions: list[str | None] = [None] * len(procs)
    killed = [False] * len(procs)
    deadline = time.monotonic() + 300
    try:
        while not all(killed) and time.monotonic() < deadline:
            for i, proc in enumerate(procs):
                if killed[i]:
                    continue
                assert proc.poll() is None, f"run {i} ended (exit {proc.returncode}) before it could be killed"
                session = sessions[i] = sessions[i] or store.session_of(outs[i])
                if session and len(store.turns(session)) >= KILL_AFTER_TURNS:
                    os.kill(proc.pid, signal.SIGKILL)
                    killed[i] = True
            time.sleep(0.05)
    finally:
        for proc in procs:  # on the way out of a failed wait too: no debatecode process outlives the test
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
    assert all(killed), f"only {sum(killed)} of {len(procs)} runs stored {KILL_AFTER_TURNS} turns in time"
    assert [proc.returncode for proc in procs] == [-signal.SIGKILL] * len(procs)
    return [s for s in sessions if s is not None]


def test_kill_9_under_load_then_resume_loses_and_repeats_no_turn(tmp_path: Path, providers: list[FakeProvider]) -> None:
    store = Store(tmp_path / ".debatecode" / "debatecode.db")
    outs = [tmp_path / f"out-{i}" for i in range(RUNS)]
    procs = [start_solve(tmp_path, out.name, env_for(fake)) for out, fake in zip(outs, providers, strict=True)]

    sessions = kill_each_mid_debate(procs, outs, store)

    time.sleep(1.0)  # let requests the killed processes sent reach their providers before counting
    before = [len(fake.requests) for fake in providers]
    kept = [store.turns(session) for session in sessions]
    for session, turns in zip(sessions, kept, strict=True):
        assert store.status(session) == "running", "a killed session is left running, not half-written"
        assert len(turns) >= KILL_AFTER_TURNS, session
    for fake in providers:
        fake.default = answer(REPLY)  # no delay now: the resumes only have to finish

    with ThreadPoolExecutor(RUNS) as pool:
        resumed = list(
            pool.map(
                lambda job: run_cli(*SOLVE, "--resume", job[0], cwd=tmp_path, env=env_for(job[1]), timeout=300),
                zip(sessions, providers, strict=True),
            )
        )

    for i, (session, fake, old, proc) in enumerate(zip(sessions, providers, kept, resumed, strict=True)):
        assert proc.returncode == 0, f"run {i}: {proc.stdout}\n{proc.stderr}"
        assert f"resumed: {len(old)} stored turns replayed" in proc.stdout
        assert store.status(session) == "completed"
        after = store.turns(session)
        assert [t for t in after if t[0] in {k[0] for k in old}] == old, f"run {i}: a stored turn was lost or changed"
        keys = [t[2] for t in after]
        assert len(set(keys)) == len(keys), f"run {i}: a turn is stored twice"
        assert [t[1] for t in after] == list(range(1, len(after) + 1)), f"run {i}: gaps or repeats in seq"
        assert len(old) < len(after), f"run {i} was killed after its last turn, not mid-debate"
        assert any(t[2].split("/")[1] == "review" for t in after), f"run {i}: the debate did not run to its end"

        # The providers' view: what was asked before the kill and after it.
        old_prompts = Counter(t[5] for t in old if t[4] == MODEL)
        new_prompts = Counter(t[5] for t in after if t[4] == MODEL and t[0] not in {k[0] for k in old})
        asked_before, asked_after = answered(fake.requests[: before[i]]), answered(fake.requests[before[i] :])
        assert old_prompts and old_prompts <= asked_before, f"run {i}: stored prompts do not match the requests"
        # A stored turn asked again would be a request of the resume without a new turn of its own.
        assert asked_after == new_prompts, f"run {i}: a request of the resume did not become exactly one new turn"
