"""The dashboard's pages over the ASGI transport: sessions, the live view's first paint, escaping, benchmarks."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import ADD_TASK_TEXT, ROUNDS, server_config
from tests.support.scripted_models import registered_model

from debatecode.llm.scripted import ScriptedModel
from debatecode.server.bench_pages import BenchFolder, drill_down, find_bench_folders, served_file
from debatecode.server.dashboard import diff_lines, without_section
from debatecode.server.rendering import render_markdown
from debatecode.server.session_view import fold_events, reply_snippet
from debatecode.store.records import CodeVersionRecord, EventRecord, GateRecord, SessionRecord, TurnRecord

HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'
OPEN = ("pending", "running")

# -- helpers ---------------------------------------------------------------------------------


class _Elements(HTMLParser):
    """Every start tag's attributes, and the text inside elements with an id (for looking them up)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(html: str, **match: str) -> list[dict[str, str | None]]:
    """Attributes of every element whose attributes include ``match`` (``data_testid`` for ``data-testid``)."""
    parser = _Elements()
    parser.feed(html)
    wanted = {key.replace("_", "-"): value for key, value in match.items()}
    return [attrs for _, attrs in parser.tags if all(attrs.get(k) == v for k, v in wanted.items())]


def one(html: str, **match: str) -> dict[str, str | None]:
    found = elements(html, **match)
    assert len(found) == 1, f"expected one element with {match}, found {len(found)}"
    return found[0]


