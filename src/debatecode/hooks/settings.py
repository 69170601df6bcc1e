"""Settings of the hook points and git hooks (the ``[hooks]`` section of ``debatecode.toml``).

Each hook point of a debate (``[hooks.post_proposal]``, ...) lists the
validations it runs and which of them are *blocking*: a version failing a
blocking validation cannot be the one the debate converges on. The same
thresholds (``[hooks.thresholds]``) decide pass or fail everywhere, and
``[hooks.git]`` configures ``debatecode hook run`` in a team's repository.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from debatecode.quality.settings import Severity

__all__ = [
    "STATIC_VALIDATIONS",
    "GitHookSettings",
    "HookPointSettings",
    "HooksSettings",
    "PostAdversarialSettings",
    "PostConvergenceSettings",
    "PostOptimizationSettings",
    "PostProposalSettings",
    "ValidationName",
    "ValidationThresholds",
]

ValidationName = Literal["tests", "lint", "static_analysis", "security", "benchmark"]
STATIC_VALIDATIONS: tuple[ValidationName, ...] = ("lint", "static_analysis", "security")
"""The validations that read the code without running it (the only ones a git hook can run)."""


def _names(*names: ValidationName) -> list[ValidationName]:
    return list(names)


def _check_blocking(validations: list[ValidationName], blocking: list[ValidationName], where: str) -> None:
    extra = [name for name in blocking if name not in validations]
    if extra:
        raise ValueError(f"{where}: blocking {extra} must also be listed in validations {validations}")


class HookPointSettings(BaseModel):
    """The validations of one hook point."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    validations: list[ValidationName] = Field(
        default_factory=lambda: _names("tests", "lint", "static_analysis", "security")
    )
    """Validations run at this point, in order: ``tests``, ``lint``, ``static_analysis``, ``security``, ``benchmark``."""
    blocking: list[ValidationName] = Field(default_factory=lambda: _names("security"))
    """Validations whose failure prevents convergence on the version (each must be in ``validations``)."""

    @model_validator(mode="after")
    def _blocking_is_run(self) -> HookPointSettings:
        _check_blocking(self.validations, self.blocking, "hook point")
        return self


class ValidationThresholds(BaseModel):
    """When each validation passes; shared by the debate's hook points and ``debatecode hook run``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    lint_max_findings: int = Field(default=0, ge=0)
    """``lint`` passes with at most this many ruff findings."""
    lint_require_formatted: bool = False
    """``lint`` also fails when ``ruff format`` would change the code."""
    max_complexity: int = Field(default=10, ge=1)
    """``static_analysis`` fails when a function's cyclomatic complexity (radon) exceeds this; 10 is the top of radon's rank B."""
    min_maintainability: float = Field(default=10.0, ge=0, le=100)
    """``static_analysis`` fails when radon's maintainability index is below this; below 10 is radon's rank C."""
    security_min_severity: Severity = "MEDIUM"
    """``security`` fails on a bandit finding of at least this severity (and ``security_min_confidence``). MEDIUM catches ``eval``, ``exec``, ``pickle.loads``, ``subprocess`` with ``shell=True``, SQL built from strings, weak hashes for security and the like."""
    security_min_confidence: Severity = "MEDIUM"
    """``security`` only fails on bandit findings of at least this confidence; LOW-confidence findings are reported but never fail it."""
    benchmark_runs: int = Field(default=3, ge=1, le=20)
    """Runs of the task's tests that ``benchmark`` times; it reports the median."""
    benchmark_max_s: float | None = Field(default=None, gt=0)
    """``benchmark`` fails when the candidate's median time over the task's tests exceeds this, in seconds. None: it only measures (and fails only when a run times out or runs out of memory)."""


