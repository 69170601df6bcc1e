"""``llm.code_reply = "auto"`` (the default) takes each model's own way of asking for code."""

from __future__ import annotations

import pytest

from debatecode.agents.roles import get_role
from debatecode.config import DebateConfig
from debatecode.errors import UnknownModelError
from debatecode.llm.client import LLMClient, resolve_model
from debatecode.llm.settings import LLMSettings
from debatecode.protocol.roster import build_roster
from debatecode.task import Task

QWEN = "local/qwen2.5-coder-0.5b"
TASK = Task(title="t", entry_point="f", description="Return 1.", code_prompt='def f():\n    """Return 1."""\n')


def test_the_embedded_qwen_defaults_to_the_recipe_and_every_other_model_to_code_only() -> None:
    assert resolve_model(QWEN).code_reply_default == "function-only"
    for model in ("local/gemma-3-270m", "local/qwen2.5-coder-1.5b", "scripted/judge"):
        assert resolve_model(model).code_reply_default == "code-only", model


def test_the_client_resolves_auto_and_keeps_an_explicit_setting() -> None:
    assert LLMSettings().code_reply == "auto"
    assert LLMClient().code_reply(QWEN) == "function-only"
    assert LLMClient().code_reply("scripted/judge") == "code-only"
    assert LLMClient(LLMSettings(code_reply="explain-first")).code_reply(QWEN) == "explain-first"


def _authors(**config: object) -> dict[str, str]:
    roster = build_roster(DebateConfig.model_validate({"strategy": "debate", **config}), "dpde", lambda model: "chat")
    return {agent.model: agent.code_reply for agent in roster if agent.role.name == "generator"}


def test_each_author_asks_its_own_model_in_its_own_way() -> None:
    assert _authors(model=QWEN, agent_models=[QWEN, "scripted/a"], agents=2) == {
        QWEN: "function-only",
        "scripted/a": "code-only",
    }
    assert _authors(model=QWEN, agents=2, llm={"code_reply": "code-only"}) == {QWEN: "code-only"}


def test_the_qwen_author_drafts_with_the_recipe_and_refines_with_the_debate_prompt() -> None:
    roster = build_roster(DebateConfig.model_validate({"model": QWEN, "agents": 1}), "dpde", lambda model: "chat")
    (author,) = [agent for agent in roster if agent.role.name == "generator"]
    assert author.prompt("draft", TASK).messages[0]["content"] == "You are an expert Python programmer."
    refine = author.prompt("refine", TASK, code="def f():\n    return 2\n").messages[0]["content"]
    assert refine.startswith(f"You are the {get_role('generator').title} in a team")


def test_an_unknown_model_under_auto_is_refused_by_name() -> None:
    with pytest.raises(UnknownModelError, match="local/nope"):
        _authors(model="local/nope", agents=1)
