"""``DebateConfig``: every setting, from ``debatecode.toml``, ``DEBATECODE_*`` and CLI flags.

Priority rises in that order: a flag beats an environment variable, which
beats the file, which beats the default. Unknown keys are errors that name
the key and where it came from, never silently ignored.

The configuration reference in ``docs/configuration.md`` is generated from the
field docstrings below (``python -m debatecode.config``).
"""

from __future__ import annotations

import contextvars
import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

from debatecode.errors import ConfigError
from debatecode.hooks.settings import HooksSettings
from debatecode.input_files import MAX_CONFIG_BYTES, InputFileError, read_input_file
from debatecode.llm.settings import LLMSettings
from debatecode.memory.settings import MemorySettings, ReflexionSettings
from debatecode.protocol.design.settings import DesignSettings
from debatecode.protocol.settings import (
    AdjudicationSettings,
    AdversarialSettings,
    CheckpointSettings,
    ConvergenceSettings,
    CritiqueSettings,
    DehallucinationSettings,
    GateSettings,
    LLMRoleName,
    OptimizationSettings,
    ParticipantSettings,
    PhaseSettings,
    ReviewSettings,
    SelfEvolvementSettings,
    TopologySettings,
)
from debatecode.quality.settings import QualitySettings
from debatecode.sandbox.settings import SandboxSettings
from debatecode.task import MAX_TASK_BYTES
from debatecode.vcs.settings import VcsSettings

__all__ = [
    "CONFIG_FILE_NAME",
    "DebateConfig",
    "LLMSettings",
    "PhaseSettings",
    "SandboxSettings",
    "load_config",
]

CONFIG_FILE_NAME = "debatecode.toml"
ENV_PREFIX = "DEBATECODE_"
# Process-level switches that share the prefix but are not settings.
_NON_SETTING_ENV = {
    "DEBATECODE_CONFIG",
    "DEBATECODE_ALLOW_MODEL_REQUESTS",
    "DEBATECODE_REQUIRE_DOCKER",
    "DEBATECODE_REQUIRE_BROWSER",
    "DEBATECODE_REQUIRE_POSTGRES",
    "DEBATECODE_TEST_POSTGRES_URL",
    "DEBATECODE_DOCS_SCREENSHOT",
    "DEBATECODE_IMAGES_DIR",
    "DEBATECODE_SERVER_TOKEN",
}


