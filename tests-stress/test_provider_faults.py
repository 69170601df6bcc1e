"""Provider faults, through litellm, against a fake OpenAI-compatible server on 127.0.0.1.

Every test drives the real path users take (``openai/<name>`` with ``llm.api_base``
pointing at ``tests.support.fake_provider.FakeProvider``): 429 with Retry-After,
500/503, timeouts, cut-off replies, malformed JSON and empty choices. The client
must retry within its budget with jittered backoff, honour Retry-After, count only
the answers that arrived, and a run whose provider stays down must exit 3 with a
session that ``--resume`` completes once the provider is back.
"""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import logging
import random
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.helpers import REPO, run_cli
from tests.support.fake_provider import (
    Behaviour,
    FakeProvider,
    answer,
    empty_choices,
    hang,
    malformed_json,
    status,
    truncated_body,
    truncated_stream,
)

from debatecode.config import LLMSettings
from debatecode.errors import ModelAuthError, ModelError, ModelRequestError, ModelUnreachable
from debatecode.llm import LLMClient, Message, TokenBudget
from debatecode.llm import retry as llm_retry

MODEL = "openai/fake-model"
PROMPT: list[Message] = [{"role": "user", "content": "hi"}]
ADD = str(REPO / "examples" / "tasks" / "add.md")


