"""The dashboard in a real browser: Debian's chromium, driven by Playwright, against uvicorn on a loopback port.

A scripted debate with a checkpoint and a convergence gate is started over
REST; the browser finds it on the session list, follows it live, answers the
checkpoint and the gate with the page's buttons, and sees the final report.
Skipped when chromium or Playwright is missing, unless
``DEBATECODE_REQUIRE_BROWSER=1`` (CI), which turns the skip into a failure.
It leaves ``test-artifacts/dashboard.png`` (the finished session) and
``test-artifacts/dashboard-mid-debate.png`` (mid-debate; also ``docs/images/server-dashboard.png``
with ``DEBATECODE_DOCS_SCREENSHOT=1``).

Two more debates cover the newer pages: an escalated design debate decided
with the page's Choose buttons, and a code debate whose tests fail, compared
version against version. Their screenshots are kept in
``test-artifacts/screenshots/`` and, with ``DEBATECODE_DOCS_SCREENSHOT=1``,
copied to ``docs/images/`` for docs/server.md.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import ADD_TASK_TEXT, ROUNDS, server_config
from tests.server.serving import serving
from tests.server.test_dashboard_views import ZERO_TASK
from tests.server.test_escalation import BILLING_QUESTION, KAFKA, STALEMATE
from tests.support.debaters import add_debater
from tests.support.scripted_models import registered_model

from debatecode.llm.scripted import ScriptedModel

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("DEBATECODE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACT = REPO / "test-artifacts" / "dashboard.png"
MID_DEBATE_SHOT = REPO / "test-artifacts" / "dashboard-mid-debate.png"
DOCS_SHOT = REPO / "docs" / "images" / "server-dashboard.png"
"""Refreshed only with ``DEBATECODE_DOCS_SCREENSHOT=1``, so that a test run leaves the working tree as it was."""
SHOTS = REPO / "test-artifacts" / "screenshots"
"""Every screenshot of the newer pages (git-ignored); the docs' copies go to ``docs/images/``."""
WAIT_MS = 30_000
ALL_PASS = re.compile(r"^(\d+)/\1$")
"""A test count with every test passing: ``4/4``, ``10/10``."""

PAYLOAD = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
"""Put before the replies of round 2: the page must show it as text and never run it."""

pytestmark = pytest.mark.slow


def _browser_problem() -> str | None:
    """None when the browser test can run here, else why not."""
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401 - only whether it imports
    except ImportError as exc:
        return f"Playwright is not installed (pip install playwright): {exc}"
    return None


@pytest.fixture
def requires_browser() -> None:
    """Skip without chromium and Playwright; fail instead when ``DEBATECODE_REQUIRE_BROWSER=1``."""
    problem = _browser_problem()
    if problem is None:
        return
    if os.environ.get("DEBATECODE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the browser test is required (DEBATECODE_REQUIRE_BROWSER=1) but cannot run: {problem}")
    pytest.skip(f"no browser for the dashboard test: {problem}")


@pytest.fixture
def hostile_model() -> Iterator[str]:
    """The add.md debater whose reviews stay at 60 (so round 2 happens); round 2's replies open with ``PAYLOAD``.

    Round 1 stays clean, so the mid-debate screenshot for the docs shows ordinary replies.
    """
    debater = add_debater(satisfaction=60, style_variants=False)

    def reply(messages: object, tags: dict[str, str]) -> str:
        text = debater(messages, tags)
        return f"[round 2] {PAYLOAD} {text}" if tags.get("round") == "2" else text

    with registered_model("browser", ScriptedModel(fn=reply)) as model:
        yield model


