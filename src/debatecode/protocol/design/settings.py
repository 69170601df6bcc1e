"""Settings of design debates: the ``[design]`` table of ``debatecode.toml``.

The defaults follow the design-debate documents: 2 to 5 response rounds (at
most 10), consensus at 90 satisfaction, a stalemate below 5 points of progress
over 3 rounds, repetition above 60% overlap, and a convergence poll passing at
two thirds.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from debatecode.agents.perspectives import CustomPerspective

__all__ = ["DesignSettings"]


class DesignSettings(BaseModel):
    """Design debates (``debatecode debate``): perspectives, rounds, the gate reviewer and the decision record."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    min_rounds: int = Field(default=2, ge=1, le=10)
    """Response rounds before the debate may end (``--min-rounds``)."""
    max_rounds: int = Field(default=5, ge=1, le=10)
    """Response rounds at most; reaching them without agreement escalates (``--max-rounds``)."""
    perspectives: list[str] = Field(default_factory=list)
    """Perspective keys to debate with (``--perspectives a,b``); empty lets the moderator choose 2-4 by the question.
    Test, Security, Observability and Operations, the Contrarian and the Moonshot join either way."""
    perspective_count: int | None = Field(default=None, ge=2, le=4)
    """How many domain perspectives the moderator picks (``--perspectives N``), besides the four cross-cutting
    specialists, the Contrarian and the Moonshot; None: 2-4 by the question."""
    council: bool = False
    """Council mode (``--council``, seed 002): debate with the ``council_members`` instead of the moderator's picks."""
    council_members: list[str] = Field(default_factory=lambda: ["architect", "designer", "engineer", "researcher"])
    """The council of council mode: perspective keys or names; default the four-member council (Architect,
    Designer, Engineer, Researcher)."""
    contrarian: bool = True
    """The Contrarian argues against the emerging consensus in every debate; false leaves it out (the only way to)."""
    moonshot: bool = True
    """The Moonshot proposes the ambitious answer and a stepping stone in every debate; false leaves it out."""
    custom_perspectives: list[CustomPerspective] = Field(default_factory=list)
    """Perspectives added to (or replacing entries of) the built-in catalog, as ``[[design.custom_perspectives]]``."""
    mode: Literal["deliberative", "patchlist"] = "deliberative"
    """``deliberative``: an ADR. ``patchlist``: BLOCKING / HIGH / MEDIUM-LOW items against the given context."""
    target_satisfaction: int = Field(default=90, ge=0, le=100)
    """Consensus when every debater's satisfaction reaches this."""
    min_progress: float = Field(default=5, ge=0)
    """A smaller gain in average satisfaction over ``progress_window`` rounds is a stalemate."""
    progress_window: int = Field(default=3, ge=2, le=10)
    repetition: float = Field(default=0.6, gt=0, le=1)
    """A round repeating more than this share of the previous round is flagged; two in a row force synthesis."""
    poll_share: float = Field(default=2 / 3, gt=0, le=1)
    """Yes share that moves a convergence poll to synthesis."""
    reply_words: int = Field(default=120, ge=30, le=600)
    """Words each speech aims at (the prompts ask for it; the token cap is 1.5 tokens per word plus 60)."""
    token_budget_per_round: int | None = Field(default=2000, ge=0)
    """Tokens each debater may spend per round (0 or None: unlimited)."""
    round_timeout_s: float = Field(default=600, gt=0)
    """A response round taking longer stops the debate, its turns kept for ``--resume`` (``--round-timeout``).
    Ten minutes: the embedded model on 2 cores needs several for a round of five speakers."""
    timeout_s: float = Field(default=3600, gt=0)
    """The whole debate's time limit, checkpoints excluded (``--timeout``)."""
    models: dict[str, str] = Field(default_factory=dict)
    """Model tiering by stage: ``positions``, ``round1``, ``round2``..., ``rounds`` (any round), ``moderator``,
    ``synthesis``; e.g. ``{round1 = "openai/gpt-4o", round2 = "local/qwen2.5-coder-0.5b"}``. Unlisted stages use ``model``."""
    adr_dir: str = "docs/decisions"
    """Where decision records go, relative to the repository (``--repo``)."""

    @model_validator(mode="after")
    def _rounds_in_order(self) -> DesignSettings:
        if self.min_rounds > self.max_rounds:
            raise ValueError(f"design.min_rounds ({self.min_rounds}) is above design.max_rounds ({self.max_rounds})")
        if self.council and (self.perspectives or self.perspective_count is not None):
            raise ValueError(
                "design.council debates with design.council_members; drop design.perspectives and "
                "design.perspective_count (--perspectives), or drop design.council (--council)"
            )
        if self.council and not self.council_members:
            raise ValueError("design.council_members is empty; name at least one member, or drop design.council")
        unknown = [k for k in self.models if not _is_stage(k)]
        if unknown:
            raise ValueError(
                f"unknown design.models stage(s): {', '.join(unknown)}; "
                "known: positions, round1..round10, rounds, moderator, synthesis"
            )
        return self

    @property
    def switched_off(self) -> frozenset[str]:
        """Keys of the always-present perspectives this debate leaves out (``contrarian``, ``moonshot``)."""
        return frozenset(key for key, on in (("contrarian", self.contrarian), ("moonshot", self.moonshot)) if not on)

    def model_for(self, stage: str, default: str) -> str:
        """The model of ``stage`` (``round2``, ``synthesis``...): its tier, else ``rounds`` for a round, else ``default``."""
        if stage in self.models:
            return self.models[stage]
        if stage.startswith("round") and "rounds" in self.models:
            return self.models["rounds"]
        return default


def _is_stage(name: str) -> bool:
    if name in ("positions", "rounds", "moderator", "synthesis"):
        return True
    return name.startswith("round") and name[5:].isdigit() and 1 <= int(name[5:]) <= 10
