"""Scripted models: reply matching, exhaustion, simulated failures and YAML scripts."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from debatecode.config import LLMSettings
from debatecode.errors import (
    ModelAuthError,
    ModelRequestError,
    ModelUnreachable,
    ScriptExhausted,
    UnknownModelError,
)
from debatecode.llm import LLMClient, Message, ScriptedModel, ScriptedReply, register_scripted
from debatecode.llm import client as client_module

HELLO: list[Message] = [{"role": "user", "content": "hello"}]


async def test_replies_are_used_in_order_and_once() -> None:
    register_scripted("seq", ScriptedModel(["first", "second"]))
    client = LLMClient()
    assert (await client.complete("scripted/seq", HELLO)).text == "first"
    assert (await client.complete("scripted/seq", HELLO)).text == "second"
    with pytest.raises(ScriptExhausted):
        await client.complete("scripted/seq", HELLO)


async def test_scripted_models_answer_while_network_requests_are_disabled() -> None:
    assert client_module.ALLOW_MODEL_REQUESTS is False
    register_scripted("offline", ScriptedModel(default="fine"))
    assert (await LLMClient().complete("scripted/offline", HELLO)).text == "fine"


async def test_filters_pick_the_first_unused_matching_reply() -> None:
    model = ScriptedModel(
        [
            ScriptedReply("critique from agent-2", agent="agent-2", phase="critique"),
            ScriptedReply("proposal round 0", phase="proposal", round=0),
            ScriptedReply("any proposal", phase="proposal"),
        ]
    )
    register_scripted("filtered", model)
    client = LLMClient()
    tags = {"agent": "agent-1", "phase": "proposal", "round": "0", "kind": "propose"}
    assert (await client.complete("scripted/filtered", HELLO, tags=tags)).text == "proposal round 0"
    assert (await client.complete("scripted/filtered", HELLO, tags=tags)).text == "any proposal"
    critique = {"agent": "agent-2", "phase": "critique", "round": "1"}
    assert (await client.complete("scripted/filtered", HELLO, tags=critique)).text == "critique from agent-2"
    assert model.remaining == 0


async def test_fn_then_default_answer_when_no_reply_matches() -> None:
    seen: list[tuple[list[Message], dict[str, str]]] = []

    def answer(messages: list[Message], tags: dict[str, str]) -> str:
        seen.append((messages, tags))
        return f"fn saw {messages[-1]['content']} for {tags['agent']}"

    register_scripted("fn", ScriptedModel([ScriptedReply("only agent-9", agent="agent-9")], fn=answer))
    register_scripted("default", ScriptedModel(default="fallback"))
    client = LLMClient()
    reply = await client.complete("scripted/fn", HELLO, tags={"agent": "agent-1"})
    assert reply.text == "fn saw hello for agent-1"
    assert seen == [(HELLO, {"agent": "agent-1"})]
    assert (await client.complete("scripted/default", HELLO)).text == "fallback"
    assert (await client.complete("scripted/default", HELLO)).text == "fallback"


async def test_exhausted_script_names_the_model_and_the_tags() -> None:
    register_scripted("short", ScriptedModel([ScriptedReply("critique", phase="critique")]))
    with pytest.raises(ScriptExhausted) as info:
        await LLMClient().complete("scripted/short", HELLO, tags={"phase": "proposal", "agent": "agent-3"})
    message = str(info.value)
    assert "scripted/short" in message
    assert "agent=agent-3" in message and "phase=proposal" in message
    assert info.value.model == "scripted/short"


async def test_unregistered_scripted_model_lists_the_registered_names() -> None:
    register_scripted("alpha", ScriptedModel(default="a"))
    with pytest.raises(UnknownModelError) as info:
        await LLMClient().complete("scripted/missing", HELLO)
    assert "'missing'" in str(info.value)
    assert "alpha" in str(info.value)


@pytest.mark.parametrize(
    ("marker", "error"),
    [("unreachable", ModelUnreachable), ("auth", ModelAuthError), ("bad_request", ModelRequestError)],
)
async def test_final_error_markers_raise_without_retrying(marker: str, error: type[Exception]) -> None:
    model = ScriptedModel([ScriptedReply(raise_error=marker), "never reached"])  # type: ignore[arg-type]
    register_scripted("failing", model)
    client = LLMClient(LLMSettings(max_retries=3, retry_base_delay_s=0.0))
    with pytest.raises(error):
        await client.complete("scripted/failing", HELLO)
    assert model.remaining == 1  # no retry consumed the second reply
    assert client.usage.calls == 0


async def test_rate_limit_marker_is_retried_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    register_scripted("limited", ScriptedModel([ScriptedReply(raise_error="rate_limit"), "after retry"]))
    client = LLMClient(LLMSettings(max_retries=2, retry_base_delay_s=0.0))
    with caplog.at_level(logging.WARNING, logger="debatecode.llm.retry"):
        reply = await client.complete("scripted/limited", HELLO)
    assert reply.text == "after retry"
    retries = [r for r in caplog.records if r.name == "debatecode.llm.retry"]
    assert len(retries) == 1
    assert "scripted/limited" in retries[0].getMessage()


async def test_concurrent_calls_consume_each_reply_exactly_once() -> None:
    replies = [f"reply-{i}" for i in range(25)]
    register_scripted("shared", ScriptedModel(list(replies)))
    client = LLMClient()
    results = await asyncio.gather(*(client.complete("scripted/shared", HELLO) for _ in replies))
    assert sorted(r.text for r in results) == sorted(replies)
    assert client.usage.calls == 25


async def test_scripted_usage_is_estimated_from_characters() -> None:
    register_scripted("sized", ScriptedModel(["x" * 40]))
    reply = await LLMClient().complete("scripted/sized", [{"role": "user", "content": "y" * 80}])
    assert reply.usage_estimated is True
    assert (reply.prompt_tokens, reply.completion_tokens) == (20, 10)
    assert reply.cost_usd == 0.0
    assert reply.provider == "scripted"


# --- scripted:<file.yaml> ----------------------------------------------------------------------

SCRIPT = """\
# a debate of two agents
replies:
  - content: "agent-1 proposal"
    agent: agent-1
    phase: proposal
  - content: "round one critique"
    phase: critique
    round: 1
  - error: rate_limit
    phase: vote
  - content: "Candidate 2"
    phase: vote