def test_a_debate_is_followed_and_steered_from_the_dashboard(
    requires_browser: None, tmp_path: Path, hostile_model: str, make_app: Callable[..., Any]
) -> None:
    from playwright.sync_api import expect

    app = make_app(server_config(tmp_path, hostile_model, **ROUNDS, **{"gates.poll_s": 0.05}))
    problems: list[str] = []
    titles: list[str] = []
    with _watched_page(app, problems, width=1280, height=900) as (base, page):
        page.goto(f"{base}/")
        expect(page.get_by_test_id("session-table")).to_contain_text("No sessions yet")
        started = httpx.post(
            f"{base}/v1/sessions",
            json={"task": ADD_TASK_TEXT, "checkpoints": True, "gates": ["convergence"]},
            timeout=60,
        )
        assert started.status_code == 202, started.text
        session_id = started.json()["id"]

        # The list refreshes by itself and links to the session's live page.
        row = page.locator(f'[data-testid="session-row"][data-session="{session_id}"]')
        row.get_by_role("link").click()
        page.wait_for_url(f"**/sessions/{session_id}")

        card = page.locator('[data-testid="agent-card"][data-agent="agent-1"]')
        expect(card.get_by_test_id("agent-tests")).to_have_text(ALL_PASS)
        expect(page.locator('[data-testid="agent-card"][data-agent="agent-2"]')).to_be_visible()
        expect(page.get_by_test_id("checkpoint-panel")).to_be_visible()
        expect(page.get_by_test_id("checkpoint-panel")).to_contain_text("round 1")
        expect(page.get_by_test_id("gate-panel")).to_be_hidden()
        expect(page.get_by_test_id("cancel-button")).to_be_visible()
        MID_DEBATE_SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(MID_DEBATE_SHOT), full_page=True)
        if os.environ.get("DEBATECODE_DOCS_SCREENSHOT") == "1":
            page.screenshot(path=str(DOCS_SHOT), full_page=True)

        page.get_by_test_id("checkpoint-continue").click()
        expect(page.get_by_test_id("checkpoint-panel")).to_be_hidden()
        # Round 2 had not started when the page was drawn: these come through the event stream.
        expect(page.locator('[data-testid="phase"][data-phase="review"][data-round="2"]')).to_be_visible()
        expect(page.get_by_test_id("decisions")).to_contain_text("checkpoint after round 1: continue")
        # A reply of round 2, put in its card by the script as it streamed in: shown, not run.
        judge = page.locator('[data-testid="agent-card"][data-agent="judge"]')
        expect(judge.locator('[data-field="snippet"]')).to_contain_text(f"[round 2] {PAYLOAD}")
        expect(judge.locator("img")).to_have_count(0)

        expect(page.get_by_test_id("gate-panel")).to_be_visible()
        expect(page.get_by_test_id("gate-panel")).to_contain_text("convergence")
        page.get_by_test_id("gate-comment").fill("Plain addition is right.")
        page.get_by_test_id("gate-approve").click()

        expect(page.get_by_test_id("session-status")).to_have_text("completed")
        expect(page.get_by_test_id("decisions")).to_contain_text(
            "convergence gate: approved by web (Plain addition is right.)"
        )
        expect(page.get_by_test_id("gate-panel")).to_be_hidden()
        expect(page.get_by_test_id("cancel-button")).to_be_hidden()
        # The transcript was reloaded when the stream ended: the report is there now.
        expect(page.get_by_test_id("report")).to_contain_text("debatecode report: Add two numbers")
        expect(page.get_by_test_id("report")).to_contain_text("all tests pass")
        stored_turns = app.state.ctx.store.turns(session_id)
        expect(page.get_by_test_id("turn")).to_have_count(len(stored_turns))
        page.get_by_test_id("version").first.locator("summary").click()
        expect(page.get_by_test_id("version").first.locator("pre.diff")).to_contain_text("return a + b")
        ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACT), full_page=True)
        titles.append(page.title())
        expect(page.get_by_test_id("turn").filter(has_text="[round 2]").first.locator("pre.reply")).to_contain_text(
            PAYLOAD
        )

        page.goto(f"{base}/")
        expect(page.locator(f'[data-testid="session-row"][data-session="{session_id}"]')).to_contain_text("completed")
    assert problems == [], "the pages ran without script errors"
    assert titles and "pwned" not in titles, "no reply's markup ever ran"
    assert ARTIFACT.stat().st_size > 10_000 and MID_DEBATE_SHOT.stat().st_size > 10_000


