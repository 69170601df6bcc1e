"""The session pages beyond the live fold: tests case by case, model calls, versions side by side, the timeline's
stages, and the session list's filters and live totals."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from tests.server.conftest import ADD_TASK_TEXT, ROUNDS, server_config
from tests.server.test_dashboard import OPEN, elements, one, wait_for

from debatecode.llm.scripted import register_scripted, unregister_scripted

ZERO_TASK = ADD_TASK_TEXT.replace(
    "def test_is_commutative():",
    "def test_zero_is_neutral():\n    assert add(5, 0) == 5\n\n\ndef test_is_commutative():",
)
"""add.md with a test that the special case for zero fails."""


async def _finished(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    started = await client.post("/v1/sessions", json=body)
    assert started.status_code == 202, started.text
    session_id: str = started.json()["id"]
    detail = await wait_for(client, session_id, lambda d: d["status"] not in OPEN)
    assert detail["status"] == "completed", detail
    return session_id


async def test_a_code_debate_shows_each_test_each_model_call_and_two_versions_side_by_side(
    tmp_path: Path, buggy_model: str, make_app: Callable[..., Any]
) -> None:
    app = make_app(server_config(tmp_path, buggy_model))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        body = {"task": ZERO_TASK, "overrides": {"agents": 2, "phases.adjudication": False}}
        session_id = await _finished(client, body)
        html = (await client.get(f"/sessions/{session_id}")).text
        turns = app.state.ctx.store.turns(session_id)
        versions = app.state.ctx.store.versions(session_id)

        runs = {run["data-agent"]: run for run in elements(html, data_testid="test-run")}
        assert {"agent-1", "agent-2"} <= set(runs)
        outcomes = [case["data-outcome"] for case in elements(html, data_testid="test-case")]
        assert "passed" in outcomes and set(outcomes) - {"passed"}, "the buggy draft fails a test, the good one passes"
        assert "open" in runs["agent-2"] and "open" not in runs["agent-1"], "a run with a failure starts unfolded"
        assert elements(html, data_testid="test-failure"), "the failing case shows its message"
        assert "assert" in html.split('data-testid="test-failure"', 1)[1][:2000].lower()

        calls = elements(html, data_testid="model-call")
        answered = [t for t in turns if t.provider == "scripted"]
        assert [int(c["data-seq"] or 0) for c in calls] == [t.seq for t in answered]
        assert "temperature=" in html and "seed=" in html, "each call shows its sampling parameters"

        by_agent = {v.agent_id: v.version_number for v in versions}
        a, b = by_agent["agent-1"], by_agent["agent-2"]
        fragment = (await client.get(f"/sessions/{session_id}/compare", params={"a": a, "b": b})).text
        one(fragment, data_testid="side-by-side")
        assert 'class="changed"' in fragment or 'class="added"' in fragment
        assert "return a + 1" in fragment and "return a + b" in fragment
        inline = (await client.get(f"/sessions/{session_id}", params={"a": a, "b": b})).text
        assert 'data-testid="side-by-side"' in inline, "without a script, the form reloads the page with both"
        missing = (await client.get(f"/sessions/{session_id}", params={"a": a, "b": 99})).text
        assert "it has no code version 99" in missing


async def test_round_zero_steps_are_before_or_after_the_rounds(
    tmp_path: Path, unsatisfied_model: str, make_app: Callable[..., Any]
) -> None:
    app = make_app(server_config(tmp_path, unsatisfied_model, **ROUNDS))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        session_id = await _finished(client, {"task": ADD_TASK_TEXT})
        html = (await client.get(f"/sessions/{session_id}")).text
    stages = {
        (step["data-phase"], step["data-round"]): html.split(
            f'data-phase="{step["data-phase"]}" data-round="{step["data-round"]}"', 1
        )[1]
        .split('data-field="stage">', 1)[1]
        .split("<", 1)[0]
        for step in elements(html, data_testid="phase")
    }
    assert stages[("proposal", "0")] == "before the rounds"
    assert stages[("critique", "1")] == "round 1"
    assert stages[("convergence", "0")] == "after the rounds", "no second 'round 0' after round 1"


async def test_the_list_filters_by_kind_status_and_words_and_counts_a_running_session_live(
    tmp_path: Path, unsatisfied_model: str, make_app: Callable[..., Any]
) -> None:
    app = make_app(server_config(tmp_path, unsatisfied_model, **ROUNDS))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        done = await _finished(client, {"task": ADD_TASK_TEXT, "overrides": {"rounds": 0}})
        waiting = (await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, "checkpoints": True})).json()["id"]
        await wait_for(client, waiting, lambda d: d["waiting_checkpoint"] is not None)

        async def listed(**params: str) -> list[str]:
            rows = (await client.get("/v1/sessions", params=params)).json()
            page = (await client.get("/", params=params)).text
            shown = [row["data-session"] for row in elements(page, data_testid="session-row")]
            assert shown == [row["id"] for row in rows], "the page lists what the API lists"
            return shown

        assert set(await listed()) == {done, waiting}
        assert await listed(status="completed") == [done]
        assert await listed(status="running") == [waiting]
        assert await listed(kind="design") == []
        assert set(await listed(kind="code", q="add TWO")) == {done, waiting}
        assert await listed(q=done[:8]) == [done]
        assert await listed(q="no such words") == []
        assert "No session matches these filters" in (await client.get("/", params={"q": "zzz"})).text

        row = next(r for r in (await client.get("/v1/sessions")).json() if r["id"] == waiting)
        assert row["status"] == "running" and row["prompt_tokens"] + row["completion_tokens"] > 0
        assert row["duration_s"] > 0, "a running session's time counts up"
        page = (await client.get("/")).text
        assert one(page, data_testid="filter-kind") is not None
        await client.post(f"/v1/sessions/{waiting}/cancel")


async def test_a_design_debate_shows_each_answer_to_its_convergence_poll(
    tmp_path: Path, make_app: Callable[..., Any]
) -> None:
    from tests.protocol.design.conftest import SQLITE_QUESTION, DebateScript, RecordingModel

    script = DebateScript(ready=lambda agent, rnd, kind: rnd >= 2, votes=lambda agent, rnd: agent != "contrarian")
    name = f"poll-{uuid.uuid4().hex[:8]}"
    register_scripted(name, RecordingModel(script))
    try:
        app = make_app(server_config(tmp_path, f"scripted/{name}", max_concurrency=8))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            started = (await client.post("/v1/debates", json={"question": SQLITE_QUESTION})).json()
            await wait_for(client, started["id"], lambda d: d["status"] not in OPEN)
            html = (await client.get(f"/sessions/{started['id']}")).text
    finally:
        unregister_scripted(name)
    polled = [t for t in app.state.ctx.store.turns(started["id"]) if t.phase == "poll"]
    answers = elements(html, data_testid="poll-answer")
    assert polled and len(answers) == len(polled), "one row per perspective asked"
    ready = [row["data-ready"] for row in answers]
    assert ready.count("no") == 1 and ready.count("yes") == len(polled) - 1, "the Contrarian alone says no"
    assert f"{len(polled) - 1} of {len(polled)} ready" in html
