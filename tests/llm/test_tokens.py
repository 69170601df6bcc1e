"""Token accounting (``debatecode.llm.tokens``): exact counts per provider, context windows, fitting prompts."""

from __future__ import annotations

import importlib.util
import logging
import re
import time
from pathlib import Path

import pytest
from llm_fakes import FakeTransport

from debatecode.config import LLMSettings
from debatecode.errors import ModelRequestError
from debatecode.llm import LLMClient, Message, ScriptedModel, local, register_scripted, tokens
from debatecode.llm.tokens import context_window, count_tokens, fit_messages
from debatecode.llm.types import estimate_tokens
from debatecode.protocol.transcript import ContextWindow

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
requires_llama = pytest.mark.skipif(
    not HAS_LLAMA, reason="llama-cpp-python is not installed (pip install 'debatecode[local]')"
)
QWEN = "local/qwen2.5-coder-0.5b"
GEMMA = "local/gemma-3-270m"
API = "openai/gpt-4o-mini"
CHAT: list[Message] = [
    {"role": "system", "content": "You are an expert Python programmer."},
    {"role": "user", "content": "Write `def add(a, b)` returning a + b, in one ```python block."},
]
LONG = "\n".join(f"line {i}: total = compute(total, {i}) + offset[{i % 7}]" for i in range(3000))
MARKER = re.compile(r"\[… (\d+) tokens of message (\d+) \((\w+)\) dropped to fit the (\d+)-token window …\]")


def _small_window(monkeypatch: pytest.MonkeyPatch, window: int) -> None:
    """Give every litellm model a ``window``-token context (fitting is then cheap to reach)."""
    monkeypatch.setattr(tokens, "_litellm_window", lambda model: window)


# --- exact counts on the embedded models ------------------------------------------------------------


@pytest.mark.local_model
@requires_llama
async def test_a_local_chat_call_reports_exactly_the_counted_prompt_tokens() -> None:
    async with LLMClient() as client:
        reply = await client.complete(QWEN, CHAT, max_tokens=8, temperature=0.0)
    counted = count_tokens(QWEN, CHAT)
    reported = local.generate_local("qwen2.5-coder-0.5b", CHAT, max_tokens=1, temperature=0.0).prompt_tokens
    assert reply.prompt_tokens == counted == reported
    assert client.calls == [reply] and not reply.usage_estimated and reply.dropped == ()

    started = time.perf_counter()
    for _ in range(20):
        count_tokens(QWEN, CHAT)
    short = (time.perf_counter() - started) / 20
    started = time.perf_counter()
    long_count = count_tokens(QWEN, [CHAT[0], {"role": "user", "content": LONG}])
    print(
        f"count_tokens({QWEN}): {short * 1000:.2f} ms for {counted} tokens, "
        f"{(time.perf_counter() - started) * 1000:.1f} ms for {long_count} tokens"
    )


@pytest.mark.local_model
@requires_llama
async def test_a_local_completion_style_call_reports_exactly_the_counted_prompt_tokens() -> None:
    messages: list[Message] = [{"role": "user", "content": 'def add(a, b):\n    """Return a + b."""\n'}]
    async with LLMClient() as client:
        reply = await client.complete(GEMMA, messages, max_tokens=4, temperature=0.0)
    reported = local.generate_local("gemma-3-270m", messages, max_tokens=1, temperature=0.0).prompt_tokens
    assert reply.prompt_tokens == count_tokens(GEMMA, messages) == reported
    assert count_tokens(GEMMA, messages) == count_tokens(GEMMA, local.messages_to_prompt(messages))


def test_local_windows_come_from_the_model_specs() -> None:
    assert context_window(QWEN) == 8192
    assert context_window(GEMMA) == 4096
    assert context_window("local/no-such-model") is None


# --- fitting ------------------------------------------------------------------------------------------


