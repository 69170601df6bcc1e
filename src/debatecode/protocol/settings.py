"""Settings of the debate protocol: which phases run and how each behaves.

Every section here is a table of ``debatecode.toml`` (``[phases]``,
``[critique]``, ``[gates]``...). The reference in ``docs/configuration.md`` is
generated from these docstrings.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from debatecode.agents.roles import ROLES, role_names

__all__ = [
    "AdjudicationSettings",
    "AdversarialSettings",
    "CheckpointSettings",
    "ConvergenceSettings",
    "CritiqueSettings",
    "DehallucinationSettings",
    "GateSettings",
    "LLMRoleName",
    "OptimizationSettings",
    "ParticipantSettings",
    "PhaseSettings",
    "ReviewSettings",
    "SelfEvolvementSettings",
    "TopologySettings",
]

PhaseName = Literal[
    "dehallucination",
    "self_evolvement",
    "proposal",
    "adjudication",
    "critique",
    "review",
    "optimization",
    "adversarial",
    "convergence",
]


def _known_llm_role(name: str) -> str:
    """``name`` when it is a role a model can play, else a ``ValueError`` that lists those roles."""
    role = ROLES.get(name)
    if role is None or role.kind != "llm":
        known = [r for r in role_names() if ROLES[r].kind == "llm"]
        what = "a tool role, played by the sandbox" if role is not None else "not a known role"
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"{name!r} is {what}{hint}; roles a model can play: {', '.join(known)}")
    return name


LLMRoleName = Annotated[str, AfterValidator(_known_llm_role)]
"""A role name from ``debatecode.agents.roles`` that a model plays (``judge``, ``security``...)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class PhaseSettings(_Section):
    """Which protocol phases run, in this order: dehallucination → self-evolvement → proposal → adjudication → critique → review → optimization → adversarial → convergence."""

    dehallucination: bool = True
    """Clarifying questions about the task, answered from the task text (or by you, interactively). Skipped for simple tasks."""
    self_evolvement: bool = True
    """Each agent drafts code, tests it on the visible tests and refines it before the debate."""
    proposal: bool = True
    """Candidates enter the debate; the Moonshot adds an ambitious version and a pragmatic stepping stone, the Contrarian its objections. Cannot be switched off."""
    adjudication: bool = True
    """Where the leading candidates disagree on generated inputs, each debater says apart what the function must return there; a majority's answer becomes a test, and candidates that fail it are refined."""
    critique: bool = True
    """DebateCoder critique: agents write test inputs to break each other's code, outputs are compared, and contrastive analysis drives revisions."""
    review: bool = True
    """Reviewers score the leading candidate (satisfaction 0-100) against the task and its quality report."""
    optimization: bool = True
    """Performance and refactoring agents improve the leader; a change is kept only if no test regresses."""
    adversarial: bool = True
    """Red writes adversarial tests, Blue patches, for at most ``adversarial.max_rounds`` rounds."""
    convergence: bool = True
    """Pick the final candidate: most tests passed, then a vote among the tied."""


PHASE_NAMES: tuple[str, ...] = tuple(PhaseSettings.model_fields)
"""Every phase of the code debate, in protocol order (the switches of ``[phases]``)."""


class DehallucinationSettings(_Section):
    """Clarifying questions before any code is written."""

    max_rounds: int = Field(default=3, ge=1, le=10)
    """Question-and-answer rounds at most."""
    confidence_target: float = Field(default=0.9, ge=0.0, le=1.0)
    """Stop asking once the answers' confidence reaches this."""
    skip_simple: bool = True
    """Skip the phase for tasks marked ``trivial`` or ``simple`` (or short tasks with examples)."""