default: "nothing scripted"
"""


async def test_yaml_script_replays_replies_with_the_same_matching(tmp_path: Path) -> None:
    script = tmp_path / "debate.yaml"
    script.write_text(SCRIPT)
    client = LLMClient(LLMSettings(max_retries=1, retry_base_delay_s=0.0))
    model = f"scripted:{script}"
    assert (await client.complete(model, HELLO, tags={"phase": "critique", "round": "1"})).text == "round one critique"
    assert (await client.complete(model, HELLO, tags={"phase": "proposal", "agent": "agent-1"})).text == (
        "agent-1 proposal"
    )
    assert (await client.complete(model, HELLO, tags={"phase": "vote"})).text == "Candidate 2"  # after one retry
    assert (await client.complete(model, HELLO, tags={"phase": "proposal", "agent": "agent-1"})).text == (
        "nothing scripted"
    )


async def test_yaml_script_is_loaded_once_per_client(tmp_path: Path) -> None:
    script = tmp_path / "once.yaml"
    script.write_text("replies:\n  - one\n  - two\n")
    first = LLMClient()
    assert (await first.complete(f"scripted:{script}", HELLO)).text == "one"
    script.write_text("replies:\n  - changed\n")
    assert (await first.complete(f"scripted:{script}", HELLO)).text == "two"
    second = LLMClient()
    assert (await second.complete(f"scripted:{script}", HELLO)).text == "changed"


async def test_yaml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    script = tmp_path / "broken.yaml"
    script.write_text('replies:\n  - content: "ok"\n  - content: "unterminated\n    agent: [x\n')
    with pytest.raises(UnknownModelError) as info:
        await LLMClient().complete(f"scripted:{script}", HELLO)
    message = str(info.value)
    assert f"{script}:" in message
    assert "invalid YAML" in message
    line = int(message.split(f"{script}:")[1].split(":")[0])
    assert line >= 3


async def test_yaml_unknown_key_names_file_line_and_allowed_keys(tmp_path: Path) -> None:
    script = tmp_path / "typo.yaml"
    script.write_text("replies:\n  - content: a\n  - contnet: b\n    phase: proposal\n")
    with pytest.raises(UnknownModelError) as info:
        await LLMClient().complete(f"scripted:{script}", HELLO)
    message = str(info.value)
    assert f"{script}:3" in message
    assert "contnet" in message and "content" in message


async def test_missing_script_file_is_an_unknown_model(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(UnknownModelError) as info:
        await LLMClient().complete(f"scripted:{missing}", HELLO)
    assert "not found" in str(info.value)
    assert str(missing) in str(info.value)
