"""``llm.code_reply = "function-only"``: the draft is the standalone greedy recipe; other kinds stay code-only."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from tests.agents.test_prompts import CONTEXT

from debatecode.agents.prompts import KINDS, render_prompt
from debatecode.agents.roles import get_role
from debatecode.llm.settings import LLMSettings
from debatecode.task import Example, Task, load_task

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTION = "Complete the following Python function. Reply with the whole function in one ```python block."
CODE_PROMPT = (
    "import math\n\n\ndef area(radius: float) -> float:\n"
    '    """Area of a circle of the given radius.\n    >>> area(1.0)\n    3.14159\n    """\n'
)
BENCH_TASK = Task(title="Circle/1", entry_point="area", description="Area of a circle.", code_prompt=CODE_PROMPT)


def _draft(task: Task, **context: object) -> list[str]:
    prompt = render_prompt(
        "draft", style="chat", role=get_role("generator"), task=task, code_reply="function-only", **context
    )
    return [message["content"] for message in prompt.messages]


def test_a_benchmark_prompt_is_sent_as_the_recipe_sends_it() -> None:
    system, user = _draft(BENCH_TASK)
    assert system == "You are an expert Python programmer."
    assert user == f"{INSTRUCTION}\n\n```python\n{CODE_PROMPT.rstrip()}\n```"


def test_a_task_file_becomes_a_stub_with_its_description_examples_and_tests() -> None:
    task = load_task(ROOT / "examples" / "tasks" / "add.md")
    system, user = _draft(task)
    assert system == "You are an expert Python programmer."
    stub = user.split("```python\n", 1)[1].split("\n```", 1)[0]
    assert stub.startswith(f'{task.signature}\n    """')
    assert task.description.splitlines()[0] in stub
    assert "    >>> add(1, 2)\n    3" in stub
    for block in task.tests:
        assert block.code.strip() in user


def test_a_task_without_a_signature_names_the_function_and_lists_the_examples() -> None:
    task = Task(
        title="Reverse",
        entry_point="reverse_words",
        description="Reverse the order of the words in a sentence.",
        examples=[Example(source="reverse_words('a b')\n", want="'b a'\n", line=1)],
    )
    _, user = _draft(task)
    assert user.startswith("Write the Python function `reverse_words` described below.")
    assert "Reverse the order of the words" in user and ">>> reverse_words('a b')\n'b a'" in user


def test_debate_context_still_reaches_the_draft() -> None:
    _, user = _draft(
        BENCH_TASK,
        clarifications=[{"category": "constraints", "question": "Negative radius?", "answer": "Raise ValueError."}],
        guidance=["Use math.pi."],
    )
    assert "Negative radius?" in user and "Use math.pi." in user


@pytest.mark.parametrize("kind", sorted(kind for kind in KINDS if kind != "draft"))
def test_every_other_kind_renders_as_code_only(kind: str) -> None:
    def render(code_reply: str) -> list[str]:
        prompt = render_prompt(
            kind, style="chat", role=get_role("generator"), task=BENCH_TASK, code_reply=code_reply, **CONTEXT
        )
        return [message["content"] for message in prompt.messages]

    assert render("function-only") == render("code-only")


def test_the_setting_accepts_function_only_and_refuses_unknown_replies() -> None:
    assert LLMSettings(code_reply="function-only").code_reply == "function-only"
    with pytest.raises(ValidationError, match="code_reply"):
        LLMSettings(code_reply="whole-module")  # type: ignore[arg-type]