async def wait_for(
    client: httpx.AsyncClient, session_id: str, check: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        detail: dict[str, Any] = (await client.get(f"/v1/sessions/{session_id}")).json()
        if check(detail):
            return detail
        await asyncio.sleep(0.05)
    raise AssertionError(f"session {session_id} never got there; last seen {detail}")


async def solved(client: httpx.AsyncClient, **body: Any) -> str:
    started = await client.post("/v1/sessions", json={"task": ADD_TASK_TEXT, **body})
    assert started.status_code == 202, started.text
    session_id: str = started.json()["id"]
    await wait_for(client, session_id, lambda d: d["status"] not in OPEN)
    return session_id


FAST_GATES = {"gates.poll_s": 0.05}
"""Gate decisions are seen within 50 ms."""


# -- the session list and a finished session ----------------------------------------------------


async def test_session_list_shows_each_session_with_its_figures(client: httpx.AsyncClient, app: Any) -> None:
    session_id = await solved(client)
    response = await client.get("/")
    assert response.status_code == 200
    assert "script-src 'self'" in response.headers["content-security-policy"]
    row = one(response.text, data_testid="session-row")
    assert row["data-session"] == session_id
    record = app.state.ctx.store.get_session(session_id)
    assert f'href="/sessions/{session_id}"' in response.text
    assert "4/4" in response.text and "completed" in response.text and record.model in response.text
    assert f"{record.prompt_tokens + record.completion_tokens:,}" in response.text


async def test_empty_session_list_says_how_to_start(client: httpx.AsyncClient) -> None:
    response = await client.get("/")
    assert response.status_code == 200
    assert elements(response.text, data_testid="session-row") == []
    assert "No sessions yet" in response.text


async def test_finished_session_page_has_cards_report_versions_and_every_turn(
    client: httpx.AsyncClient, app: Any
) -> None:
    session_id = await solved(client)
    response = await client.get(f"/sessions/{session_id}")
    assert response.status_code == 200
    html = response.text
    store = app.state.ctx.store
    record = store.get_session(session_id)
    assert one(html, id="session")["data-live"] == "false"
    assert {card["data-agent"] for card in elements(html, data_testid="agent-card")} >= {"agent-1", "agent-2"}
    assert "4/4" in html
    status = one(html, data_testid="session-status")
    assert status["class"] == "status status-completed"
    assert "hidden" in one(html, data_testid="cancel-button"), "a finished session cannot be cancelled"
    assert "hidden" in one(html, data_testid="checkpoint-panel") and "hidden" in one(html, data_testid="gate-panel")
    assert one(html, data_testid="report")
    assert "<h1>debatecode report: Add two numbers</h1>" in html, "report.md is rendered from markdown"
    assert len(elements(html, data_testid="turn")) == len(store.turns(session_id))
    versions = store.versions(session_id)
    assert len(elements(html, data_testid="version")) == len(versions)
    committed = [v.commit_sha for v in versions if v.commit_sha]
    assert committed and all(sha in html for sha in committed), "each version names its git commit"
    assert record.branch in html
    assert '<span class="add">+    return a + b</span>' in html


async def test_transcript_fragment_is_the_transcript_section_alone(
    client: httpx.AsyncClient, app: Any, tmp_path: Path
) -> None:
    session_id = _hostile_session(app, tmp_path)
    response = await client.get(f"/sessions/{session_id}/transcript")
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="transcript"')
    assert "<html" not in response.text
    assert one(response.text, data_testid="report")
    assert len(elements(response.text, data_testid="turn")) == 1
    assert elements(response.text, data_testid="version", data_version="1")


async def test_unknown_session_is_an_html_404(client: httpx.AsyncClient) -> None:
    for path in ("/sessions/nosuchsession", "/sessions/nosuchsession/transcript"):
        response = await client.get(path)
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")
        assert one(response.text, data_testid="not-found")


async def test_links_start_with_the_root_path(app: Any) -> None:
    transport = httpx.ASGITransport(app=app, root_path="/debatecode")
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/debatecode/")
    assert response.status_code == 200
    assert 'href="/debatecode/static/dashboard.css"' in response.text
    assert one(response.text, data_page="sessions")["data-root"] == "/debatecode"


# -- the live view while a session waits --------------------------------------------------------


async def test_page_offers_the_checkpoint_then_the_gate_while_the_session_waits(
    tmp_path: Path, unsatisfied_model: str, make_app: Callable[..., Any]
) -> None:
    app = make_app(server_config(tmp_path, unsatisfied_model, **ROUNDS, **FAST_GATES))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        started = await client.post(
            "/v1/sessions", json={"task": ADD_TASK_TEXT, "checkpoints": True, "gates": ["convergence"]}
        )
        session_id = started.json()["id"]
        await wait_for(client, session_id, lambda d: d["waiting_checkpoint"] == 1)
        html = (await client.get(f"/sessions/{session_id}")).text
        assert one(html, id="session")["data-live"] == "true"
        assert "hidden" not in one(html, data_testid="checkpoint-panel")
        assert "hidden" in one(html, data_testid="gate-panel")
        assert "hidden" not in one(html, data_testid="cancel-button")
        assert one(html, data_testid="checkpoint-continue")["data-action"] == "continue"
        assert re.search(r"round 1: leader agent-1 (\d+)/\1", html), "the checkpoint's summary is shown"
        assert int(one(html, id="session")["data-after"] or 0) > 0, "the stream resumes after what the page shows"
        assert elements(html, data_testid="phase", data_phase="review", data_round="1")

        await client.post(f"/v1/sessions/{session_id}/checkpoint", json={"action": "continue"})
        detail = await wait_for(client, session_id, lambda d: bool(d["pending_gates"]))
        html = (await client.get(f"/sessions/{session_id}")).text
        assert "hidden" in one(html, data_testid="checkpoint-panel")
        gate = one(html, data_testid="gate-panel")
        assert "hidden" not in gate and gate["data-gate"] == detail["pending_gates"][0]
        assert "checkpoint after round 1: continue" in html

        await client.post(f"/v1/sessions/{session_id}/gates/approve", json={"comment": "fine"})
        await wait_for(client, session_id, lambda d: d["status"] not in OPEN)
        html = (await client.get(f"/sessions/{session_id}")).text
        assert one(html, data_testid="session-status")["class"] == "status status-completed"
        assert "hidden" in one(html, data_testid="gate-panel")
        assert "convergence gate: approved by web (fine)" in html


async def test_a_session_run_elsewhere_is_offered_its_gates_but_not_its_checkpoints(
    client: httpx.AsyncClient, app: Any
) -> None:
    """A ``debatecode solve`` in another process: its gates are in the store, its checkpoints in its terminal."""
    store = app.state.ctx.store
    store.create_session(
        SessionRecord(id="elsewhere01", task_title="t", task_path="t.md", task_hash="0", status="running")
    )
    for kind, data in [
        ("CheckpointRequested", {"round": 1, "summary": "round 1"}),
        ("GateRequested", {"phase": "proposal", "summary": "s", "gate_id": "g-gone"}),
    ]:
        store.add_event(EventRecord(session_id="elsewhere01", type=kind, data=data))
    html = (await client.get("/sessions/elsewhere01")).text
    head = one(html, id="session")
    assert (head["data-live"], head["data-here"]) == ("true", "false"), "followed through the stream, not run here"
    assert "hidden" in one(html, data_testid="checkpoint-panel")
    assert "hidden" in one(html, data_testid="gate-panel"), "a gate no longer pending in the store is not offered"
    assert "hidden" in one(html, data_testid="cancel-button")
    store.add_gate(GateRecord(id="g-open", session_id="elsewhere01", phase="proposal", summary="look"))
    gate = one((await client.get("/sessions/elsewhere01")).text, data_testid="gate-panel")
    assert "hidden" not in gate and gate["data-gate"] == "g-open"


# -- hostile content -------------------------------------------------------------------------------


def _hostile_session(app: Any, tmp_path: Path) -> str:
    store = app.state.ctx.store
    out = tmp_path / "hostile-out"
    out.mkdir()
    (out / "report.md").write_text(
        f"# Report\n\n{HOSTILE}\n\n[click](javascript:alert(1)) and ![x](javascript:alert(2))\n", encoding="utf-8"
    )
    session_id = "hostile0001"
    store.create_session(
        SessionRecord(
            id=session_id,
            task_title=HOSTILE,
            task_path="t.md",
            task_hash="0",
            model=HOSTILE,
            status="completed",
            out_dir=str(out),
            branch=HOSTILE,
            error=HOSTILE,
        )
    )
    turn = TurnRecord(
        id="t1",
        session_id=session_id,
        seq=1,
        key="r0/proposal/a/draft",
        round=0,
        phase=HOSTILE,
        agent_id=HOSTILE,
        agent_role="generator",
        provider="scripted",
        prompt=HOSTILE,
        content=f"Reply {HOSTILE}",
        code=HOSTILE,
    )
    store.add_turn(turn)
    store.add_code_version(
        CodeVersionRecord(
            id="v1",
            session_id=session_id,
            turn_id="t1",
            agent_id=HOSTILE,
            code=HOSTILE,
            version_number=1,
            commit_sha=HOSTILE,
            diff_from_previous=f"+{HOSTILE}\n",
        )
    )
    for kind, data in [
        ("SessionStarted", {"agents": [HOSTILE]}),
        ("PhaseStarted", {"phase": HOSTILE, "round": 0}),
        ("TurnCompleted", {"turn": turn.model_dump(mode="json")}),
        ("VoteCast", {"voter": HOSTILE, "choice": HOSTILE}),
        ("RoundCompleted", {"round": 1, "scores": {HOSTILE: 1}, "leader": HOSTILE, "stop_reason": HOSTILE}),
        ("GateDecided", {"phase": HOSTILE, "decision": "approved", "reviewer": HOSTILE, "reason": HOSTILE}),
    ]:
        store.add_event(EventRecord(session_id=session_id, type=kind, data=data))
    return session_id


async def test_stored_job_content_is_escaped_everywhere(client: httpx.AsyncClient, app: Any, tmp_path: Path) -> None:
    session_id = _hostile_session(app, tmp_path)
    for path in ("/", f"/sessions/{session_id}", f"/sessions/{session_id}/transcript"):
        html = (await client.get(path)).text
        assert "<script>alert" not in html, path
        assert "<img src=x" not in html, path
        assert 'href="javascript' not in html and 'src="javascript' not in html, path
        assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html, path
    page = (await client.get(f"/sessions/{session_id}")).text
    # The only scripts are the dashboard's own file; the agent's name stays an attribute value.
    assert [attrs.get("src") for attrs in elements(page) if "src" in attrs] == ["/static/dashboard.js"]
    cards = [card["data-agent"] for card in elements(page, data_testid="agent-card")]
    assert cards == [HOSTILE, ""], "the agent's card, and the blank one in the <template> new cards are made from"


def test_markdown_shows_raw_html_as_text_and_drops_script_links() -> None:
    html = render_markdown(f"{HOSTILE}\n\n[a](javascript:alert(1)) | [b](https://example.org)\n\n|x|y|\n|-|-|\n|1|2|\n")
    assert "<script>" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html
    assert '<a href="https://example.org">b</a>' in html
    assert "<table>" in html, "tables are rendered"


def test_relative_images_point_at_the_folder_route_and_others_are_kept() -> None:
    html = render_markdown("![p](plot.png) ![q](/static/x.png) ![r](https://x.org/y.png)", image_base="/bench/r/files/")
    assert 'src="/bench/r/files/plot.png"' in html
    assert 'src="/static/x.png"' in html and 'src="https://x.org/y.png"' in html


# -- the fold behind the live view -------------------------------------------------------------------


def _events(*items: tuple[str, dict[str, Any]]) -> list[EventRecord]:
    return [EventRecord(id=n, session_id="s", type=kind, data=data) for n, (kind, data) in enumerate(items, start=1)]


def test_fold_tracks_cards_tests_phases_rounds_and_pending_questions() -> None:
    passed = {"cases": [{"outcome": "passed"}, {"outcome": "passed"}, {"outcome": "failed"}]}
    view = fold_events(
        _events(
            ("SessionStarted", {"agents": ["agent-1", "agent-2"]}),
            ("PhaseStarted", {"phase": "proposal", "round": 0}),
            ("AgentStatusChanged", {"agent_id": "agent-1", "status": "thinking", "phase": "proposal"}),
            ("TestsRun", {"agent_id": "agent-1", "report": passed}),
            (
                "TurnCompleted",
                {"turn": {"agent_id": "agent-1", "content": "Plain.\n```python\nx\n```", "prompt_tokens": 7}},
            ),
            ("TurnCompleted", {"turn": {"agent_id": "human", "provider": "human", "completion_tokens": 3}}),
            ("PhaseCompleted", {"phase": "proposal", "round": 0, "summary": "2 candidates"}),
            ("RoundCompleted", {"round": 1, "scores": {"judge": 60}, "leader": "agent-2"}),
            ("CheckpointRequested", {"round": 1, "summary": "round 1"}),
            ("GateRequested", {"phase": "convergence", "summary": "s", "gate_id": "g1"}),
        )
    )
    card = view.agents["agent-1"]
    assert (card.status, card.phase, card.tests_passed, card.tests_total) == ("thinking", "proposal", 2, 3)
    assert card.snippet == "Plain.", "code blocks are left out of the snippet"
    assert "human" not in view.agents, "decisions are not an agent's card"
    assert (view.turns, view.tokens, view.leader, view.last_event_id) == (2, 10, "agent-2", 10)
    assert [(p.phase, p.done, p.summary) for p in view.phases] == [("proposal", True, "2 candidates")]
    assert view.checkpoint is not None and view.checkpoint.round == 1
    assert view.gate is not None and view.gate.gate_id == "g1"
    fold_events(
        _events(
            ("CheckpointDecided", {"round": 1, "action": "guide", "guidance": "shorter"}),
            ("GateDecided", {"phase": "convergence", "decision": "rejected", "reviewer": "ana", "reason": "no"}),
        ),
        view,
    )
    assert view.checkpoint is None and view.gate is None
    assert view.decisions == ["checkpoint after round 1: guide (shorter)", "convergence gate: rejected by ana (no)"]


def test_reply_snippet_is_one_cut_line() -> None:
    assert reply_snippet("a\n\n  b ```py\ncode\n``` c") == "a b c"
    assert reply_snippet("```py\nonly code\n```") == "only code"
    long = reply_snippet("word " * 100, limit=20)
    assert len(long) == 20 and long.endswith("…")


def test_diff_lines_are_marked_by_kind() -> None:
    marked = diff_lines("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n same")
    assert [kind for kind, _ in marked] == ["hunk", "hunk", "hunk", "del", "add", "ctx"]


# -- benchmark pages ---------------------------------------------------------------------------------

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@pytest.fixture
def bench_root(tmp_path: Path) -> Path:
    """A humaneval run, a sweep, a folder of notes only, and a secret beside them."""
    root = tmp_path / "bench"
    humaneval = root / "humaneval-tiny"
    humaneval.mkdir(parents=True)
    rows = [
        {"task_id": "HumanEval/0", "strategy": "single", "passed": True, "session_id": "aaa111", "tokens": 120},
        {
            "task_id": "HumanEval/0",
            "strategy": "debate",
            "passed": False,
            "session_id": "bbb222",
            "status": "budget_exceeded",
        },
        {"task_id": "HumanEval/1", "strategy": "single", "passed": False, "session_id": "../../etc"},
        {"task_id": "HumanEval/1", "strategy": "debate", "passed": True, "session_id": HOSTILE},
    ]
    (humaneval / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    (humaneval / "report.md").write_text(
        f"# HumanEval\n\n| strategy | pass@1 |\n|---|---|\n| single | 0.5 |\n\n![pass@1](plot.png)\n\n{HOSTILE}\n"
    )
    (humaneval / "plot.png").write_bytes(PNG)
    (humaneval / "page.html").write_text("<script>alert(1)</script>")
    (humaneval / "drawing.svg").write_text("<svg onload='alert(1)'/>")
    sweep = root / "sweep-tiny"
    sweep.mkdir()
    sweep_rows = [
        {"values": {"rounds": 1}, "task": "add.md", "repeat": 1, "session_id": "ccc333", "passed": 4, "total": 4},
        {"values": {"rounds": 1}, "task": "add.md", "repeat": 2, "session_id": "ddd444", "passed": 3, "total": 4},
        {"values": {"rounds": 2}, "task": "add.md", "repeat": 1, "passed": 4, "total": 4, "all_passed": True},
    ]
    (sweep / "sweep.jsonl").write_text("".join(json.dumps(r) + "\n" for r in sweep_rows))
    (sweep / "sweep.md").write_text("# Sweep\n\n![rates](sweep.png)\n")
    (sweep / "sweep.png").write_bytes(PNG)
    (root / "notes-only").mkdir()
    (root / "notes-only" / "README.md").write_text("# not a result folder\n")
    (tmp_path / "secret.png").write_bytes(PNG)
    (humaneval / "escape.png").symlink_to(tmp_path / "secret.png")
    for path in humaneval.iterdir():
        os.utime(path, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
    return root


@pytest.fixture
def bench_app(tmp_path: Path, scripted_model: str, make_app: Callable[..., Any], bench_root: Path) -> Any:
    return make_app(server_config(tmp_path, scripted_model), bench_dirs=(bench_root, tmp_path / "missing"))


@pytest.fixture
async def bench_client(bench_app: Any) -> Any:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=bench_app), base_url="http://test") as http:
        yield http


def test_result_folders_are_found_with_unique_names(bench_root: Path, tmp_path: Path) -> None:
    found = find_bench_folders([bench_root, tmp_path / "missing"])
    assert sorted(f.name for f in found) == ["humaneval-tiny", "sweep-tiny"]
    again = find_bench_folders([bench_root, bench_root])
    assert sorted(f.name for f in again) == ["humaneval-tiny", "humaneval-tiny-2", "sweep-tiny", "sweep-tiny-2"]
    assert {f.name: f.kind for f in found} == {"humaneval-tiny": "humaneval", "sweep-tiny": "sweep"}


async def test_bench_list_shows_each_folder_with_its_strategies(bench_client: httpx.AsyncClient) -> None:
    response = await bench_client.get("/bench")
    assert response.status_code == 200
    assert [row["data-bench"] for row in elements(response.text, data_testid="bench-row")] == [
        "sweep-tiny",
        "humaneval-tiny",
    ], "newest first"
    assert "single 1/2; debate 1/2" in response.text
    assert "notes-only" not in response.text


async def test_bench_page_shows_report_plot_and_each_problem(bench_client: httpx.AsyncClient) -> None:
    response = await bench_client.get("/bench/humaneval-tiny")
    assert response.status_code == 200
    html = response.text
    assert "<td>single</td>" in html, "report.md's table is rendered"
    assert 'src="/bench/humaneval-tiny/files/plot.png"' in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    problems = [row["data-problem"] for row in elements(html, data_testid="bench-problem")]
    assert problems == ["HumanEval/0", "HumanEval/1"]
    links = [a["href"] for a in elements(html, data_testid="bench-session")]
    assert links == ["/sessions/aaa111", "/sessions/bbb222"], "only ids that look like session ids are linked"
    assert "budget_exceeded" in html
    assert "1 lines were not JSON objects" in html


async def test_sweep_page_groups_runs_by_their_values(bench_client: httpx.AsyncClient) -> None:
    html = (await bench_client.get("/bench/sweep-tiny")).text
    assert "<th>rounds=1</th>" in html and "<th>rounds=2</th>" in html
    assert "4/4" in html and "3/4" in html
    assert 'src="/bench/sweep-tiny/files/sweep.png"' in html


def test_drill_down_counts_passes_per_strategy() -> None:
    table = drill_down(
        [
            {"task": "a", "values": {"k": 1}, "passed": 2, "total": 2},
            {"task": "a", "values": {"k": 1}, "passed": 1, "total": 2},
            {"task": "b", "strategy": "vote", "passed": True},
            {"task": "b", "strategy": "vote", "passed": 0, "total": 0},
        ]
    )
    assert table.strategies == ["k=1", "vote"]
    assert (table.passed, table.runs) == ({"k=1": 1, "vote": 1}, {"k=1": 2, "vote": 2})
    assert [o.label for o in table.problems[0].outcomes["k=1"]] == ["2/2", "1/2"]


async def test_bench_files_serve_plots_inside_the_folder_only(bench_client: httpx.AsyncClient) -> None:
    plot = await bench_client.get("/bench/humaneval-tiny/files/plot.png")
    assert plot.status_code == 200 and plot.content == PNG
    assert plot.headers["content-type"] == "image/png"
    assert plot.headers["x-content-type-options"] == "nosniff"
    refused = [
        "/bench/humaneval-tiny/files/%2e%2e",
        "/bench/humaneval-tiny/files/..%2Fhumaneval-tiny%2Fplot.png",
        "/bench/humaneval-tiny/files/..%2F..%2Fsecret.png",
        "/bench/humaneval-tiny/files/escape.png",
        "/bench/humaneval-tiny/files/page.html",
        "/bench/humaneval-tiny/files/drawing.svg",
        "/bench/humaneval-tiny/files/missing.png",
        "/bench/%2e%2e/files/secret.png",
        "/bench/notes-only/files/README.md",
    ]
    for path in refused:
        response = await bench_client.get(path)
        assert response.status_code == 404, path
        assert response.content != PNG, path


def test_served_file_refuses_every_way_out(bench_root: Path) -> None:
    folder = BenchFolder("humaneval-tiny", bench_root / "humaneval-tiny")
    assert served_file(folder, "plot.png") == (bench_root / "humaneval-tiny" / "plot.png").resolve()
    for name in ("", ".", "..", "../secret.png", "..\\secret.png", "escape.png", "page.html", "a\x00.png"):
        assert served_file(folder, name) is None, name


async def test_unknown_bench_folder_is_an_html_404(bench_client: httpx.AsyncClient) -> None:
    response = await bench_client.get("/bench/no-such-run")
    assert response.status_code == 404
    assert one(response.text, data_testid="not-found")


def test_report_is_shown_without_its_raw_html_transcript() -> None:
    report = "# R\n\n## Final code\n\nok\n\n## Transcript\n\n<details>\n```\n## not a heading\n```\n</details>\n\n## Next\n\nmore\n"
    assert without_section(report, "Transcript") == "# R\n\n## Final code\n\nok\n\n## Next\n\nmore\n"


# -- a design debate -------------------------------------------------------------------------------


@pytest.fixture
def design_model() -> Iterator[str]:
    """``scripted/<unique>``: every participant of a design debate, as tests/protocol/design scripts them."""
    from tests.protocol.design.conftest import DebateScript, debate_fn

    with registered_model("dash-design", ScriptedModel(fn=debate_fn(DebateScript()))) as model:
        yield model


async def test_design_debate_page_shows_perspectives_and_the_decision_record(
    tmp_path: Path, design_model: str, make_app: Callable[..., Any]
) -> None:
    from tests.protocol.design.conftest import SQLITE_QUESTION

    app = make_app(server_config(tmp_path, design_model, **{"checkpoints.enabled": False, "max_concurrency": 8}))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        started = await client.post("/v1/debates", json={"question": SQLITE_QUESTION})
        assert started.status_code == 202, started.text
        session_id = started.json()["id"]
        detail = await wait_for(client, session_id, lambda d: d["status"] not in OPEN)
        assert detail["status"] == "completed", detail
        html = (await client.get(f"/sessions/{session_id}")).text
    turns = app.state.ctx.store.turns(session_id)
    perspectives = {t.agent_id for t in turns if t.phase == "positions"}
    columns = {c["data-perspective"] for c in elements(html, data_testid="perspective-column")}
    assert perspectives and perspectives == columns, "each perspective speaks in its own column"
    rounds = [r["data-round"] for r in elements(html, data_testid="design-round")]
    assert rounds == ["0", "1", "2"], "the independent positions, then each response round"
    spoken = [t for t in turns if t.phase in ("positions", "arguments", "rebuttals")]
    assert len(elements(html, data_testid="speech")) == len(spoken)
    assert len(elements(html, data_testid="chart-series")) == len(perspectives), "one line per perspective"
    assert elements(html, data_testid="challenge"), "the scripted debaters challenge each other"
    one(html, data_testid="challenge-matrix")
    sections = [s["data-section"] for s in elements(html, data_testid="adr-section")]
    assert sections[:2] == ["Question", "Context"] and "Recommendation" in sections
    assert 'data-section="Recommendation" open' in html, "the recommendation starts unfolded"
    assert not elements(html, data_testid="candidates") and not elements(html, data_testid="votes"), (
        "no code-debate widgets on a design debate's page"
    )
