"""The memory package: pinned, lazy public surface, and its two config sections."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import debatecode.memory as memory
from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError
from debatecode.memory import MemorySettings, ReflexionSettings


def test_memory_all_is_pinned() -> None:
    assert memory.__all__ == [
        "Episode",
        "EpisodicMemory",
        "HashingEmbedder",
        "Lesson",
        "MemorySettings",
        "ReflexionSettings",
        "VectorIndex",
        "WisdomStore",
        "create_embedder",
    ]
    for name in memory.__all__:
        assert getattr(memory, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        memory.Nope  # noqa: B018


def test_importing_the_memory_package_and_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "import debatecode.memory, debatecode.cli.app\n"
        "from debatecode.memory import MemorySettings, ReflexionSettings\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'numpy', 'sqlalchemy')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "[]"
    code = "import sys, debatecode.memory.store, debatecode.memory.wisdom\nprint('torch' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "False"


def test_config_has_memory_and_reflexion_sections_with_their_defaults() -> None:
    config = DebateConfig()
    assert config.memory == MemorySettings()
    assert config.reflexion == ReflexionSettings()
    assert (config.memory.embedder, config.memory.max_episodes, config.memory.k) == ("auto", 1000, 5)
    assert (config.memory.similarity_threshold, config.memory.wisdom, config.memory.wisdom_k) == (0.3, True, 3)
    assert config.memory.hashing_dim == 512
    assert (config.reflexion.max_attempts, config.reflexion.confidence_threshold) == (3, 0.9)
    assert (config.reflexion.template, config.reflexion.in_debate) == ("default", True)
    assert config.reflexion.max_reflections_in_prompt == 5
    for model in (MemorySettings, ReflexionSettings):
        assert all(info.description for info in model.model_fields.values()), model


def test_memory_settings_come_from_file_env_and_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file = tmp_path / "debatecode.toml"
    config_file.write_text('[memory]\nembedder = "hashing"\nmax_episodes = 10\n\n[reflexion]\nmax_attempts = 1\n')
    monkeypatch.setenv("DEBATECODE_MEMORY__K", "7")
    config = load_config(config_file, {"reflexion.template": "terse"})
    assert (config.memory.embedder, config.memory.max_episodes, config.memory.k) == ("hashing", 10, 7)
    assert (config.reflexion.max_attempts, config.reflexion.template) == (1, "terse")


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"memory.embedder": "word2vec"}, "memory.embedder"),
        ({"memory.max_episodes": 0}, "memory.max_episodes"),
        ({"reflexion.max_attempts": 0}, "reflexion.max_attempts"),
        ({"memory.similarity_threshold": 1.5}, "memory.similarity_threshold"),
    ],
)
def test_invalid_memory_settings_are_config_errors(overrides: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(None, overrides, use_file=False)
