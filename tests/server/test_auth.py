"""Who may talk to the server: loopback binds may go without a token; anything else needs one on every request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.cli.helpers import run_cli
from tests.server.conftest import server_config

from debatecode.errors import ConfigError
from debatecode.server.auth import check_bind, is_loopback

TOKEN = "s3cret-token-0123456789"


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2"])
def test_loopback_binds_need_no_token(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_a_non_loopback_bind_without_a_token_is_refused(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ConfigError, match="--token or DEBATECODE_SERVER_TOKEN"):
        check_bind(host, None)
    check_bind(host, TOKEN)


def test_a_short_token_is_refused() -> None:
    with pytest.raises(ConfigError, match="too short"):
        check_bind("0.0.0.0", "abc")


def test_serve_refuses_a_public_bind_without_a_token_before_listening(tmp_path: Path) -> None:
    result = run_cli("serve", "--host", "0.0.0.0", "--port", "1", cwd=tmp_path)
    assert result.returncode == 2
    assert "--token or DEBATECODE_SERVER_TOKEN" in result.stderr.replace("\n", " ")


async def test_with_a_token_every_request_must_carry_it(tmp_path: Path, scripted_model: str, make_app: Any) -> None:
    app = make_app(server_config(tmp_path, scripted_model), token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        assert (await client.get("/v1/health")).status_code == 200, "health stays open for probes"
        for path in ("/v1/sessions", "/", "/v1/sessions/x/events"):
            refused = await client.get(path)
            assert refused.status_code == 401 and "token" in refused.json()["message"]
        assert (await client.get("/v1/sessions", headers={"Authorization": "Bearer wrong"})).status_code == 401
        ok = await client.get("/v1/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.json() == []
        page = await client.get("/", params={"token": TOKEN})
        assert page.status_code == 200 and page.cookies.get("debatecode_token") == TOKEN
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", cookies={"debatecode_token": TOKEN}
    ) as browser:
        assert (await browser.get("/v1/sessions")).status_code == 200, "the cookie is enough for the dashboard"
