"""The strategies the benchmark bridges compare, as config transformations of one base config.

Every strategy runs through the same engine and model client, so tokens,
calls and time are counted the same way, and ``--budget`` caps each
strategy's tokens per problem equally.

- ``single``: one agent, one greedy sample.
- ``vote``: N samples (agent 1 greedy, the others at ``llm.temperature``);
  the candidate passing the most visible tests wins, ties go to the most
  frequent code (majority, no model asked). The "Debate or Vote" baseline.
- ``reflexion``: one agent, then the Reflexion loop on its visible tests.
- ``debate``: the full protocol, with the base config's phases (and its early stop:
  the debate is skipped when the drafts already pass and agree on probe inputs).
"""

from __future__ import annotations

from typing import Any

from debatecode.config import DebateConfig
from debatecode.errors import ConfigError

__all__ = ["STRATEGIES", "strategy_config"]

STRATEGIES = ("single", "vote", "reflexion", "debate")

_QUIET: dict[str, Any] = {"checkpoints": {"enabled": False}, "gates": {"enabled": False}}
_NO_DEBATE_PHASES = {
    "dehallucination": False,
    "self_evolvement": False,
    "proposal": True,
    "adjudication": False,
    "critique": False,
    "review": False,
    "optimization": False,
    "adversarial": False,
    "convergence": True,
}
_NO_VOICES = {"contrarian": False, "moonshot": False, "teacher": False, "red": False}


def strategy_config(
    base: DebateConfig,
    strategy: str,
    *,
    samples: int = 5,
    agents: int = 3,
    budget: int | None = None,
    wisdom: bool = False,
) -> DebateConfig:
    """``base`` adapted to ``strategy``.

    ``samples`` is the vote's N; ``agents`` the debate's authors; ``wisdom``
    keeps cross-task lessons on (off by default: lessons learnt on earlier
    problems would favour whichever strategy reflects).

    Raises:
        ConfigError: unknown strategy.
    """
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    data = base.model_dump()
    data.update(_QUIET)
    data["memory"] = {**data["memory"], "wisdom": wisdom}
    if budget is not None:
        data["token_budget"] = budget
    if strategy != "debate":
        # The early stop is part of the debate protocol; the baselines stay what their names say.
        data["convergence"] = {**data["convergence"], "early_stop": False}
    if strategy == "single":
        data.update(
            agents=1, strategy="debate", phases=_NO_DEBATE_PHASES, participants={**data["participants"], **_NO_VOICES}
        )
        data["reflexion"] = {**data["reflexion"], "enabled": False}
    elif strategy == "vote":
        data.update(
            agents=samples,
            strategy="debate",
            phases=_NO_DEBATE_PHASES,
            participants={**data["participants"], **_NO_VOICES},
        )
        data["reflexion"] = {**data["reflexion"], "enabled": False}
        data["convergence"] = {**data["convergence"], "voting": "majority"}
    elif strategy == "reflexion":
        data.update(agents=1, strategy="reflexion")
        data["reflexion"] = {**data["reflexion"], "enabled": True}
    else:
        data.update(agents=agents, strategy="debate")
    return DebateConfig.model_validate(data)
