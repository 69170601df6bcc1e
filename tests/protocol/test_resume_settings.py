"""Issue 33: which settings a resume takes from the flags, config file and environment given now."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.config import load_config
from debatecode.errors import ConfigError
from debatecode.protocol.resume import RESUMABLE, given_settings, resume_note, resumed_config, setting_changes


def _stored(**overrides: object) -> dict[str, object]:
    values = {"token_budget": 3000, "agents": 2, "design.round_timeout_s": 0.05, "model": "scripted/a", **overrides}
    return {**load_config(overrides=values, use_file=False).model_dump(mode="json"), "question": {"text": "Q?"}}


def test_given_limits_override_the_stored_ones_and_nothing_else_does() -> None:
    stored = _stored()
    now = load_config(overrides={"token_budget": 5_000_000, "agents": 7, "store_url": "sqlite:///x.db"}, use_file=False)
    resumed = resumed_config(stored, now)
    assert resumed.token_budget == 5_000_000, "a budget given now wins"
    assert resumed.agents == 2, "a setting outside RESUMABLE keeps its stored value"
    assert resumed.design.round_timeout_s == 0.05 and resumed.model == "scripted/a", "not given now: stored"
    assert resumed.store_url == "sqlite:///x.db"
    assert [str(c) for c in setting_changes(stored, resumed)] == ["token_budget 3000 → 5000000"]


def test_the_config_file_and_environment_count_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _stored()
    config = tmp_path / "debatecode.toml"
    config.write_text("[design]\nround_timeout_s = 600\n")
    monkeypatch.setenv("DEBATECODE_CHECKPOINTS__ENABLED", "false")
    now = load_config(config)
    assert given_settings(now) == {"design.round_timeout_s": 600.0, "checkpoints.enabled": False}
    changes = setting_changes(stored, resumed_config(stored, now))
    assert resume_note(changes) == (
        "resumed with: checkpoints.enabled True → False, design.round_timeout_s 0.05 → 600.0"
    )


def test_a_resume_that_gives_nothing_changes_nothing() -> None:
    stored = _stored()
    resumed = resumed_config(stored, load_config(use_file=False))
    assert setting_changes(stored, resumed) == []
    assert stored["question"] == {"text": "Q?"}, "the stored mapping is not changed"


def test_given_settings_that_do_not_fit_the_stored_ones_are_a_config_error() -> None:
    stored = _stored(**{"design.max_rounds": 3})
    with pytest.raises(ConfigError, match="do not fit the session's stored ones"):
        resumed_config(stored, load_config(overrides={"design.min_rounds": 5}, use_file=False))


def test_every_resumable_key_names_a_real_setting() -> None:
    dumped = load_config(use_file=False).model_dump()
    for key in RESUMABLE:
        value: object = dumped
        for part in key.split("."):
            assert isinstance(value, dict) and part in value, key
            value = value[part]