class SelfEvolvementSettings(_Section):
    """Self-test and refine before the debate."""

    max_iterations: int = Field(default=2, ge=0, le=10)
    """Refinements per agent after its first draft, while visible tests fail."""
    redraws: int = Field(default=0, ge=0, le=10)
    """Rounds of fresh drafts after the refinements, while no candidate passes every visible test: each author
    whose candidate fails one samples a new draft (at least at ``llm.temperature``, another seed; authors sharing
    a prompt are sampled together), which replaces its candidate unless it passes fewer tests. 0: never."""


class AdjudicationSettings(_Section):
    """Adjudication: the debaters settle, apart, what the function must return where the candidates disagree."""

    inputs: int = Field(default=24, ge=1, le=200)
    """Generated inputs the candidates run on to find where they disagree."""
    max_questions: int = Field(default=3, ge=1, le=20)
    """Inputs put to the debaters, at most: those on which the largest behaviour clusters of the top test tier differ."""
    refinements: int = Field(default=1, ge=0, le=5)
    """Refinements per author whose candidate fails an adjudicated (or visible) test, from the actual failures."""
    when: Literal["always", "passing"] = "always"
    """``passing``: only when the leading candidate passes every visible test (candidates that meet the examples
    and still disagree); when none does, adjudicating among wrong candidates is left out. ``always``: whenever
    the leading candidates disagree."""
    red_inputs: int = Field(default=4, ge=0, le=20)
    """Inputs the Red team (present with ``phases.adversarial`` or ``participants.red``) is asked for that would distinguish the leading candidates, when they are different code passing the same tests; they run before the generated ones. 0: Red is not asked."""


class CritiqueSettings(_Section):
    """The DebateCoder critique: tests as the medium of the debate."""

    inputs_per_attack: int = Field(default=4, ge=1, le=20)
    """Test inputs an agent writes against one opponent per round."""
    opponents: Literal["one", "all"] = "one"
    """Attack one neighbour per round (cheaper) or every neighbour the topology allows."""
    when: Literal["tied", "always"] = "tied"
    """``tied``: critique runs only when the tests cannot separate the candidates (two or more different codes share the best test score); ``always``: every round."""


class ReviewSettings(_Section):
    """Code review of the leading candidate."""

    reviewers: list[LLMRoleName] = Field(default_factory=lambda: ["judge", "contrarian", "security"])
    """Roles that review each round, by name (``judge``, ``contrarian``, ``security``...); an unknown role is a config error that lists the known ones. The perspective catalog's cross-cutting reviewers ``observability``, ``operations`` and ``test`` are accepted too; cross-cutting reviewers always speak last, in the order observability → operations → test → security."""
    satisfaction_target: int = Field(default=90, ge=0, le=100)
    """Every reviewer at or above this is consensus."""
    min_progress: float = Field(default=5.0, ge=0)
    """Average satisfaction must rise this much over 3 rounds, or the debate is a stalemate."""
    revise: bool = True
    """The leader's author revises when a reviewer is below target with concerns."""
    when: Literal["tied", "always"] = "tied"
    """``tied``: review runs only when the tests cannot separate the candidates (a lone candidate is still reviewed); ``always``: every round."""
    failing_cap: int = Field(default=50, ge=0, le=100)
    """Highest satisfaction a reviewer may give a candidate that fails a visible test: reviews are grounded in execution, so a higher score is lowered to this (and the reviewer's own score is kept in the record)."""


class OptimizationSettings(_Section):
    """Performance and refactoring passes over the leader."""

    roles: list[LLMRoleName] = Field(default_factory=lambda: ["performance_analyzer", "refactorer"])
    """Roles that try an improvement, in order; an unknown role is a config error."""


class AdversarialSettings(_Section):
    """Red/Blue adversarial testing."""

    max_rounds: int = Field(default=3, ge=1, le=10)
    """Red attacks and Blue defends at most this many times; it stops earlier when Red finds nothing new."""


