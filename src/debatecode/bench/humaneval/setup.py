"""``HumanEvalSetup``: how a HumanEval run is set up, in one checked object.

The CLI builds one from its flags, ``run_humaneval`` from its keywords, and the
run, the report and the progress bar read it as it is. Building it checks it:
a bad setting is refused before any session runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from debatecode.bench._jobs import check_executor
from debatecode.bench.humaneval.strategies import STRATEGIES, strategy_config
from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError

__all__ = ["VOTE_SAMPLE", "HumanEvalSetup"]

VOTE_SAMPLE = "vote-sample"
"""The key of the vote's one-sample config in ``HumanEvalSetup.strategy_configs``: each vote sample's session."""


@dataclass(frozen=True, kw_only=True)
class HumanEvalSetup:
    """The strategies to compare, their settings, where results go and where sessions run.

    Raises (on construction):
        ConfigError: an unknown or no strategy, a vote size or ``max_attempts`` below 1, a
            ``match_spend`` reference not among ``strategies``, an unknown executor or a
            ``ray_address`` without ``executor="ray"``, or a config file or variable that does not load.
    """

    config: DebateConfig | None = None
    """The base settings (model, phases, roles...); default ``load_config()``. Each strategy adapts it
    (``debatecode.bench.humaneval.strategies``)."""
    strategies: Sequence[str] = STRATEGIES
    """Any of ``single``, ``vote``, ``reflexion``, ``debate``, in the order the report lists them."""
    out: Path = Path("bench-out/humaneval")
    """The results folder (a string is taken as a path); a run into a folder that already has results continues it."""
    samples: int = 5
    """N of the ``vote`` strategy (its ``results.jsonl`` line)."""
    agents: int = 3
    """Authors of ``debate``."""
    budget: int | None = None
    """Token cap per problem and strategy (equal for all); default the config's. A cap, not a spend."""
    wisdom: bool = False
    """Keep cross-problem lessons on (off: they would favour reflecting strategies)."""
    sandbox: str | None = None
    """Backend name (``auto``, ``docker``, ``local``...); default the config's."""
    command: str = ""
    """How the report names the run; default the ``run_humaneval`` call."""
    dataset: str = "HumanEval"
    """How the report names the problem set (``bench humaneval --dataset FILE``: the file's name)."""
    vote_n: Sequence[int] = ()
    """More vote sizes to report (vote@N for each), scored on the first N of the same samples."""
    match_spend: str | None = None
    """The strategy (``debate``) whose mean spend vote's N and Reflexion's attempts are matched to."""
    max_vote_n: int = 64
    """The most samples spend matching may draw per problem."""
    max_attempts: int = 10
    """The highest Reflexion attempt cap spend matching may run."""
    jobs: int | None = None
    """Sessions run at once; default ``min(cpu_count, 4)``, or with a ``local/...`` model the calls its copies generate at once (``_jobs.default_jobs``).

    With ``executor="ray"``: Ray tasks in flight; default the cluster's CPUs (its nodes with a local model)."""
    executor: str = "local"
    """``local``: sessions on this event loop. ``ray``: each session a Ray task (``debatecode.bench._ray``)."""
    ray_address: str | None = None
    """With ``executor="ray"``: the cluster to join; default ``RAY_ADDRESS``, else a Ray instance of this machine."""
    base: DebateConfig = field(init=False, repr=False, compare=False)
    """``config``, or the loaded config when none was given."""

    def __post_init__(self) -> None:
        check_executor(self.executor, self.ray_address)
        strategies = tuple(dict.fromkeys(self.strategies))
        unknown = [s for s in strategies if s not in STRATEGIES]
        if not strategies or unknown:
            raise ConfigError(f"unknown or no strategy {unknown or list(strategies)}; known: {', '.join(STRATEGIES)}")
        if any(n < 1 for n in (self.samples, *self.vote_n, self.max_vote_n)):
            raise ConfigError(
                f"a vote needs at least one sample; got vote sizes {[self.samples, *self.vote_n, self.max_vote_n]}"
            )
        if self.max_attempts < 1:
            raise ConfigError(f"Reflexion needs at least one attempt; got max_attempts={self.max_attempts}")
        if self.match_spend is not None and self.match_spend not in strategies:
            raise ConfigError(
                f"spend matching needs its reference {self.match_spend!r} among the strategies run "
                f"({', '.join(strategies)})"
            )
        object.__setattr__(self, "strategies", strategies)
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "vote_n", tuple(sorted(set(self.vote_n))) if "vote" in strategies else ())
        object.__setattr__(self, "base", self.config if self.config is not None else load_config())

    def strategy_configs(self) -> dict[str, DebateConfig]:
        """Each strategy's config (``strategy_config`` of ``base``), and the vote's one-sample config under ``VOTE_SAMPLE``.

        Each names the sandbox backend, so a Ray worker builds the same sandbox from it.
        """
        base = self.base
        if self.sandbox is not None:
            base = base.model_copy(update={"sandbox": base.sandbox.model_copy(update={"backend": self.sandbox})})
        configs = {
            name: strategy_config(
                base, name, samples=self.samples, agents=self.agents, budget=self.budget, wisdom=self.wisdom
            )
            for name in self.strategies
        }
        if "vote" in self.strategies:
            configs[VOTE_SAMPLE] = strategy_config(base, "vote", samples=1, budget=self.budget, wisdom=self.wisdom)
        return configs