class DebateConfig(BaseSettings):
    """All settings of a debate session."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=True,
    )

    strategy: Literal["debate", "reflexion"] = "debate"
    """``debate``: the full multi-agent protocol. ``reflexion``: one agent per author, no debate: draft, then reflect and retry (``[reflexion]``)."""
    model: str = "local/qwen2.5-coder-0.5b"
    """Model for every agent: any litellm model string, ``local/<name>``, ``scripted/<name>`` or ``scripted:<file.yaml>``."""
    models: dict[LLMRoleName, str] = Field(default_factory=dict)
    """Per-role models, e.g. ``{red = "openai/gpt-4o-mini"}``; roles not listed use ``model``, and an unknown role is a config error."""
    agent_models: list[str] = Field(default_factory=list)
    """Heterogeneous debate: proposer ``i`` uses ``agent_models[i % len]`` (e.g. two different models)."""
    agents: int = Field(default=3, ge=1, le=16)
    """Number of proposer agents."""
    rounds: int = Field(default=1, ge=0, le=20)
    """Debate rounds (critique then review) at most."""
    token_budget: int = Field(default=200_000, ge=1)
    """Token budget for the whole session (prompt + completion). When spent, the session stops with partial results saved."""
    max_concurrency: int = Field(default=3, ge=1)
    """Agents working at the same time."""
    timeout_s: float | None = Field(default=None, gt=0)
    """The whole session's time limit in seconds, checkpoints excluded (``--timeout``); a step running past it stops the session as ``failed`` with its turns kept for ``--resume``. None: no limit. Design debates use ``design.timeout_s``."""
    round_timeout_s: float | None = Field(default=None, gt=0)
    """One debate round's time limit in seconds (``--round-timeout``), stopping the session like ``timeout_s``. None: no limit. Design debates use ``design.round_timeout_s``."""
    out: Path = Path("debatecode-out")
    """Output folder: solution.py, report.md and the git repository of versions."""
    task_max_bytes: int = Field(default=MAX_TASK_BYTES, ge=1)
    """Largest task file accepted, in bytes (default 256 KiB). A larger file is refused before it is parsed."""
    store_url: str = "sqlite:///.debatecode/debatecode.db"
    """SQLAlchemy URL of the session store."""
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    phases: PhaseSettings = Field(default_factory=PhaseSettings)
    participants: ParticipantSettings = Field(default_factory=ParticipantSettings)
    dehallucination: DehallucinationSettings = Field(default_factory=DehallucinationSettings)
    self_evolvement: SelfEvolvementSettings = Field(default_factory=SelfEvolvementSettings)
    adjudication: AdjudicationSettings = Field(default_factory=AdjudicationSettings)
    critique: CritiqueSettings = Field(default_factory=CritiqueSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    optimization: OptimizationSettings = Field(default_factory=OptimizationSettings)
    adversarial: AdversarialSettings = Field(default_factory=AdversarialSettings)
    convergence: ConvergenceSettings = Field(default_factory=ConvergenceSettings)
    topology: TopologySettings = Field(default_factory=TopologySettings)
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    gates: GateSettings = Field(default_factory=GateSettings)
    quality: QualitySettings = Field(default_factory=QualitySettings)
    """How each code version's quality is measured and scored."""
    vcs: VcsSettings = Field(default_factory=VcsSettings)
    """The per-session git version history."""
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    """Validations at the debate's hook points and in git hooks."""
    memory: MemorySettings = Field(default_factory=MemorySettings)
    """Episodic memory and accumulated wisdom (see docs/memory.md)."""
    reflexion: ReflexionSettings = Field(default_factory=ReflexionSettings)
    """Reflect on failing tests and retry (see docs/reflexion.md)."""
    design: DesignSettings = Field(default_factory=DesignSettings)
    """Design debates: ``debatecode debate "QUESTION"`` (see docs/design-debates.md)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlDataSource(settings_cls))


_toml_data: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("debatecode_toml", default=None)


class _TomlDataSource(PydanticBaseSettingsSource):
    """Feeds the already checked contents of ``debatecode.toml`` to pydantic-settings."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return (_toml_data.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_toml_data.get() or {})


def _known_keys(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    keys: dict[str, type[BaseModel] | None] = {}
    for name, info in model.model_fields.items():
        annotation = info.annotation
        nested = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        keys[name] = nested
    return keys


def _check_keys(data: dict[str, Any], model: type[BaseModel], source: str, prefix: str = "") -> None:
    known = _known_keys(model)
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in known:
            suggestion = difflib.get_close_matches(key, known, n=1)
            hint = f" Did you mean {prefix}{suggestion[0]!r}?" if suggestion else ""
            raise ConfigError(
                f"unknown config key {dotted!r} in {source}.{hint} "
                f"Known keys{' in [' + prefix.rstrip('.') + ']' if prefix else ''}: {', '.join(sorted(known))}.",
                source=source,
                key=dotted,
            )
        nested = known[key]
        if nested is not None:
            if not isinstance(value, dict):
                raise ConfigError(
                    f"config key {dotted!r} in {source} must be a table ([{dotted}])", source=source, key=dotted
                )
            _check_keys(value, nested, source, prefix=f"{dotted}.")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = read_input_file(path, max_bytes=MAX_CONFIG_BYTES, what="config file")
    except InputFileError as exc:
        raise ConfigError(
            f"{exc}; a debatecode config is a TOML file (see docs/configuration.md)", source=str(path)
        ) from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML: {exc}. Fix the syntax or delete the file.", source=str(path)
        ) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid UTF-8 ({exc.reason} at byte {exc.start}); TOML files are UTF-8: "
            "save it as UTF-8, or delete it if it is not a debatecode config.",
            source=str(path),
        ) from exc
    except RecursionError as exc:
        raise ConfigError(f"{path} nests arrays or tables too deeply to read; flatten it.", source=str(path)) from exc
    _check_keys(data, DebateConfig, str(path))
    return data


def _env_names(model: type[BaseModel], prefix: str = "", dotted: str = "") -> dict[str, tuple[str, FieldInfo]]:
    """Every ``DEBATECODE_*`` variable name a settings model answers to, mapped to its dotted key and field."""
    names: dict[str, tuple[str, FieldInfo]] = {}
    for key, nested in _known_keys(model).items():
        var = f"{prefix}{key}".upper()
        names[ENV_PREFIX + var] = (f"{dotted}{key}", model.model_fields[key])
        if nested is not None:
            names.update(_env_names(nested, f"{var}__", f"{dotted}{key}."))
    return names


