"""One scripted debate on examples/tasks/add.md against any store URL, with the dummy sandbox. TEST-ONLY.

The add.md debater answers for every agent, the dummy sandbox runs the tests on
the host (no Docker), and the session goes to the store at ``store_url``: two
agents' proposals, the hook and early-stop turns, and a convergence, enough
turns to be a real session and fast enough to run several at once.

``python -m tests.support.scripted_solve STORE_URL OUT_DIR`` (from the repository
root) runs one in its own process and prints ``<session id> <status>``, so tests
can start several against one store, the way Ray workers share one.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

from tests.support.debaters import add_debater
from tests.support.dummy_sandbox import DummySandbox

from debatecode import DebateResult, Services, load_config, solve
from debatecode.llm.client import LLMClient
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.store import open_store

__all__ = ["ADD_TASK", "LIGHT_PROTOCOL", "SCRIPTED_PROTOCOL", "scripted_solve"]

ADD_TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "add.md"

LIGHT_PROTOCOL: dict[str, Any] = {
    "rounds": 0,
    "phases.dehallucination": False,
    "phases.self_evolvement": False,
    "phases.critique": False,
    "phases.review": False,
    "phases.optimization": False,
    "phases.adversarial": False,
    "participants.contrarian": False,
    "participants.moonshot": False,
    "participants.teacher": False,
    "memory.enabled": False,
}
"""Proposal and convergence only: enough to end a session, fast."""

SCRIPTED_PROTOCOL: dict[str, Any] = {**LIGHT_PROTOCOL, "agents": 2, "rounds": 1, "phases.critique": True}
"""Two agents, one round at most (the scripted candidates agree, so the debate stops early)."""


def scripted_solve(store_url: str, out: Path) -> DebateResult:
    """Run the scripted add.md debate to its end, storing it at ``store_url``; ``out`` gets its files."""
    name = f"store-{uuid.uuid4().hex[:8]}"
    register_scripted(name, ScriptedModel(fn=add_debater(style_variants=False)))
    try:
        config = load_config(
            overrides={"model": f"scripted/{name}", "out": out, "store_url": store_url, **SCRIPTED_PROTOCOL},
            use_file=False,
        )
        services = Services(
            llm=LLMClient(config.llm, token_budget=config.token_budget),
            sandbox=DummySandbox(),
            store=open_store(store_url),
        )
        try:
            return solve(ADD_TASK, config, services=services)
        finally:
            services.store.close()
    finally:
        unregister_scripted(name)


if __name__ == "__main__":
    url, out_dir = sys.argv[1:3]
    result = scripted_solve(url, Path(out_dir))
    print(result.session.id, result.status, flush=True)