@pytest.mark.local_model
@requires_llama
def test_a_prompt_far_over_the_local_window_is_cut_in_the_middle_to_fit() -> None:
    messages: list[Message] = [CHAT[0], {"role": "user", "content": LONG + "\nNow write add(a, b)."}]
    assert count_tokens(QWEN, messages) > 2 * 8192

    fitted = fit_messages(QWEN, messages, 512)

    assert fitted.prompt_tokens == count_tokens(QWEN, fitted.messages) <= 8192 - 512
    assert fitted.messages[0] == CHAT[0]
    content = fitted.messages[1]["content"]
    assert content.startswith("line 0: ") and content.endswith(
        "line 2999: total = compute(total, 2999) + offset[3]\nNow write add(a, b)."
    )
    marker = MARKER.search(content)
    assert marker is not None and marker.group(2, 3, 4) == ("2", "user", "8192")
    dropped = int(marker.group(1))
    assert dropped > count_tokens(QWEN, messages) - 8192
    assert len(fitted.dropped) == 1 and fitted.dropped[0].startswith(f"dropped {dropped} of ")
    assert "message 2 (user)" in fitted.dropped[0] and "512 reserved for the reply" in fitted.dropped[0]
    assert fit_messages(QWEN, messages, 512) == fitted  # deterministic


@pytest.mark.local_model
@requires_llama
async def test_the_client_sends_the_fitted_local_prompt_and_reports_the_cut(caplog: pytest.LogCaptureFixture) -> None:
    transport = FakeTransport(prompt_tokens=None, completion_tokens=None)
    messages: list[Message] = [CHAT[0], {"role": "user", "content": LONG}]
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.client"):
        reply = await LLMClient(transport=transport).complete(QWEN, messages, max_tokens=256)
    sent = transport.requests[0].messages
    assert MARKER.search(sent[1]["content"]) is not None
    assert reply.prompt_tokens == count_tokens(QWEN, sent) <= 8192 - 256
    assert reply.dropped == tuple(fit_messages(QWEN, messages, 256).dropped) and len(reply.dropped) == 1
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == list(reply.dropped)


async def test_the_client_fits_an_api_prompt_to_a_known_window(monkeypatch: pytest.MonkeyPatch) -> None:
    _small_window(monkeypatch, 1000)
    transport = FakeTransport()
    messages: list[Message] = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": LONG[:2000]},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": LONG[-6000:]},
    ]
    reply = await LLMClient(transport=transport).complete(API, messages, max_tokens=100)
    sent = transport.requests[0].messages
    assert count_tokens(API, sent) <= 900
    assert [m["content"] for m in sent[:3]] == [m["content"] for m in messages[:3]]  # only the longest is cut
    assert MARKER.search(sent[3]["content"]).group(2, 3, 4) == ("4", "user", "1000")  # type: ignore[union-attr]
    assert len(reply.dropped) == 1 and "message 4 (user)" in reply.dropped[0]


def test_a_prompt_that_cannot_fit_is_a_request_error_that_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    _small_window(monkeypatch, 300)
    huge_system: list[Message] = [{"role": "system", "content": LONG}, {"role": "user", "content": LONG}]
    with pytest.raises(ModelRequestError, match=r"does not fit its 300-token context window.*Shorten") as info:
        fit_messages(API, huge_system, 50)
    assert info.value.model == API
    with pytest.raises(ModelRequestError, match=r"Lower llm\.max_tokens"):
        fit_messages(API, CHAT, 300)


def test_a_prompt_that_fits_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    _small_window(monkeypatch, 1000)
    fitted = fit_messages(API, CHAT, 100)
    assert (fitted.messages, fitted.prompt_tokens, fitted.dropped) == (CHAT, count_tokens(API, CHAT), [])


async def test_scripted_models_have_no_window_and_are_never_fitted(tmp_path: Path) -> None:
    register_scripted("tokens", ScriptedModel(default="ok"))
    script = tmp_path / "s.yaml"
    script.write_text("replies:\n  - ok\n")
    for model in ("scripted/tokens", f"scripted:{script}", "function/anything"):
        assert context_window(model) is None
        assert count_tokens(model, CHAT) == estimate_tokens("".join(m["content"] for m in CHAT))
    huge: list[Message] = [{"role": "user", "content": LONG * 20}]
    assert fit_messages("scripted/tokens", huge, 10).messages == huge
    reply = await LLMClient().complete("scripted/tokens", huge)
    assert reply.dropped == () and reply.prompt_tokens == estimate_tokens(LONG * 20)


