"""Topologies: who hears whom during a debate, and planning styles.

``mesh``, ``star``, ``chain`` and ``tree`` (built from roles with
``build_tree``), created by name with ``create_topology``; CPDE/DPDE chosen
with ``select_planning_style``. See ``docs/voting-and-topologies.md``.
"""

from debatecode.topology.base import Topology
from debatecode.topology.chain import ChainTopology
from debatecode.topology.factory import TOPOLOGY_NAMES, create_topology
from debatecode.topology.mesh import MeshTopology
from debatecode.topology.planning import PlanningStyle, select_planning_style
from debatecode.topology.star import StarTopology
from debatecode.topology.tree import TreeNode, TreeTopology
from debatecode.topology.tree_builder import build_tree

__all__ = [
    "TOPOLOGY_NAMES",
    "ChainTopology",
    "MeshTopology",
    "PlanningStyle",
    "StarTopology",
    "Topology",
    "TreeNode",
    "TreeTopology",
    "build_tree",
    "create_topology",
    "select_planning_style",
]
