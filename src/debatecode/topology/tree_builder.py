"""Build a tree from agent roles: root, team leads per concern, specialists.

1. The root is the first agent whose role is ``lead``, then ``architect``,
   ``designer``, ``moderator`` (in that preference); with none of them, the
   first agent.
2. The other agents form one team per concern (see
   ``debatecode.topology.concerns``), placed under the root in the fixed
   concern order. A team's lead is its member whose role comes first in the
   concern's role list (the earliest agent on ties); the rest are its
   specialists, in the given order.
3. A team's specialists fill the tree breadth-first below its lead, at most
   ``branching`` children per node, so a big team gets sub-leads rather than
   one wide level.
4. When the root is not a design role, the team of its own concern hangs
   directly under the root (the root leads it), so three generators make a
   root with two children, not a chain.

``branching`` bounds the fan-out of team leads and specialists. The root has
one child per concern present (at most seven) plus its own team, because
merging concerns to save fan-out would blur who answers for what.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from debatecode.topology.base import check_agents
from debatecode.topology.concerns import CONCERNS, ROOT_ROLES, normalise_role, role_concern, role_rank
from debatecode.topology.tree import TreeTopology

__all__ = ["build_tree"]


def _pick_root(agents: Sequence[tuple[str, str]]) -> str:
    for wanted in ROOT_ROLES:
        for agent, role in agents:
            if normalise_role(role) == wanted:
                return agent
    return agents[0][0]


def _fill(lead: str, members: list[str], children: dict[str, list[str]], branching: int) -> None:
    """Hang ``members`` below ``lead`` breadth-first, at most ``branching`` children per node."""
    open_slots = deque([lead])
    for member in members:
        while len(children[open_slots[0]]) >= branching:
            open_slots.popleft()
        children[open_slots[0]].append(member)
        open_slots.append(member)


def build_tree(agents: Sequence[tuple[str, str]], *, branching: int = 3) -> TreeTopology:
    """A tree over ``(agent_id, role)`` pairs, built from the roles as the module describes.

    Raises:
        ValueError: no agents, an empty or repeated agent id, or ``branching`` below 1.
    """
    if branching < 1:
        raise ValueError(f"branching must be at least 1, got {branching}")
    ids = check_agents(agent for agent, _ in agents)
    roles = dict(agents)
    root = _pick_root(agents)
    root_is_designer = normalise_role(roles[root]) in ROOT_ROLES
    root_concern = "design" if root_is_designer else role_concern(roles[root])
    teams: dict[str, list[str]] = {concern: [] for concern in CONCERNS}
    for agent in ids:
        if agent != root:
            teams[role_concern(roles[agent])].append(agent)
    children: dict[str, list[str]] = {agent: [] for agent in ids}
    # The root's own team goes first so that its fan-out limit counts only that team.
    ordered = sorted(CONCERNS, key=lambda concern: concern != root_concern)
    for concern in ordered:
        members = teams[concern]
        if not members:
            continue
        if concern == root_concern and not root_is_designer:
            _fill(root, members, children, branching)
            continue
        lead = min(members, key=lambda agent: (role_rank(roles[agent]), members.index(agent)))
        children[root].append(lead)
        _fill(lead, [agent for agent in members if agent != lead], children, branching)
    return TreeTopology(root, children, roles)