def _shot(page: Any, name: str) -> Path:
    """A full-page screenshot in ``SHOTS`` (and in docs/images with ``DEBATECODE_DOCS_SCREENSHOT=1``)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("DEBATECODE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(path, DOCS_SHOT.parent / f"server-{name}")
    return path


@contextmanager
def _watched_page(app: Any, problems: list[str], *, width: int, height: int) -> Iterator[tuple[str, Any]]:
    """``app`` served and one Chromium page of ``width`` x ``height`` on it, watched (``_watch``); closed after.

    Yields the server's base URL and the page.
    """
    from playwright.sync_api import sync_playwright

    with serving(app) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            _watch(page, problems)
            yield base, page
        finally:
            browser.close()


def _watch(page: Any, problems: list[str]) -> None:
    """Every page error, console error and HTTP error response is added to ``problems``."""
    from playwright.sync_api import expect

    page.set_default_timeout(WAIT_MS)
    # expect() keeps its own 5 s default, which a debate step between two checkpoints can pass on a loaded machine.
    expect.set_options(timeout=WAIT_MS)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)


def test_an_escalated_design_debate_is_decided_with_the_pages_buttons(
    requires_browser: None, tmp_path: Path, stalemate_model: str, make_app: Callable[..., Any]
) -> None:
    from playwright.sync_api import expect

    app = make_app(server_config(tmp_path, stalemate_model, **STALEMATE))
    problems: list[str] = []
    shots: list[Path] = []
    with _watched_page(app, problems, width=1400, height=1000) as (base, page):
        started = httpx.post(f"{base}/v1/debates", json={"question": BILLING_QUESTION, "checkpoints": True}, timeout=60)
        assert started.status_code == 202, started.text
        session_id = started.json()["id"]
        page.goto(f"{base}/?kind=design")
        row = page.locator(f'[data-testid="session-row"][data-session="{session_id}"]')
        expect(row.get_by_test_id("session-kind")).to_have_text("design")
        row.get_by_role("link").click()
        page.wait_for_url(f"**/sessions/{session_id}")

        # Continue at each checkpoint from the page until the debate escalates.
        choose = page.locator('[data-testid^="escalation-choose-"]')
        for _ in range(5):
            expect(page.locator("#checkpoint-panel:not([hidden]), button[data-choice]").first).to_be_visible()
            if choose.count():
                break
            page.get_by_test_id("checkpoint-continue").click()
            expect(page.get_by_test_id("checkpoint-panel")).to_be_hidden()
        expect(page.get_by_test_id("escalation-panel")).to_contain_text("stalemate")
        expect(page.get_by_test_id("chart-series").first).to_be_attached()
        latest = page.get_by_test_id("design-round").last  # the latest round starts unfolded
        expect(latest.get_by_test_id("perspective-column").first).to_be_visible()
        expect(latest.get_by_test_id("challenge").first).to_be_visible()
        shots.append(_shot(page, "design-escalation.png"))

        option = page.get_by_test_id("escalation-options").locator("li").filter(has_text=KAFKA)
        label = option.get_attribute("data-option")
        assert label, "the Kafka option has a label"
        page.get_by_test_id("escalation-guidance").fill("Kafka for invoices only")
        page.get_by_test_id(f"escalation-choose-{label}").click()
        expect(page.get_by_test_id("session-status")).to_have_text("completed")
        expect(page.get_by_test_id("escalation-choice")).to_contain_text(f"{label}:")
        expect(page.get_by_test_id("escalation-choice")).to_contain_text("Kafka for invoices only")
        expect(page.get_by_test_id("decisions")).to_contain_text(f"option {label} chosen by human")
        recommendation = page.locator('[data-testid="adr-section"][data-section="Recommendation"]')
        expect(recommendation).to_be_visible()
        dissents = page.locator('[data-testid="adr-section"][data-section="Dissents"]')
        expect(dissents.locator(".markdown")).to_be_hidden()
        dissents.locator("summary").click()
        expect(dissents.locator(".markdown")).to_be_visible()
        page.locator('[data-testid="design-round"][data-round="0"] > summary').click()
        shots.append(_shot(page, "design-decided.png"))
        turns = app.state.ctx.store.turns(session_id)
        assert any(t.key == "r0/escalation/human/choice" and t.metadata["choice"] == label for t in turns)
    assert problems == [], "the pages ran without script errors"
    assert all(shot.stat().st_size > 10_000 for shot in shots)


def test_guidance_being_typed_survives_a_redraw_of_the_design_body(
    requires_browser: None, tmp_path: Path, stalemate_model: str, make_app: Callable[..., Any]
) -> None:
    """Events redraw the design body while its escalation waits; what the user is typing there stays.

    Once a redraw that came between typing the guidance and pressing a choice replaced the field with the server's
    empty one, and the record said nothing of the human's reason (a CI run caught it).
    """
    from playwright.sync_api import expect

    app = make_app(server_config(tmp_path, stalemate_model, **STALEMATE))
    problems: list[str] = []
    with _watched_page(app, problems, width=1200, height=900) as (base, page):
        started = httpx.post(f"{base}/v1/debates", json={"question": BILLING_QUESTION, "checkpoints": True}, timeout=60)
        assert started.status_code == 202, started.text
        session_id = started.json()["id"]
        deadline = time.monotonic() + WAIT_MS / 1000
        while not (detail := httpx.get(f"{base}/v1/sessions/{session_id}", timeout=30).json())["waiting_escalation"]:
            assert detail["status"] == "running" and time.monotonic() < deadline, f"no escalation came: {detail}"
            if detail["waiting_checkpoint"] is not None:
                done = httpx.post(
                    f"{base}/v1/sessions/{session_id}/checkpoint", json={"action": "continue"}, timeout=30
                )
                assert done.status_code == 200, done.text
            time.sleep(0.05)
        page.goto(f"{base}/sessions/{session_id}")
        guidance = page.get_by_test_id("escalation-guidance")
        guidance.fill("Kafka for invoices only")
        redrawn = page.evaluate(
            "id => window.debatecodeSession.reloadParts(`/sessions/${id}/design`, ['design-body'])", session_id
        )
        assert redrawn is True, "the design body was fetched and swapped"
        expect(guidance).to_have_value("Kafka for invoices only")
        expect(guidance).to_be_focused()
        label = (
            page.get_by_test_id("escalation-options").locator("li").filter(has_text=KAFKA).get_attribute("data-option")
        )
        page.get_by_test_id(f"escalation-choose-{label}").click()
        expect(page.get_by_test_id("escalation-choice")).to_contain_text("Kafka for invoices only")
    assert problems == [], "the pages ran without script errors"


def test_a_design_reload_asked_for_while_one_is_in_flight_is_not_dropped(
    requires_browser: None, tmp_path: Path, stalemate_model: str, make_app: Callable[..., Any]
) -> None:
    """An event (an escalation, say) that comes while the page fetches the design fragment gets a fetch of its own.

    The fragment in flight may have been drawn before the event; dropping the second reload once left the page
    without the escalation's buttons until something else happened, and the debate waits for those buttons.
    """

    app = make_app(server_config(tmp_path, stalemate_model, **STALEMATE))
    problems: list[str] = []
    with _watched_page(app, problems, width=1200, height=900) as (base, page):
        started = httpx.post(f"{base}/v1/debates", json={"question": BILLING_QUESTION}, timeout=60)
        assert started.status_code == 202, started.text
        session_id = started.json()["id"]
        deadline = time.monotonic() + WAIT_MS / 1000
        while httpx.get(f"{base}/v1/sessions/{session_id}", timeout=30).json()["status"] == "running":
            assert time.monotonic() < deadline, "the design debate did not finish"
            time.sleep(0.2)
        page.goto(f"{base}/sessions/{session_id}")
        held: list[Any] = []

        def hold(route: Any) -> None:
            held.append(route)

        page.route(f"**/sessions/{session_id}/design", hold)

        def fetches(count: int) -> None:
            for _ in range(50):
                if len(held) >= count:
                    return
                page.wait_for_timeout(100)
            raise AssertionError(f"{count} fetches of the design fragment expected, saw {len(held)}")

        page.evaluate("window.debatecodeSession.reloadDesign()")
        fetches(1)
        page.evaluate("window.debatecodeSession.reloadDesign()")  # asked for while the first is in flight
        page.wait_for_timeout(1000)
        assert len(held) == 1, "one fetch at a time"
        held[0].continue_()
        fetches(2)
        held[1].continue_()
        page.wait_for_timeout(1500)
        assert len(held) == 2, "the second fetch answers both requests; nothing keeps reloading"
        page.unroute(f"**/sessions/{session_id}/design")
    assert problems == [], "the pages ran without script errors"


def test_per_test_results_and_two_versions_side_by_side_in_the_browser(
    requires_browser: None, tmp_path: Path, buggy_model: str, make_app: Callable[..., Any]
) -> None:
    from playwright.sync_api import expect

    app = make_app(server_config(tmp_path, buggy_model))
    problems: list[str] = []
    with _watched_page(app, problems, width=1400, height=1000) as (base, page):
        body = {"task": ZERO_TASK, "overrides": {"agents": 2, "phases.adjudication": False}}
        started = httpx.post(f"{base}/v1/sessions", json=body, timeout=60)
        assert started.status_code == 202, started.text
        session_id = started.json()["id"]
        page.goto(f"{base}/sessions/{session_id}")
        expect(page.get_by_test_id("session-status")).to_have_text("completed")
        failing = page.locator('[data-testid="test-run"][data-agent="agent-2"]')
        expect(failing.get_by_test_id("test-failure").first).to_be_visible()
        expect(failing.get_by_test_id("test-failure").first).to_contain_text("assert")
        expect(page.get_by_test_id("model-call").first).to_contain_text("temperature=")
        page.get_by_test_id("code-results").scroll_into_view_if_needed()
        _shot(page, "code-tests.png")
        versions = {v.agent_id: v.version_number for v in app.state.ctx.store.versions(session_id)}
        page.get_by_test_id("compare-a").select_option(str(versions["agent-1"]))
        page.get_by_test_id("compare-b").select_option(str(versions["agent-2"]))
        page.get_by_test_id("compare-button").click()
        table = page.get_by_test_id("side-by-side")
        expect(table).to_contain_text("return a + 1")
        expect(table.locator("tr.changed, tr.added").first).to_be_visible()
        table.scroll_into_view_if_needed()
        _shot(page, "code-compare.png")
        page.goto(f"{base}/?q=add")
        expect(page.get_by_test_id("session-row")).to_have_count(1)
        _shot(page, "session-list.png")
    assert problems == [], "the pages ran without script errors"
