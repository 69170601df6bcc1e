"""Model strings: routing, validation, errors that list what is known, and the lazy public API."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import debatecode.llm
from debatecode.errors import UnknownModelError
from debatecode.llm import KNOWN_PREFIXES, ScriptedModel, register_scripted, resolve_model, validate_model


def test_resolve_model_routes_each_kind(tmp_path: Path) -> None:
    assert resolve_model("local/gemma-3-270m").model_dump() == {
        "kind": "local",
        "provider": "local",
        "name": "gemma-3-270m",
        "prompt_style_default": "completion",
        "code_reply_default": "code-only",
    }
    assert resolve_model("scripted/judge").kind == "scripted"
    assert resolve_model(f"scripted:{tmp_path / 'x.yaml'}").kind == "scripted_file"
    openai = resolve_model("openai/gpt-4o-mini")
    assert (openai.kind, openai.provider, openai.name, openai.prompt_style_default) == (
        "litellm",
        "openai",
        "gpt-4o-mini",
        "chat",
    )
    assert resolve_model("ollama/qwen2.5-coder").provider == "ollama"
    assert resolve_model("hosted_vllm/my-model").provider == "hosted_vllm"


@pytest.mark.parametrize("model", ["nonsense-provider/some-model", "local/llama-70b", "scripted/", "scripted:"])
def test_unknown_models_list_the_known_prefixes(model: str) -> None:
    with pytest.raises(UnknownModelError) as info:
        resolve_model(model)
    assert info.value.model == model
    assert info.value.known_prefixes == KNOWN_PREFIXES
    for prefix in ("local/", "scripted/", "openai/", "(any litellm provider)"):
        assert prefix in str(info.value)


def test_unknown_local_model_names_the_embedded_ones() -> None:
    with pytest.raises(UnknownModelError, match="local/gemma-3-270m"):
        resolve_model("local/llama-70b")


def test_validate_model_checks_registration_and_script_files(tmp_path: Path) -> None:
    register_scripted("judge", ScriptedModel(default="1"))
    assert validate_model("scripted/judge").name == "judge"
    with pytest.raises(UnknownModelError, match="registered: judge"):
        validate_model("scripted/jduge")
    script = tmp_path / "ok.yaml"
    script.write_text("replies: [a, b]\n")
    assert validate_model(f"scripted:{script}").name == str(script)
    bad = tmp_path / "bad.yaml"
    bad.write_text("replies:\n  - {content: a\n")
    with pytest.raises(UnknownModelError, match=f"{bad}:"):
        validate_model(f"scripted:{bad}")


def test_public_api_is_pinned() -> None:
    assert debatecode.llm.__all__ == [
        "COMPLETION_STOP",
        "KNOWN_PREFIXES",
        "Completion",
        "CompletionRequest",
        "FunctionModel",
        "LLMClient",
        "Message",
        "PromptStyle",
        "ProviderSpec",
        "RawCompletion",
        "ResolvedModel",
        "ScriptedModel",
        "ScriptedReply",
        "TokenBudget",
        "Transport",
        "UsageTotals",
        "estimate_tokens",
        "extract_choice",
        "extract_code",
        "provider",
        "register_provider",
        "register_scripted",
        "registered_providers",
        "registered_scripted",
        "resolve_model",
        "unregister_provider",
        "unregister_scripted",
        "validate_model",
    ]
    for name in debatecode.llm.__all__:
        assert getattr(debatecode.llm, name) is not None
    with pytest.raises(AttributeError):
        _ = debatecode.llm.no_such_name


def test_importing_and_using_scripted_models_does_not_import_litellm() -> None:
    code = textwrap.dedent(
        """
        import asyncio, sys
        import debatecode.llm
        assert "litellm" not in sys.modules, "import debatecode.llm imported litellm"
        from debatecode.llm import LLMClient, ScriptedModel, register_scripted, extract_code
        register_scripted("s", ScriptedModel(["```python\\ndef f():\\n    return 1\\n```"]))
        reply = asyncio.run(LLMClient().complete("scripted/s", [{"role": "user", "content": "hi"}]))
        assert extract_code(reply.text, entry_point="f")
        assert "litellm" not in sys.modules, "a scripted call imported litellm"
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
