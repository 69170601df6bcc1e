"""Whole scripted sessions must stay the same turn for turn while the engine is restructured.

Each case runs one session on scripted models and reduces it to a digest:
every turn (key, prompt, reply, code, status, metadata, test outcomes),
every code version, the stored outcome and the written report, with ids,
timings and paths masked. The digests were recorded before issue 11 split the
debate run into state, dependencies and journal; a refactor that changes what
any agent is shown, asked or credited with fails here.

Re-record (only for an intended behaviour change, and say so in the commit):
``WRITE_GOLDEN_SESSIONS=1 pytest tests/protocol/test_golden_sessions.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from tests.protocol.conftest import ADD_REPLIES, ADD_TASK, MERGE_TASK, REPO, Harness
from tests.support.debaters import add_debater

from debatecode.llm.scripted import ScriptedModel
from debatecode.task import load_task

GOLDEN = Path(__file__).parent / "golden" / "sessions.json"
_WRITE = os.environ.get("WRITE_GOLDEN_SESSIONS") == "1"

_HEX_ID = re.compile(r"\b[0-9a-f]{12,40}\b")
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
_SANDBOX_DIR = re.compile(r"/tmp/debatecode-dummy-\w+")
_SEQ = re.compile(r"^\| \d+ \||<summary>#\d+ ")
_VOLATILE = {"id", "session_id", "turn_id", "version_id", "created_at", "updated_at", "commit_sha", "duration_s"}


def _mask(value: Any, tmp: str) -> Any:
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in _VOLATILE or k.endswith("_s") else _mask(v, tmp)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, tmp) for v in value]
    if isinstance(value, str):
        value = _SANDBOX_DIR.sub("<sandbox>", value.replace(tmp, "<tmp>").replace(str(REPO), "<repo>"))
        return _TIMING.sub("<t>", _HEX_ID.sub("<id>", value))
    return value


_CASES: dict[str, dict[str, Any]] = {
    "shipped-replies": {"model": "file", "task": "add"},
    "buggy-tree-3-rounds": {
        "model": "debater",
        "buggy": ("agent-2",),
        "task": "add",
        "overrides": {"rounds": 3, "topology.type": "tree", "agents": 4},
    },
    "unsatisfied-mesh": {
        "model": "debater",
        "satisfaction": 40,
        "task": "add",
        "overrides": {"rounds": 2, "topology.type": "mesh", "agents": 3, "convergence.voting": "majority"},
    },
    "reflexion-strategy": {"model": "debater", "task": "add", "overrides": {"strategy": "reflexion", "agents": 1}},
    "cpde-round-budget": {
        "model": "debater",
        "task": "add",
        "overrides": {"topology.planning": "cpde", "llm.round_token_budget": 400, "rounds": 2},
    },
}


async def _digest(harness: Harness, name: str, case: dict[str, Any]) -> dict[str, Any]:
    if case["model"] == "file":
        model = f"scripted:{ADD_REPLIES}"
    else:
        fn = add_debater(buggy=case.get("buggy", ()), satisfaction=case.get("satisfaction", 95))
        model = _register(harness, name, fn)
    config = harness.config(model, **{k.replace(".", "__"): v for k, v in case.get("overrides", {}).items()})
    engine, store = harness.engine(config)
    task = load_task(ADD_TASK if case["task"] == "add" else MERGE_TASK)
    result = await engine.solve(task)
    session = store.get_session(result.session.id)
    turns = [
        {
            "key": t.key,
            "phase": t.phase,
            "round": t.round,
            "agent": t.agent_id,
            "role": t.agent_role,
            "status": t.status,
            "prompt": t.prompt,
            "content": t.content,
            "code": t.code,
            "confidence": t.confidence,
            "tool_calls": t.tool_calls,
            "metadata": t.metadata,
            "tests": [(c["name"], c["suite"], c["outcome"]) for c in (t.test_results or {}).get("cases", [])],
            "tokens": (t.prompt_tokens, t.completion_tokens),
        }
        for t in sorted(store.turns(session.id), key=lambda t: t.key)
    ]
    versions = [
        {
            "agent": v.agent_id,
            "code": v.code,
            "tests": (v.tests_passed, v.tests_total),
            "quality": v.quality_score,
            "metrics": {k: v.metrics.get(k) for k in ("suites", "summary")},
        }
        for v in store.versions(session.id)
    ]
    versions.sort(key=lambda v: json.dumps(v, sort_keys=True, default=str))
    digest = {
        "status": result.status,
        "error": result.error,
        "passed": (result.passed, result.total),
        "rounds": session.total_rounds,
        "tokens": (session.prompt_tokens, session.completion_tokens),
        "outcome": session.outcome,
        "turns": turns,
        "versions": versions,
        # Concurrent turns are recorded in completion order, so the report is compared line by line, sorted.
        "report": sorted(
            _SEQ.sub("<seq>", line) for line in result.report_path.read_text(encoding="utf-8").splitlines()
        ),
        "code": result.code,
    }
    masked = _mask(json.loads(json.dumps(digest, default=str)), str(harness.tmp_path))
    return masked  # type: ignore[no-any-return]


def _register(harness: Harness, name: str, fn: Any) -> str:
    from debatecode.llm.scripted import register_scripted

    register_scripted(name, ScriptedModel([], fn=fn))
    harness._names.append(name)
    return f"scripted/{name}"


@pytest.mark.parametrize("name", sorted(_CASES))
async def test_a_scripted_session_is_unchanged_turn_for_turn(harness: Harness, name: str) -> None:
    digest = await _digest(harness, f"golden-{name}", _CASES[name])
    recorded: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    if _WRITE:
        recorded[name] = digest
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    if os.environ.get("GOLDEN_DUMP_DIR"):  # for a readable diff of a failure
        dump = Path(os.environ["GOLDEN_DUMP_DIR"], f"{name}.json")
        await asyncio.to_thread(dump.write_text, json.dumps(digest, indent=1, sort_keys=True))
    assert name in recorded, f"no golden digest for {name}; record it with WRITE_GOLDEN_SESSIONS=1"
    expected = recorded[name]
    for key in ("status", "error", "passed", "rounds", "tokens", "code"):
        assert digest[key] == expected[key], key
    assert [t["key"] for t in digest["turns"]] == [t["key"] for t in expected["turns"]]
    for got, want in zip(digest["turns"], expected["turns"], strict=True):
        assert got == want, f"turn {want['key']} differs"
    assert digest["versions"] == expected["versions"]
    assert digest["outcome"] == expected["outcome"]
    assert digest["report"] == expected["report"]