# --- API models: litellm's counter ------------------------------------------------------------------------


def test_api_models_are_counted_by_litellm() -> None:
    import litellm

    assert count_tokens("gpt-4o-mini", CHAT) == litellm.token_counter(model="gpt-4o-mini", messages=CHAT)
    assert count_tokens(API, "def add(a, b):") == litellm.token_counter(model=API, text="def add(a, b):")
    assert context_window("gpt-4o-mini") == litellm.get_model_info("gpt-4o-mini")["max_input_tokens"]
    assert context_window("hosted_vllm/no-such-model") is None


async def test_missing_usage_is_counted_with_the_models_tokenizer(fast_settings: LLMSettings) -> None:
    import litellm

    transport = FakeTransport(text="def add(a, b):\n    return a + b\n", prompt_tokens=None, completion_tokens=None)
    reply = await LLMClient(fast_settings, transport=transport).complete(API, CHAT)
    assert reply.usage_estimated is True and reply.dropped == ()
    assert reply.prompt_tokens == litellm.token_counter(model=API, messages=CHAT)
    assert reply.completion_tokens == litellm.token_counter(model=API, text=transport.text)


# --- the debate's history window ----------------------------------------------------------------------


def _rounds(n: int) -> list[list[tuple[str, str, str, int | None]]]:
    return [[("agent-1", "author", "word " * 400, 50)] for _ in range(n)]


def test_the_history_window_counts_with_the_models_tokenizer() -> None:
    counted = ContextWindow(_rounds(2), token_limit=900, model=API)
    rounds = counted.rounds
    assert counted._tokens(rounds) == count_tokens(API, "\n\n".join(r.render() for r in rounds))
    # Two rounds of "word word ...": 840 real tokens, 1026 estimated (characters / 4).
    assert counted.build(3).summarized_rounds == ()
    assert ContextWindow(_rounds(2), token_limit=900).build(3).summarized_rounds == (1,)
    assert ContextWindow(_rounds(2), token_limit=700, model=API).build(3).summarized_rounds == (1,)


@pytest.mark.local_model
@requires_llama
def test_the_history_window_counts_a_local_model_exactly() -> None:
    window = ContextWindow(_rounds(2), token_limit=10_000, model=QWEN)
    text = "\n\n".join(r.render() for r in window.rounds)
    assert (
        window._tokens(window.rounds)
        == count_tokens(QWEN, text)
        == local.count_local_tokens("qwen2.5-coder-0.5b", text)
    )


# --- into the session's turns -------------------------------------------------------------------------


async def test_a_turn_keeps_the_exact_counts_and_what_was_dropped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.protocol.conftest import ADD_TASK, Harness
    from tests.support.runs import hand_built_run

    from debatecode.agents.prompts import Prompt

    _small_window(monkeypatch, 1000)
    harness = Harness(tmp_path)
    transport = FakeTransport(text="fine", prompt_tokens=None, completion_tokens=None)
    run = hand_built_run(
        harness.config(API, agents=2), harness.sandbox, ADD_TASK, tmp_path, budget=None, transport=transport
    )
    llm, agents = run.deps.llm, run.agents
    prompt = Prompt(messages=[CHAT[0], {"role": "user", "content": LONG}], style="chat", max_tokens=100)

    turn = await run.ask(agents[0], prompt, phase="proposal", round_no=1, kind="critique")

    sent = transport.requests[0].messages
    assert turn.prompt_tokens == count_tokens(API, sent) == llm.calls[0].prompt_tokens
    assert turn.completion_tokens == count_tokens(API, "fine")
    assert turn.metadata["prompt_dropped"] == list(llm.calls[0].dropped) and len(llm.calls[0].dropped) == 1
