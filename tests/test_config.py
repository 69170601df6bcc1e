"""DebateConfig: file < env < flags, and unknown keys name themselves and their source."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.config import config_reference_markdown, load_config
from debatecode.errors import ConfigError


def test_defaults_use_the_embedded_model_and_sqlite(isolated_cwd: Path) -> None:
    config = load_config()
    assert config.model == "local/qwen2.5-coder-0.5b"
    assert config.agents == 3
    assert config.store_url == "sqlite:///.debatecode/debatecode.db"


def test_priority_is_file_then_env_then_flags(isolated_cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated_cwd / "debatecode.toml").write_text(
        'model = "scripted/file"\nagents = 2\nrounds = 4\n[sandbox]\nbackend = "local"\nmemory_mb = 300\n'
    )
    config = load_config()
    assert (config.model, config.agents, config.rounds, config.sandbox.backend) == ("scripted/file", 2, 4, "local")

    monkeypatch.setenv("DEBATECODE_AGENTS", "5")
    monkeypatch.setenv("DEBATECODE_SANDBOX__MEMORY_MB", "400")
    config = load_config()
    assert config.agents == 5 and config.sandbox.memory_mb == 400 and config.rounds == 4

    config = load_config(overrides={"agents": 7, "sandbox.backend": "docker", "rounds": None})
    assert config.agents == 7 and config.sandbox.backend == "docker"
    assert config.rounds == 4, "a flag left unset keeps the lower-priority value"
    assert config.sandbox.memory_mb == 400


def test_unknown_key_in_file_names_key_and_file(isolated_cwd: Path) -> None:
    path = isolated_cwd / "debatecode.toml"
    path.write_text("agnets = 2\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    message = str(info.value)
    assert "'agnets'" in message and str(path) in message and "'agents'" in message
    assert info.value.key == "agnets"


def test_unknown_nested_key_names_its_section(isolated_cwd: Path) -> None:
    (isolated_cwd / "debatecode.toml").write_text("[sandbox]\nmemory = 3\n")
    with pytest.raises(ConfigError, match=r"'sandbox\.memory'.*debatecode\.toml"):
        load_config()


def test_unknown_env_var_is_an_error(isolated_cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATECODE_MODLE", "x")
    with pytest.raises(ConfigError, match=r"DEBATECODE_MODLE.*DEBATECODE_MODEL"):
        load_config()


def test_invalid_value_and_invalid_toml(isolated_cwd: Path) -> None:
    path = isolated_cwd / "debatecode.toml"
    path.write_text("agents = 0\n")
    with pytest.raises(ConfigError, match="agents"):
        load_config()
    path.write_text("agents = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config()


def test_explicit_config_file_and_env_pointer(isolated_cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = isolated_cwd / "other.toml"
    other.write_text("agents = 6\n")
    assert load_config(other).agents == 6
    monkeypatch.setenv("DEBATECODE_CONFIG", str(other))
    assert load_config().agents == 6
    monkeypatch.setenv("DEBATECODE_CONFIG", str(isolated_cwd / "missing.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config()
    for not_a_file, kind in (("/dev/zero", "a character device"), (str(isolated_cwd), "a directory")):
        monkeypatch.setenv("DEBATECODE_CONFIG", not_a_file)  # it used to say "which does not exist" (issue 31)
        with pytest.raises(ConfigError, match=f"{kind}, not a regular file") as info:
            load_config()
        assert "does not exist" not in str(info.value)


def test_reference_docs_cover_every_field() -> None:
    text = config_reference_markdown()
    for key in ("`model`", "`agents`", "`sandbox.backend`", "`llm.max_retries`", "`phases.critique`"):
        assert key in text


@pytest.mark.parametrize(
    "variable",
    [
        "DEBATECODE_SERVER_TOKEN",
        "DEBATECODE_REQUIRE_BROWSER",
        "DEBATECODE_REQUIRE_POSTGRES",
        "DEBATECODE_TEST_POSTGRES_URL",
    ],
)
def test_variables_that_are_not_settings_do_not_break_loading(variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(variable, "1")
    assert load_config(use_file=False).agents >= 1
