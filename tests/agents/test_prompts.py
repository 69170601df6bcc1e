"""Every prompt kind renders in both styles; completion prompts end where the model continues."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.agents.prompts import KINDS, render_prompt
from debatecode.agents.roles import CROSS_CUTTING_ORDER, ROLES, get_role
from debatecode.execution.results import TestCaseResult, TestReport
from debatecode.task import load_task

TASK = load_task(Path(__file__).resolve().parents[2] / "examples" / "tasks" / "add.md")
REPORT = TestReport(cases=[TestCaseResult(name="test_example_1", outcome="failed", message="Expected: 3\nGot: -1")])
CODE = "def add(a: int, b: int) -> int:\n    return a - b\n"


class _Option:
    code = CODE


CONTEXT = {
    "code": CODE,
    "report": REPORT,
    "opponent": "agent-2",
    "opponent_code": CODE,
    "codes": [CODE, CODE.replace("a + b", "b + a")],
    "disagreements": [{"call": "add(1, 2)", "mine": "returns -1", "theirs": "returns 3", "expected": "returns 3"}],
    "questions": [{"category": "edge_cases", "question": "Negative numbers?"}],
    "count": 3,
    "call": "add(5, 0)",
    "max_questions": 5,
    "reviews": [{"reviewer": "judge", "role": "judge", "satisfaction": 40, "summary": "wrong sign"}],
    "author": "agent-1",
    "attacks": [
        {
            "name": "test_red_1_1",
            "code": "def test_red_1_1():\n    assert add(1, 1) == 2\n",
            "message": "E assert 0 == 2",
        }
    ],
    "options": [_Option(), _Option()],
    "passed": 3,
    "total": 4,
    "alternatives": [{"agent": "agent-2", "passed": 1, "total": 4, "reason": "fewer tests pass"}],
    "clarifications": [{"category": "constraints", "question": "Ints only?", "answer": "Yes."}],
    "guidance": ["Prefer clarity."],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("style", ["chat", "completion"])
def test_every_kind_renders(kind: str, style: str) -> None:
    prompt = render_prompt(kind, style=style, role=get_role("generator"), task=TASK, n_agents=3, **CONTEXT)  # type: ignore[arg-type]
    assert prompt.messages and prompt.messages[-1]["content"].strip()
    assert prompt.output == KINDS[kind].output
    if style == "chat":
        assert [m["role"] for m in prompt.messages] == ["system", "user"]
        assert "Add two numbers" in prompt.messages[1]["content"]
    else:
        assert len(prompt.messages) == 1
        text = prompt.messages[0]["content"]
        if prompt.output == "code":
            assert prompt.prefix is not None and text.endswith(prompt.prefix), "completion prompts end with the header"
            assert prompt.prefix.startswith(TASK.signature or "")
        elif prompt.output != "choice":
            assert prompt.prefix is not None and text.rstrip().endswith(prompt.prefix.rstrip())


def test_chat_prompts_carry_clarifications_and_guidance() -> None:
    prompt = render_prompt("draft", style="chat", role=get_role("generator"), task=TASK, **CONTEXT)  # type: ignore[arg-type]
    user = prompt.messages[1]["content"]
    assert "Ints only?" in user and "Prefer clarity." in user


def test_full_reply_rebuilds_completions() -> None:
    prompt = render_prompt("review", style="completion", role=get_role("judge"), task=TASK, **CONTEXT)  # type: ignore[arg-type]
    assert prompt.full_reply("85\n# fine").startswith("# Satisfaction (0-100): 85")


def test_every_role_exists_with_a_focus() -> None:
    wanted = {
        "generator",
        "refactorer",
        "performance_analyzer",
        "security",
        "teacher",
        "compiler",
        "executor",
        "judge",
        "implementer",
        "designer",
        "red",
        "blue",
        "contrarian",
        "moonshot",
        "moderator",
    }
    assert wanted <= set(ROLES)
    assert all(role.focus for role in ROLES.values())
    assert get_role("security").cross_cutting and get_role("security").concern in CROSS_CUTTING_ORDER
    assert {r.name for r in ROLES.values() if r.kind == "tool"} == {"compiler", "executor"}
    with pytest.raises(KeyError, match="known roles"):
        get_role("pirate")


def test_the_adjudication_question_shows_the_call_and_asks_for_a_literal_answer() -> None:
    chat = render_prompt("adjudicate", style="chat", role=get_role("generator"), task=TASK, **CONTEXT)  # type: ignore[arg-type]
    user = chat.messages[1]["content"]
    assert "```python\nadd(5, 0)\n```" in user and "ANSWER: <the return value as a Python literal>" in user
    completion = render_prompt("adjudicate", style="completion", role=get_role("generator"), task=TASK, **CONTEXT)  # type: ignore[arg-type]
    assert completion.messages[0]["content"].endswith(">>> add(5, 0)") and "\n>>>" in (completion.stop or [])
