"""What a resumed session runs with: its stored config, with the limits, budgets, models and checkpoints given now.

A session stopped by its token budget or a time limit can only finish if the
resume may raise that limit. So ``--resume ID --token-budget 5000000`` (or the
same key in ``debatecode.toml`` or a ``DEBATECODE_*`` variable) overrides what
the session started with, for the settings in ``RESUMABLE``. Every other
setting (phases, agents, perspectives, the question or task...) stays as
stored, so the replayed turns still mean what they meant.

The engines journal what changed as the human turn
``r0/resume/human/settings-N`` ("resumed with: token_budget 200000 → 5000000")
and store the new settings with the session, so a later resume keeps them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from debatecode.config import DebateConfig
from debatecode.errors import ConfigError

__all__ = [
    "RESUMABLE",
    "SettingChange",
    "given_settings",
    "resume_note",
    "resumed_config",
    "setting_changes",
    "stored_settings",
]

RESUMABLE: tuple[str, ...] = (
    "model",
    "models",
    "agent_models",
    "token_budget",
    "rounds",
    "timeout_s",
    "round_timeout_s",
    "llm.round_token_budget",
    "llm.max_tokens",
    "llm.completion_max_tokens",
    "llm.request_timeout_s",
    "llm.max_retries",
    "sandbox.timeout_s",
    "sandbox.memory_mb",
    "checkpoints.enabled",
    "checkpoints.timeout_s",
    "gates.timeout_s",
    "gates.on_timeout",
    "design.min_rounds",
    "design.max_rounds",
    "design.token_budget_per_round",
    "design.round_timeout_s",
    "design.timeout_s",
    "design.models",
)
"""Settings (dotted keys) that a resume takes from the flags, config file and environment given now."""

_NOT_SETTINGS = ("question",)
"""Keys a session stores beside its config (a design debate's question)."""


@dataclass(frozen=True)
class SettingChange:
    """One setting a resume changed."""

    key: str
    before: Any
    after: Any

    def __str__(self) -> str:
        return f"{self.key} {_shown(self.before)} → {_shown(self.after)}"


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}" if value else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _get(data: Mapping[str, Any], key: str) -> Any:
    value: Any = data
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    *sections, name = key.split(".")
    target = data
    for part in sections:
        target = target.setdefault(part, {})
    target[name] = value


def _is_given(config: BaseModel, key: str) -> bool:
    model: Any = config
    *sections, name = key.split(".")
    for part in sections:
        if part not in model.model_fields_set:
            return False
        model = getattr(model, part)
    return name in model.model_fields_set


def given_settings(config: DebateConfig) -> dict[str, Any]:
    """The resumable settings ``config`` was explicitly given (flags, config file, environment), by dotted key."""
    dumped = config.model_dump(mode="json")
    return {key: _get(dumped, key) for key in RESUMABLE if _is_given(config, key)}


def stored_settings(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A session's stored config without the keys stored beside it (a design debate's question)."""
    return {k: v for k, v in stored.items() if k not in _NOT_SETTINGS}


def resumed_config(stored: Mapping[str, Any], current: DebateConfig) -> DebateConfig:
    """The config a resumed session runs with: ``stored``, the resumable settings given in ``current`` on top.

    The store URL is always ``current``'s (the session was found there).

    Raises:
        ConfigError: the merged config is invalid (e.g. ``design.min_rounds`` raised above the stored
            ``design.max_rounds``); the message names the setting.
    """
    merged = copy.deepcopy(stored_settings(stored))
    for key, value in given_settings(current).items():
        _set(merged, key, value)
    merged["store_url"] = current.store_url
    try:
        return DebateConfig.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']} (got {err.get('input')!r})" for err in exc.errors()
        )
        raise ConfigError(
            f"the settings given for the resume do not fit the session's stored ones: {problems}",
            source="resume",
        ) from exc


def setting_changes(stored: Mapping[str, Any], effective: DebateConfig) -> list[SettingChange]:
    """The resumable settings ``effective`` holds differently from ``stored``, in ``RESUMABLE`` order."""
    before = stored_settings(stored)
    after = effective.model_dump(mode="json")
    changes = []
    for key in RESUMABLE:
        old, new = _get(before, key), _get(after, key)
        if old is not None and old != new:
            changes.append(SettingChange(key, old, new))
    return changes


def resume_note(changes: list[SettingChange]) -> str:
    """``resumed with: a 1 → 2, b x → y``: the journaled turn's text, and what ``sessions show`` prints."""
    return "resumed with: " + ", ".join(str(change) for change in changes)