def _json_kind(annotation: Any) -> str | None:
    """``table``, ``list`` or ``mapping`` when pydantic-settings reads the field's variable as JSON, else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    origin = get_origin(annotation)
    if origin in (dict, Mapping):
        return "mapping"
    if origin in (list, set, tuple, frozenset):
        return "list"
    if origin in (Union, UnionType):
        return next((kind for arg in get_args(annotation) if (kind := _json_kind(arg))), None)
    return None


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return False
    return True


def _check_json_env(var: str, value: str, key: str, field: FieldInfo) -> None:
    kind = _json_kind(field.annotation)
    if kind is None or _is_json(value):
        return
    if kind == "table":
        nested = cast("type[BaseModel]", field.annotation)
        first, info = next(iter(nested.model_fields.items()))
        default = info.get_default(call_default_factory=True)
        fix = f"set one key, e.g. {var}__{first.upper()}={default}, or put a JSON object in {var}"
    elif kind == "mapping":
        fix = f"""put a JSON object in {var}, e.g. {var}='{{"red": "openai/gpt-4o-mini"}}'"""
    else:
        fix = f"""put a JSON list in {var}, e.g. {var}='["a", "b"]'"""
    raise ConfigError(
        f"environment variable {var} is not valid JSON, and `{key}` is a {kind} so its variable holds JSON. "
        f"Fix: {fix}; or unset {var}.",
        source="environment",
        key=var,
    )


def _check_env(environ: dict[str, str]) -> None:
    env_names = _env_names(DebateConfig)
    for var in environ:
        upper = var.upper()
        if not upper.startswith(ENV_PREFIX) or upper in _NON_SETTING_ENV:
            continue
        if upper not in env_names:
            suggestion = difflib.get_close_matches(upper, env_names, n=1)
            hint = f" Did you mean {suggestion[0]}?" if suggestion else ""
            raise ConfigError(
                f"unknown config key in environment variable {var}.{hint} "
                f"Nested keys use a double underscore, e.g. {ENV_PREFIX}SANDBOX__BACKEND.",
                source="environment",
                key=var,
            )
        _check_json_env(var, environ[var], *env_names[upper])


def find_config_file(start: Path | None = None) -> Path | None:
    """``$DEBATECODE_CONFIG`` if set, else ``debatecode.toml`` in ``start`` (default: the working directory)."""
    explicit = os.environ.get("DEBATECODE_CONFIG")
    if explicit:
        path = Path(explicit)
        if not path.exists():  # anything else that is not a config file: _read_toml says what it is
            raise ConfigError(
                f"DEBATECODE_CONFIG points to {path}, which does not exist; point it at a debatecode.toml or unset it.",
                source="environment",
            )
        return path
    candidate = (start or Path.cwd()) / CONFIG_FILE_NAME
    return candidate if candidate.is_file() else None


def load_config(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    use_file: bool = True,
) -> DebateConfig:
    """Build the effective config: defaults < file < ``DEBATECODE_*`` env < ``overrides`` (CLI flags).

    ``overrides`` may use dotted keys (``"sandbox.backend"``); ``None`` values are ignored.

    Raises:
        ConfigError: unknown key (naming it and its source) or invalid value.
    """
    path = config_file if config_file is not None else (find_config_file() if use_file else None)
    data = _read_toml(path) if path is not None else {}
    _check_env(dict(os.environ))
    nested_overrides = _nest({k: v for k, v in (overrides or {}).items() if v is not None})
    _check_keys(nested_overrides, DebateConfig, "command-line flags")
    token = _toml_data.set(data)
    try:
        return DebateConfig(**nested_overrides)
    except ValidationError as exc:
        raise ConfigError(_describe_validation_error(exc, path), source=str(path) if path else None) from exc
    except SettingsError as exc:  # _check_env catches the known cases first
        raise ConfigError(
            f"a {ENV_PREFIX}* environment variable could not be read: {exc}. Check its value or unset it.",
            source="environment",
        ) from exc
    finally:
        _toml_data.reset(token)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key.split(".")
        target = nested
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value
    return nested


def _describe_validation_error(exc: ValidationError, path: Path | None) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        lines.append(f"  {loc}: {err['msg']} (got {err.get('input')!r})")
    where = f" (file {path}, environment or flags)" if path else " (environment or flags)"
    return "invalid configuration" + where + ":\n" + "\n".join(lines)


def config_reference_markdown() -> str:
    """The configuration reference, generated from the field docstrings."""
    out = ["# Configuration reference", "", "Generated from `debatecode.config` (`python -m debatecode.config`).", ""]
    out.append(
        f"Sources, in rising priority: defaults, `{CONFIG_FILE_NAME}`, `{ENV_PREFIX}*` environment variables, "
        "command-line flags. Unknown keys are errors. Nested keys use a double underscore in variables, "
        f"e.g. `{ENV_PREFIX}SANDBOX__BACKEND`."
    )
    out.append("")

    def section(model: type[BaseModel], prefix: str, title: str) -> None:
        out.extend([title, ""])
        doc = (model.__doc__ or "").strip()
        if prefix and doc:
            out.extend([doc, ""])
        out.append("| key | env | default | meaning |")
        out.append("|---|---|---|---|")
        nested_models: list[tuple[str, type[BaseModel]]] = []
        for name, info in model.model_fields.items():
            annotation = info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                nested_models.append((name, annotation))
                continue
            key = f"{prefix}{name}"
            env = ENV_PREFIX + key.replace(".", "__").upper()
            default = info.get_default(call_default_factory=True)
            doc_line = (info.description or "").replace("\n", " ").replace("|", "\\|")
            out.append(f"| `{key}` | `{env}` | `{default!s}` | {doc_line} |")
        out.append("")
        for name, nested in nested_models:
            section(nested, f"{prefix}{name}.", f"## [{prefix}{name}]")

    section(DebateConfig, "", "## Top level")
    return "\n".join(out)


if __name__ == "__main__":
    print(config_reference_markdown())
