"""Tree: a hierarchy by concern, routed up, down and through common parents.

The root plans and decides; below it each concern has a team lead; below the
team leads sit specialists. A message travels up to the lowest common
ancestor of sender and receiver and then down (escalation up, delegation
down; siblings talk through their parent). ``build_tree`` in
``debatecode.topology.tree_builder`` builds one from agent roles.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from debatecode.topology.base import Topology, check_agents
from debatecode.topology.concerns import PHASE_CONCERNS, normalise_phase, role_concern

__all__ = ["TreeNode", "TreeTopology"]


@dataclass(frozen=True)
class TreeNode:
    """A snapshot of one node: who it is, where it hangs, what it answers for."""

    agent_id: str
    role: str
    parent: str | None
    children: tuple[str, ...]
    level: int
    """Depth below the root (the root is level 0)."""
    concern: str
    """The concern this node's subtree answers for (see ``debatecode.topology.concerns``)."""


class TreeTopology(Topology):
    """A rooted tree of agents.

    ``children`` maps an agent to its children, in order; agents missing from
    it have none. ``roles`` gives each agent's role (default ``""``), from
    which its concern follows.

    Raises:
        ValueError: from the constructor, when the mapping is not one tree
            rooted at ``root`` (an agent with two parents, the root as a child,
            a cycle, or a node not reachable from the root).
    """

    name = "tree"

    def __init__(
        self, root: str, children: Mapping[str, Sequence[str]], roles: Mapping[str, str] | None = None
    ) -> None:
        self._root = root
        self._children: dict[str, list[str]] = {root: []}
        self._parent: dict[str, str | None] = {root: None}
        for parent, kids in children.items():
            self._children.setdefault(parent, [])
            for kid in kids:
                if kid == root or (kid in self._parent and self._parent[kid] is not None):
                    raise ValueError(f"{kid!r} has more than one parent, or the root is listed as a child")
                self._parent[kid] = parent
                self._children[parent].append(kid)
                self._children.setdefault(kid, [])
        for parent in self._children:
            self._parent.setdefault(parent, None)
        reachable = self._bfs(root)
        if len(reachable) != len(self._children):
            stray = sorted(set(self._children) - set(reachable))
            raise ValueError(f"not a single tree rooted at {root!r}; not reachable from it: {', '.join(stray)}")
        check_agents(reachable)
        roles = roles or {}
        self._roles = {agent: roles.get(agent, "") for agent in reachable}
        self._concerns = {agent: role_concern(role) for agent, role in self._roles.items()}

    # -- structure ---------------------------------------------------------------------------

    @property
    def root(self) -> str:
        """The agent at level 0."""
        return self._root

    @property
    def agents(self) -> list[str]:
        """Every agent, level by level from the root."""
        return self._bfs(self._root)

    def node(self, agent: str) -> TreeNode:
        """A snapshot of ``agent``'s node.

        Raises:
            KeyError: ``agent`` is not in the tree.
        """
        self._require(agent)
        return TreeNode(
            agent_id=agent,
            role=self._roles[agent],
            parent=self._parent[agent],
            children=tuple(self._children[agent]),
            level=len(self._ancestors(agent)) - 1,
            concern=self._concerns[agent],
        )

    def nodes(self) -> list[TreeNode]:
        """Snapshots of every node, level by level."""
        return [self.node(agent) for agent in self.agents]

    def subtree(self, agent: str) -> list[str]:
        """``agent`` and everyone below it, level by level.

        Raises:
            KeyError: ``agent`` is not in the tree.
        """
        self._require(agent)
        return self._bfs(agent)

    # -- the Topology contract ---------------------------------------------------------------

    def neighbours(self, agent: str) -> list[str]:
        """The parent (if any) then the children.

        Raises:
            KeyError: ``agent`` is not in the tree.
        """
        self._require(agent)
        parent = self._parent[agent]
        return ([parent] if parent is not None else []) + list(self._children[agent])

    def route(self, src: str, dst: str) -> list[str]:
        """Up from ``src`` to the lowest common ancestor, then down to ``dst``.

        Raises:
            KeyError: either agent is not in the tree.
        """
        self._require(src, dst)
        up = self._ancestors(src)
        down = self._ancestors(dst)
        on_down = set(down)
        common = next(agent for agent in up if agent in on_down)
        return up[: up.index(common) + 1] + down[: down.index(common)][::-1]

    def broadcast_order(self) -> list[str]:
        """Level by level from the root (delegation order)."""
        return self.agents

    def coordinator(self) -> str:
        return self._root

    def select_leader(self, phase: str | None = None) -> str:
        """The node responsible for ``phase``'s concern: the highest node of that concern, else the root.

        ``None`` means the whole debate, led by the root. The phase-to-concern
        mapping is ``debatecode.topology.concerns.PHASE_CONCERNS``.

        Raises:
            ValueError: ``phase`` is not a protocol phase; the message lists them.
        """
        if phase is None:
            return self._root
        key = normalise_phase(phase)
        if key not in PHASE_CONCERNS:
            raise ValueError(f"unknown phase {phase!r}; known phases: {', '.join(PHASE_CONCERNS)}")
        concern = PHASE_CONCERNS[key]
        return next((agent for agent in self.agents if self._concerns[agent] == concern), self._root)

    def parallel_groups(self, phase: str | None = None) -> list[list[str]]:
        """The independent subtrees under ``phase``'s leader, each level by level.

        The leader coordinates and is in no group, unless it has no children,
        in which case it is the only group.

        Raises:
            ValueError: ``phase`` is not a protocol phase.
        """
        leader = self.select_leader(phase)
        return [self._bfs(child) for child in self._children[leader]] or [[leader]]

    def remove(self, agent: str) -> None:
        """Take a failed agent out and re-home its children.

        Each child moves to one of the failed agent's siblings: a sibling of
        the child's own concern if there is one, then the sibling with the
        fewest children, then the earliest. With no siblings the children move
        up to the failed agent's parent, in its place. If the root fails, its
        first design-concern child (else its first child) becomes the root and
        adopts the other children. Levels follow from the new parents.

        Raises:
            KeyError: ``agent`` is not in the tree.
            ValueError: ``agent`` is the last one left.
        """
        self._check_removable(agent)
        orphans = self._children.pop(agent)
        parent = self._parent.pop(agent)
        del self._roles[agent], self._concerns[agent]
        if parent is None:
            heir = min(orphans, key=lambda o: (self._concerns[o] != "design", orphans.index(o)))
            self._root = heir
            self._parent[heir] = None
            for orphan in orphans:
                if orphan != heir:
                    self._adopt(heir, orphan)
            return
        place = self._children[parent].index(agent)
        self._children[parent].remove(agent)
        siblings = list(self._children[parent])
        if not siblings:
            self._children[parent][place:place] = orphans
            for orphan in orphans:
                self._parent[orphan] = parent
            return
        for orphan in orphans:
            home = min(
                siblings,
                key=lambda s: (self._concerns[s] != self._concerns[orphan], len(self._children[s]), siblings.index(s)),
            )
            self._adopt(home, orphan)

    # -- helpers -----------------------------------------------------------------------------

    def _adopt(self, parent: str, child: str) -> None:
        self._children[parent].append(child)
        self._parent[child] = parent

    def _ancestors(self, agent: str) -> list[str]:
        """``[agent, parent, ..., root]``."""
        chain = [agent]
        while (parent := self._parent[chain[-1]]) is not None:
            chain.append(parent)
        return chain

    def _bfs(self, start: str) -> list[str]:
        order: list[str] = []
        queue = deque([start])
        seen = {start}
        while queue:
            agent = queue.popleft()
            order.append(agent)
            for child in self._children.get(agent, []):
                if child not in seen:
                    seen.add(child)
                    queue.append(child)
        return order
