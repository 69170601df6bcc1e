"""The topology package's public surface is pinned."""

from __future__ import annotations

import debatecode.topology as topology


def test_topology_all_is_pinned() -> None:
    assert topology.__all__ == [
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
    for name in topology.__all__:
        assert getattr(topology, name) is not None


def test_topology_modules_import_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, debatecode.topology, debatecode.voting, debatecode.protocol.ordering, debatecode.protocol.transcript, debatecode.protocol.satisfaction, debatecode.protocol.allowance, debatecode.protocol.reply_quality;"
        "print(sorted(m for m in ('litellm', 'docker', 'sqlalchemy', 'git', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