@pytest.fixture
def fake(allow_model_requests: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """A fake provider answering ``ok`` by default, reachable through litellm with a dummy key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-for-tests")
    with FakeProvider() as provider:
        yield provider


def settings_for(fake: FakeProvider, **overrides: float) -> LLMSettings:
    values: dict[str, float] = {"max_retries": 2, "retry_base_delay_s": 0.001, "request_timeout_s": 5.0} | overrides
    return LLMSettings(api_base=fake.api_base, max_tokens=32, **values)  # type: ignore[arg-type]


def gaps(fake: FakeProvider) -> list[float]:
    """Seconds between consecutive requests the fake provider received."""
    times = [r.at for r in fake.requests]
    return [later - earlier for earlier, later in itertools.pairwise(times)]


# --- one fault, then an answer: retried, and only the answer counts -------------------------------------------

FAULTS: dict[str, Behaviour] = {
    "429": status(429),
    "500": status(500),
    "503": status(503),
    "timeout": hang(5.0),
    "truncated_body": truncated_body(),
    "truncated_stream": truncated_stream(),
    "malformed_json": malformed_json(),
    "empty_choices": empty_choices(),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
async def test_a_fault_is_retried_and_only_the_answer_is_counted(fault: Behaviour, fake: FakeProvider) -> None:
    fake.enqueue(fault, answer("second time lucky", prompt_tokens=13, completion_tokens=5))
    client = LLMClient(settings_for(fake, request_timeout_s=0.5))
    budget = TokenBudget(10_000)

    reply = await client.complete(MODEL, PROMPT, budget=budget)

    assert reply.text == "second time lucky"
    assert [r.behaviour.kind for r in fake.requests] == [fault.kind, "answer"]
    assert (reply.prompt_tokens, reply.completion_tokens, reply.usage_estimated) == (13, 5, False)
    assert (client.usage.prompt_tokens, client.usage.completion_tokens, client.usage.calls) == (13, 5, 1)
    assert len(client.calls) == 1
    assert (budget.usage.prompt_tokens, budget.usage.completion_tokens, budget.usage.calls) == (13, 5, 1)


async def test_a_provider_that_stays_down_is_given_up_within_the_retry_budget(fake: FakeProvider) -> None:
    fake.default = status(503)
    client = LLMClient(settings_for(fake, max_retries=2))
    with pytest.raises(ModelError) as info:
        await client.complete(MODEL, PROMPT)
    assert len(fake.requests) == 3
    assert "kept failing with server errors after 3 attempts" in str(info.value)
    assert MODEL in str(info.value)
    assert client.usage.total_tokens == 0 and client.usage.calls == 0 and client.calls == []


async def test_timeouts_that_persist_end_as_unreachable_naming_the_server(fake: FakeProvider) -> None:
    fake.default = hang(60.0)  # cut short when the fake server closes
    client = LLMClient(settings_for(fake, max_retries=1, request_timeout_s=0.3))
    started = time.monotonic()
    with pytest.raises(ModelUnreachable) as info:
        await client.complete(MODEL, PROMPT)
    assert len(fake.requests) == 2
    # Waiting for the server would take 120 s; the bound leaves room for a loaded machine.
    assert time.monotonic() - started < 30.0, "each attempt stops at the request timeout, not when the server answers"
    assert "timeout" in str(info.value) and fake.api_base in str(info.value)
    assert client.usage.calls == 0


@pytest.mark.parametrize(("code", "error"), [(401, ModelAuthError), (400, ModelRequestError)])
async def test_auth_and_request_errors_are_not_retried(code: int, error: type[ModelError], fake: FakeProvider) -> None:
    fake.default = status(code)
    with pytest.raises(error):
        await LLMClient(settings_for(fake)).complete(MODEL, PROMPT)
    assert len(fake.requests) == 1


# --- Retry-After and backoff --------------------------------------------------------------------------------


async def test_retry_after_in_seconds_is_honoured(fake: FakeProvider) -> None:
    fake.enqueue(status(429, retry_after=0.6), answer())
    reply = await LLMClient(settings_for(fake, retry_base_delay_s=0.001)).complete(MODEL, PROMPT)
    assert reply.text == "ok"
    assert gaps(fake)[0] >= 0.6


async def test_retry_after_as_an_http_date_is_honoured(fake: FakeProvider) -> None:
    # HTTP dates have whole seconds: two seconds ahead is at least one second of wait.
    fake.enqueue(status(503, retry_after=email.utils.formatdate(time.time() + 2, usegmt=True)), answer())
    await LLMClient(settings_for(fake)).complete(MODEL, PROMPT)
    assert 0.9 <= gaps(fake)[0] < 5.0


async def test_a_retry_after_beyond_the_cap_waits_only_the_cap(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm_retry, "MAX_RETRY_AFTER_S", 0.3)
    fake.enqueue(status(429, retry_after=3600), answer())
    await LLMClient(settings_for(fake)).complete(MODEL, PROMPT)
    assert 0.3 <= gaps(fake)[0] < 3.0


async def test_backoff_doubles_with_jitter_on_top(fake: FakeProvider, caplog: pytest.LogCaptureFixture) -> None:
    base = 0.02
    fake.enqueue(*[status(500)] * 4, answer(), *[status(500)] * 4, answer())
    client = LLMClient(settings_for(fake, max_retries=4, retry_base_delay_s=base))
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.retry"):
        await client.complete(MODEL, PROMPT)
        await client.complete(MODEL, PROMPT)
    delays: list[float] = [r.args[-1] for r in caplog.records if r.name == "debatecode.llm.retry"]  # type: ignore[index,misc]
    nominal = [base * 2**n for n in range(4)] * 2
    assert len(delays) == 8
    for delay, expected in zip(delays, nominal, strict=True):
        assert expected <= delay <= 1.5 * expected
    assert len({round(d / e, 6) for d, e in zip(delays, nominal, strict=True)}) > 1, "the jitter varies"
    observed = gaps(fake)
    for gap, delay in zip(observed[:4] + observed[5:], delays, strict=True):
        assert gap >= delay * 0.95


# --- under load: concurrent calls with faults mixed in ------------------------------------------------------


async def test_concurrent_calls_through_faults_count_each_answer_once(fake: FakeProvider) -> None:
    faults = [status(429, retry_after=0.05), status(503), truncated_body(), malformed_json(), empty_choices()] * 4
    random.Random(15).shuffle(faults)
    fake.enqueue(*faults)
    calls = 30
    client = LLMClient(settings_for(fake, max_retries=len(faults), retry_base_delay_s=0.005))
    budget = TokenBudget(None)

    replies = await asyncio.gather(*(client.complete(MODEL, PROMPT, budget=budget) for _ in range(calls)))

    assert [r.text for r in replies] == ["ok"] * calls
    assert len(fake.requests) == calls + len(faults)
    assert sum(r.behaviour.kind == "answer" for r in fake.requests) == calls
    usage = client.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (11 * calls, 7 * calls, calls)
    assert budget.usage == client.usage


# --- the CLI: a provider that stays down, then comes back ---------------------------------------------------

REPLY = (
    "Adding is exact for Python ints.\n"
    "```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```\n"
    "Ranking: 1 > 2 > 3\nVote: Candidate 1\n"
)


def _db(cwd: Path) -> sqlite3.Connection:
    return sqlite3.connect(cwd / ".debatecode" / "debatecode.db")


def _model_turns(cwd: Path, session_id: str) -> list[tuple[str, str, int, int]]:
    """(id, key, prompt tokens, completion tokens) of every stored turn that came from a model."""
    with _db(cwd) as conn:
        rows = conn.execute(
            "select id, key, prompt_tokens, completion_tokens from debate_turns"
            " where session_id = ? and model = ? order by seq",
            (session_id, MODEL),
        ).fetchall()
    return [(str(a), str(b), int(c), int(d)) for a, b, c, d in rows]


def _session(cwd: Path) -> tuple[str, str, int, int, str | None]:
    with _db(cwd) as conn:
        sid, state, prompt, completion, error = conn.execute(
            "select id, status, prompt_tokens, completion_tokens, error from debate_sessions"
        ).fetchone()
    return str(sid), str(state), int(prompt), int(completion), error


@pytest.mark.slow
def test_solve_with_the_provider_down_exits_3_and_resume_completes(tmp_path: Path) -> None:
    with FakeProvider(default=status(503)) as fake:
        fake.enqueue(answer(REPLY))  # one call gets through before the provider goes down
        env = {
            "DEBATECODE_ALLOW_MODEL_REQUESTS": "1",
            "DEBATECODE_LLM__API_BASE": fake.api_base,
            "DEBATECODE_LLM__MAX_RETRIES": "1",
            "DEBATECODE_LLM__RETRY_BASE_DELAY_S": "0.01",
            "DEBATECODE_MEMORY__ENABLED": "false",
            "OPENAI_API_KEY": "sk-fake-for-tests",
        }
        args = ["solve", ADD, "--model", MODEL, "--sandbox", "local", "--agents", "2"]
        args += ["--phases", "proposal,convergence", "--no-checkpoints"]

        down = run_cli(*args, cwd=tmp_path, env=env, timeout=300)

        assert down.returncode == 3, down.stdout + down.stderr
        assert "kept failing with server errors after 2 attempts" in down.stderr
        assert "503" in down.stderr
        session_id, state, prompt, completion, error = _session(tmp_path)
        assert state == "failed" and error and "503" in error
        assert f"--resume {session_id}" in " ".join(down.stderr.split())
        kept = _model_turns(tmp_path, session_id)
        answered_down = sum(r.behaviour.kind == "answer" for r in fake.requests)
        assert len(kept) <= answered_down == 1
        # The answer that got through is billed even though its phase failed; the 503s count nothing.
        assert (prompt, completion) == (11 * answered_down, 7 * answered_down)

        fake.default = answer(REPLY)
        before = len(fake.requests)
        back = run_cli(*args, "--resume", session_id, cwd=tmp_path, env=env, timeout=300)

        assert back.returncode == 0, back.stdout + back.stderr
        assert f"resumed: {len(kept)} stored turns replayed" in back.stdout
        session_id_after, state, prompt, completion, error = _session(tmp_path)
        assert (session_id_after, state, error) == (session_id, "completed", None)
        turns = _model_turns(tmp_path, session_id)
        assert set(kept) <= set(turns), "the turns stored before the failure are kept as they were"
        assert len({key for _, key, _, _ in turns}) == len(turns), "no turn is stored twice"
        answered_back = sum(r.behaviour.kind == "answer" for r in fake.requests[before:])
        assert len(turns) - len(kept) == answered_back, "replayed turns are not asked again"
        answered = answered_down + answered_back
        assert (prompt, completion) == (11 * answered, 7 * answered), "each answer counted once, over both runs"
