"""``SessionDeps`` and ``DebateDeps``: the services one session's steps use, all typed, none looked up by name.

The engine builds them once per session (:meth:`DebateEngine._build_run`) and
never changes them afterwards (the dataclasses are frozen); what a session
changes as it goes is its state (``DebateState``, ``DesignState``). A phase
test builds them by hand around a scripted model and fake testers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from debatecode.llm.budget import TokenBudget
    from debatecode.llm.client import LLMClient
    from debatecode.memory.settings import ReflexionSettings
    from debatecode.memory.store import EpisodicMemory
    from debatecode.memory.wisdom import WisdomStore
    from debatecode.protocol.allowance import TokenAllowance
    from debatecode.protocol.events import EventBus
    from debatecode.protocol.human import HumanInterface
    from debatecode.protocol.journal import Journal
    from debatecode.protocol.ordering import AgentOrdering
    from debatecode.protocol.satisfaction import SatisfactionTracker
    from debatecode.protocol.workspace import CodeWorkspace
    from debatecode.topology.base import Topology

__all__ = ["DebateDeps", "SessionDeps"]


@dataclass(frozen=True, kw_only=True)
class SessionDeps:
    """What any session's steps call to take turns: the model, the bus, the journal and the budgets."""

    llm: LLMClient
    bus: EventBus
    journal: Journal
    budget: TokenBudget
    """This session's token budget (the client may serve other sessions at the same time)."""
    allowance: TokenAllowance | None = None
    """Per-agent, per-round token allowance (``llm.round_token_budget``)."""
    human: HumanInterface | None = None
    """The person overseeing the debate, when running interactively."""


@dataclass(frozen=True, kw_only=True)
class DebateDeps(SessionDeps):
    """What a code debate's phases call besides: the code services (tester, prober, worktree, hooks) and the protocol's."""

    workspace: CodeWorkspace
    topology: Topology | None = None
    """Who hears whom among the competitors."""
    ordering: AgentOrdering | None = None
    """The speaking order of reviewers, per round."""
    satisfaction: SatisfactionTracker | None = None
    memory: EpisodicMemory | None = None
    wisdom: WisdomStore | None = None
    reflexion: ReflexionSettings | None = None
    """Reflexion's settings when it runs (``reflexion.enabled`` or the ``reflexion`` strategy), else None; the
    phase builds ``protocol.reflexion.ReflexionLoop`` from them and ``memory``."""
