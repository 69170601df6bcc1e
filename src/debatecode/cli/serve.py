"""``debatecode serve`` (the REST API, event streams and dashboard) and ``debatecode sessions view ID``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from debatecode.cli.common import console, err_console, fail, reporting_errors
from debatecode.errors import ExitCode

__all__ = ["serve", "view_session"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
START_WAIT_S = 30.0
"""How long ``sessions view`` waits for a server it started to answer."""
PID_FILE = Path(".debatecode") / "server.pid"
"""Where ``sessions view`` notes the process id of a server it started (its log is next to it)."""


def serve(
    host: str = typer.Option(DEFAULT_HOST, "--host", help="Address to listen on; anything but loopback needs --token."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=1, max=65535, help="Port to listen on."),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="DEBATECODE_SERVER_TOKEN",
        show_envvar=True,
        help="Require this token on every request (Authorization: Bearer). Required off loopback.",
    ),
    config_file: Path | None = typer.Option(
        None, "--config", help="Config file (default: ./debatecode.toml if present): every session's base config."
    ),
    data_dir: Path = typer.Option(
        Path(".debatecode/server"), "--data-dir", help="Where sessions started through the server write their output."
    ),
    bench_dirs: list[Path] = typer.Option(
        [Path("benchmarks/results")],
        "--bench-dir",
        help="Folder of benchmark result folders for the /bench pages (repeatable).",
    ),
) -> None:
    """Serve the REST API (/v1, OpenAPI at /docs), live event streams and the web dashboard.

    Needs the server extra: pip install 'debatecode[server]'.
    """
    from debatecode.config import load_config

    uvicorn = _server_modules()
    from debatecode.server import ServerOptions, create_app
    from debatecode.server.auth import check_bind

    with reporting_errors():
        check_bind(host, token)
        config = load_config(config_file)
        options = ServerOptions(
            config=config, data_dir=data_dir.resolve(), token=token, bench_dirs=tuple(p.resolve() for p in bench_dirs)
        )
        app = create_app(options)
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    console.print(
        f"debatecode serving on [bold]{url}[/]  ·  dashboard {url}/  ·  API {url}/docs  ·  store {escape(config.store_url)}",
        soft_wrap=True,
    )
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        app.state.ctx.close()


def _server_modules() -> Any:
    try:
        import fastapi  # noqa: F401 - only checked
        import uvicorn
    except ImportError as exc:
        raise fail(
            f"the server needs {exc.name}, which is not installed",
            ExitCode.BAD_INPUT,
            hint="pip install 'debatecode[server]'",
        ) from None
    return uvicorn


def view_session(
    session_id: str = typer.Argument(..., help="Session id (or a unique prefix)."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=1, max=65535, help="Port of the local server."),
    config_file: Path | None = typer.Option(None, "--config", help="Config file naming the store (as for serve)."),
    open_browser: bool = typer.Option(True, "--open/--no-open", help="Open the page in a web browser."),
) -> None:
    """Open the transcript viewer of one session: starts `debatecode serve` on loopback if none answers."""
    from debatecode.cli.common import open_configured_store

    with reporting_errors():
        store = open_configured_store(config_file)
        try:
            record = store.get_session(session_id)
        finally:
            store.close()
    _server_modules()
    base = f"http://{DEFAULT_HOST}:{port}"
    if not _answers(base):
        _start_server(port, config_file)
        deadline = time.monotonic() + START_WAIT_S
        while not _answers(base):
            if time.monotonic() > deadline:
                raise fail(
                    f"started `debatecode serve --port {port}` but it did not answer within {START_WAIT_S:g}s",
                    ExitCode.RUN_FAILED,
                    hint=f"see .debatecode/server.log, or run `debatecode serve --port {port}` yourself",
                )
            time.sleep(0.2)
        err_console.print(
            f"started a server on {base}; it keeps running: stop it with `kill $(cat {PID_FILE})`", soft_wrap=True
        )
    url = f"{base}/sessions/{record.id}"
    console.print(url, soft_wrap=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)


def _answers(base: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base}/v1/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _start_server(port: int, config_file: Path | None) -> None:
    """``debatecode serve`` on loopback in the background, detached from this terminal, logging to a file."""
    log = PID_FILE.with_name("server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-c", "from debatecode.cli.app import main; main()", "serve", "--port", str(port)]
    if config_file is not None:
        command += ["--config", str(config_file)]
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True, env=os.environ.copy()
        )
    PID_FILE.write_text(f"{process.pid}\n", encoding="utf-8")
