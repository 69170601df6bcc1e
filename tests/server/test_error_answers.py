"""Answers to bad requests: event ids beyond a SQL integer are 422, and error messages hide the server's folders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import server_config

from debatecode.server.errors import public_message
from debatecode.store.records import EventRecord, SessionRecord

HUGE = "99999999999999999999999"


@pytest.fixture
def stored_session(app: Any) -> str:
    """A finished session with two events in the app's store."""
    store = app.state.ctx.store
    store.create_session(
        SessionRecord(id="bounds00001", task_title="t", task_path="t.md", task_hash="0", status="completed")
    )
    for kind in ("SessionStarted", "SessionFinished"):
        store.add_event(EventRecord(session_id="bounds00001", type=kind, data={"session_id": "bounds00001"}))
    return "bounds00001"


@pytest.mark.parametrize(
    ("headers", "params", "where"),
    [
        ({"Last-Event-ID": HUGE}, {}, "header.last-event-id"),
        ({}, {"after": HUGE}, "query.after"),
        ({"Last-Event-ID": str(2**63)}, {}, "header.last-event-id"),
        ({}, {"after": str(2**63)}, "query.after"),
    ],
)
async def test_an_event_id_beyond_a_sql_integer_is_422(
    client: httpx.AsyncClient, stored_session: str, headers: dict[str, str], params: dict[str, str], where: str
) -> None:
    answer = await client.get(f"/v1/sessions/{stored_session}/events", headers=headers, params=params)
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error"] == "InvalidRequest" and body["exit_code"] == 2
    assert where in body["message"] and str(2**63 - 1) in body["message"]


async def test_the_largest_event_id_and_a_non_numeric_header_still_stream(
    client: httpx.AsyncClient, stored_session: str
) -> None:
    last = await client.get(f"/v1/sessions/{stored_session}/events", params={"after": str(2**63 - 1)})
    assert last.status_code == 200 and "event: end" in last.text and "SessionStarted" not in last.text
    # A browser echoes whatever id it saw; what is no feed id starts the stream from the top, as before.
    for header in (b"abc", "²".encode("latin-1")):  # "²" passes str.isdigit but not int()
        answer = await client.get(f"/v1/sessions/{stored_session}/events", headers={b"Last-Event-ID": header})
        assert answer.status_code == 200 and "SessionStarted" in answer.text, header


async def test_a_missing_task_path_is_named_relative_to_the_servers_root(
    tmp_path: Path, scripted_model: str, make_app: Callable[..., Any]
) -> None:
    root = tmp_path / "served"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "bad.md").write_text("no front matter here\n", encoding="utf-8")
    app = make_app(server_config(tmp_path, scripted_model), root=root)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        for task_path, named in (("tasks/nosuch.md", "tasks/nosuch.md"), ("tasks/bad.md", "tasks/bad.md")):
            answer = await client.post("/v1/sessions", json={"task_path": task_path})
            assert answer.status_code == 422, answer.text
            message = answer.json()["message"]
            assert message.startswith(named) and str(tmp_path) not in message, message


def test_public_message_hides_the_root_the_data_folder_and_home() -> None:
    root, data = Path("/srv/dc"), Path("/var/lib/dc-data")
    home = Path.home()
    said = public_message(
        f"/srv/dc/t.md: bad; in /srv/dc; wrote /var/lib/dc-data/runs/x; read {home}/secret.md; /srv/dcx stays",
        root,
        data,
    )
    assert said == "t.md: bad; in .; wrote <data-dir>/runs/x; read ~/secret.md; /srv/dcx stays"