class ConvergenceSettings(_Section):
    """When the debate loop stops and how the final candidate is chosen."""

    voting: Literal["auto", "plurality", "borda", "condorcet", "unanimous", "weighted", "majority"] = "auto"
    """Voting method among candidates tied on tests: ``auto`` picks unanimous below 3 voters, weighted for 3-5, Borda for 6+. ``majority`` asks no one: the most frequent code among the tied candidates wins (self-consistency, the ``vote`` baseline)."""
    vote_threshold: float = Field(default=0.66, gt=0.0, le=1.0)
    """Share of the vote at which the debate has converged."""
    patience: int = Field(default=2, ge=1)
    """Stop after this many rounds without improvement (in tests passed or satisfaction)."""
    early_stop: bool = True
    """Skip the debate (critique, review, optimization, adversarial) when a majority of the authors' candidates pass every visible test and agree on probe inputs derived from the task's examples; the final vote still runs."""
    agreement_probes: int = Field(default=24, ge=1, le=200)
    """Generated inputs each passing candidate runs on to decide whether they agree (the early stop)."""
    ranking: Literal["behaviour", "vote"] = "behaviour"
    """How the final choice is made among candidates tied on tests. ``behaviour``: the shared ranking, asking no one: the candidate that agrees with most of the others on generated inputs wins (an error agrees with nothing; ties go to ranking order), as vote, Reflexion and the benchmarks choose. ``vote``: the voting method (``voting``) decides among the tied codes."""
    ranking_inputs: int = Field(default=24, ge=1, le=200)
    """Generated inputs each distinct tied candidate runs on for the ``behaviour`` ranking."""


class TopologySettings(_Section):
    """Who talks to whom."""

    type: Literal["mesh", "star", "chain", "tree"] = "mesh"
    """``mesh``: everyone critiques everyone; ``star``: spokes through the first agent; ``chain``: each agent critiques the next; ``tree``: hierarchical by role."""
    planning: Literal["auto", "cpde", "dpde"] = "auto"
    """CPDE: a Designer plans, implementers follow; DPDE: each agent plans its own code. ``auto`` picks by task complexity."""
    seed: int = 0
    """Seed for agent-order shuffles (resume relies on it being fixed)."""


class CheckpointSettings(_Section):
    """Human checkpoints after each debate round (Continue / Guide / End)."""

    enabled: bool = True
    """Ask at each round's end when running in a terminal; ``--no-checkpoints`` turns it off."""
    timeout_s: float = Field(default=1800, gt=0)
    """A checkpoint nobody answers within this many seconds pauses the session (status ``paused``); ``--resume`` continues it."""


class GateSettings(_Section):
    """Approval gates: the debate waits for a human decision at the listed phases."""

    enabled: bool = False
    """Off by default: every gate is approved at once."""
    phases: list[PhaseName] = Field(default_factory=lambda: list[PhaseName](["convergence"]))
    """Phases after which the debate waits for approval."""
    timeout_s: float = Field(default=1800.0, gt=0)
    """How long to wait for a decision."""
    on_timeout: Literal["reject", "approve"] = "reject"
    """What a timed-out gate counts as."""
    poll_s: float = Field(default=1.0, gt=0)
    """How often to look for a decision made elsewhere (``debatecode sessions approve``)."""


class ParticipantSettings(_Section):
    """Cross-cutting voices that join the authors."""

    contrarian: bool = True
    """The Contrarian argues against the emerging consensus in every debate (proposal, review, vote)."""
    moonshot: bool = True
    """The Moonshot adds an ambitious version and a pragmatic stepping stone as a candidate."""
    teacher: bool = True
    """The Teacher explains the chosen approach for the report."""
    red: bool = False
    """The Red team takes part even with ``phases.adversarial`` off, to find the inputs that tell the leading candidates apart in adjudication (``adjudication.red_inputs``). With Red/Blue on, it is there anyway."""
    tolerate_failures: bool = True
    """In critique and review, an agent whose model fails for good is dropped (its topology subtree rebalanced to its siblings) while at least two competitors remain, instead of failing the session."""