class GitHookSettings(BaseModel):
    """``debatecode hook run`` in a team's repository (pre-commit, pre-push, pre-commit framework)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    validations: list[ValidationName] = Field(default_factory=lambda: _names("lint", "static_analysis", "security"))
    """Validations run on each changed Python file: ``lint``, ``static_analysis`` and ``security`` (git hooks run no code)."""
    blocking: list[ValidationName] = Field(default_factory=lambda: _names("security"))
    """Validations whose failure makes ``hook run`` exit 1 and so blocks the commit or push."""
    ruff_config: Literal["builtin", "project"] = "project"
    """``project``: ruff uses the repository's own configuration (``pyproject.toml``, ``ruff.toml``) or ruff's defaults; ``builtin``: the ``[quality]`` rule selection."""
    honour_suppressions: bool = True
    """Whether ``# noqa`` and ``# nosec`` comments silence findings, as teams expect in their own code."""

    @model_validator(mode="after")
    def _static_only(self) -> GitHookSettings:
        dynamic = [name for name in self.validations if name not in STATIC_VALIDATIONS]
        if dynamic:
            raise ValueError(f"git hooks run no code: {dynamic} cannot be used; choose from {list(STATIC_VALIDATIONS)}")
        _check_blocking(self.validations, self.blocking, "hooks.git")
        return self


class PostProposalSettings(HookPointSettings):
    """``PostProposal``: after each proposal has been written and tested."""


class PostOptimizationSettings(HookPointSettings):
    """``PostOptimization``: after each optimization (benchmark included: optimising is about speed)."""

    validations: list[ValidationName] = Field(
        default_factory=lambda: _names("tests", "lint", "static_analysis", "security", "benchmark")
    )
    """Validations run at this point, in order: ``tests``, ``lint``, ``static_analysis``, ``security``, ``benchmark``."""


class PostAdversarialSettings(HookPointSettings):
    """``PostAdversarial``: after each Red/Blue adversarial exchange."""

    validations: list[ValidationName] = Field(default_factory=lambda: _names("tests", "security"))
    """Validations run at this point, in order: ``tests``, ``lint``, ``static_analysis``, ``security``, ``benchmark``."""


class PostConvergenceSettings(HookPointSettings):
    """``PostConvergence``: on the version the debate converged on, before it is accepted."""

    validations: list[ValidationName] = Field(
        default_factory=lambda: _names("tests", "lint", "static_analysis", "security", "benchmark")
    )
    """Validations run at this point, in order: ``tests``, ``lint``, ``static_analysis``, ``security``, ``benchmark``."""


class HooksSettings(BaseModel):
    """Validations at the hook points of a debate, and the thresholds they use."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Run the hook points. Off: no validation runs and nothing blocks convergence."""
    post_proposal: PostProposalSettings = Field(default_factory=PostProposalSettings)
    """After each proposal is tested."""
    post_optimization: PostOptimizationSettings = Field(default_factory=PostOptimizationSettings)
    """After each optimization."""
    post_adversarial: PostAdversarialSettings = Field(default_factory=PostAdversarialSettings)
    """After each Red/Blue adversarial exchange."""
    post_convergence: PostConvergenceSettings = Field(default_factory=PostConvergenceSettings)
    """On the version the debate converged on, before it is accepted."""
    thresholds: ValidationThresholds = Field(default_factory=ValidationThresholds)
    """When each validation passes, at every hook point and in git hooks."""
    git: GitHookSettings = Field(default_factory=GitHookSettings)
    """``debatecode hook run`` (git pre-commit and pre-push hooks, the pre-commit framework)."""

    @field_validator("post_proposal", "post_optimization", "post_adversarial", "post_convergence", mode="before")
    @classmethod
    def _accept_plain_point_settings(cls, value: object) -> object:
        # A plain HookPointSettings becomes the point's own class; what it leaves unset keeps that point's defaults.
        if isinstance(value, HookPointSettings):
            return value.model_dump(exclude_unset=True)
        return value

    def point(self, name: str) -> HookPointSettings:
        """The settings of hook point ``name`` (``post_proposal``, ...).

        Raises:
            KeyError: no hook point has that name.
        """
        if name not in ("post_proposal", "post_optimization", "post_adversarial", "post_convergence"):
            raise KeyError(f"unknown hook point {name!r}")
        value: HookPointSettings = getattr(self, name)
        return value
