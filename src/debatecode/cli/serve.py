"""``debatecode serve`` (the REST API, event streams and dashboard) and ``debatecode sessions view ID``."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
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
        if _port_in_use(host, port):
            raise fail(
                f"port {port} on {host} is in use by another program",
                ExitCode.RUN_FAILED,
                hint=f"choose a free port with --port, or stop what listens on {port}",
            )
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
    server = _server(uvicorn, app, host, port)
    try:
        server.run()
    finally:
        app.state.ctx.close()
    if server.stopped_by:
        raise KeyboardInterrupt  # the error boundary says "interrupted" and exits 130


def _server(uvicorn: Any, app: Any, host: str, port: int) -> Any:
    """uvicorn's server for ``app``, except that it does not raise again the stop signal it shut down on.

    uvicorn re-raises SIGTERM once it has shut down gracefully; this command exits 130
    itself instead (``stopped_by``), since ``forced_stop`` would take that signal for a
    second stop request and cut the exit short.
    """

    class Server(uvicorn.Server):
        stopped_by: list[int] = []  # noqa: RUF012 - replaced per instance below

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                try:
                    yield
                finally:
                    captured = getattr(self, "_captured_signals", None)
                    if isinstance(captured, list):
                        self.stopped_by = list(captured)
                        captured.clear()

    return Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))


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
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="DEBATECODE_SERVER_TOKEN",
        show_envvar=True,
        help="The server's token: the printed URL carries it, and a server started here requires it.",
    ),
) -> None:
    """Open the transcript viewer of one session: starts `debatecode serve` on loopback if none answers."""
    from urllib.parse import quote

    from debatecode.cli.common import open_configured_store

    with reporting_errors():
        store = open_configured_store(config_file)
        try:
            record = store.get_session(session_id)
        finally:
            store.close()
    _server_modules()
    base = f"http://{DEFAULT_HOST}:{port}"
    if _answers(base):
        _check_token(base, record.id, token)
    else:
        with reporting_errors():
            pid_file = _start_server(port, config_file, token)
        err_console.print(
            f"started a server on {base}; it keeps running: stop it with `kill $(cat {pid_file})`", soft_wrap=True
        )
    url = f"{base}/sessions/{record.id}" + (f"?token={quote(token, safe='')}" if token else "")
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


def _check_token(base: str, session_id: str, token: str | None) -> None:
    """Make sure the server answering at ``base`` lets the page be read with ``token``."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        status = httpx.get(f"{base}/v1/sessions/{session_id}", headers=headers, timeout=5.0).status_code
    except httpx.HTTPError:
        return  # it answered its health check a moment ago: let the browser try
    if status == 401:
        what = "does not accept the token given" if token else "needs its token"
        raise fail(
            f"the server on {base} {what}",
            ExitCode.BAD_INPUT,
            hint="give the token it was started with: --token or DEBATECODE_SERVER_TOKEN",
        )


def _port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port``: binding it fails with "address in use".

    Any other failure (an address of no interface here) is left for the server to report.
    """
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a TIME_WAIT port is free
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _pid_alive(pid_file: Path) -> int | None:
    """The process id in ``pid_file`` when that process still runs, else None."""
    try:
        pid = int(pid_file.read_text(encoding="utf-8").strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _start_server(port: int, config_file: Path | None, token: str | None) -> Path:
    """``debatecode serve`` on loopback in the background, detached from this terminal, logging to a file.

    Returns the file holding its process id: ``PID_FILE``, or ``server-<port>.pid`` next to it while
    ``PID_FILE`` names another server that still runs (whose pid file is never overwritten).

    Raises:
        typer.Exit: the port is taken by something that is no debatecode server, or the server exited
            or did not answer within ``START_WAIT_S`` (exit 3 each; nothing is left running or written).
    """
    if _port_in_use(DEFAULT_HOST, port):
        raise fail(
            f"port {port} on {DEFAULT_HOST} is in use by a program that is not a debatecode server",
            ExitCode.RUN_FAILED,
            hint=f"choose a free port with --port, or stop what listens on {port}",
        )
    log = PID_FILE.with_name("server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    pid_file = PID_FILE if _pid_alive(PID_FILE) is None else PID_FILE.with_name(f"server-{port}.pid")
    command = [sys.executable, "-c", "from debatecode.cli.app import main; main()", "serve", "--port", str(port)]
    if config_file is not None:
        command += ["--config", str(config_file)]
    env = os.environ.copy()
    if token:
        env["DEBATECODE_SERVER_TOKEN"] = token  # not on the command line, which any user can read
    offset = log.stat().st_size if log.exists() else 0
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True, env=env
        )
    pid_file.write_text(f"{process.pid}\n", encoding="utf-8")
    try:
        _wait_until_up(process, port, log, offset)
    except BaseException:
        pid_file.unlink(missing_ok=True)
        raise
    return pid_file


def _wait_until_up(process: subprocess.Popen[bytes], port: int, log: Path, offset: int) -> None:
    """Wait until the server answers; fail at once when it exits, and stop it when it is too slow."""
    deadline = time.monotonic() + START_WAIT_S
    base = f"http://{DEFAULT_HOST}:{port}"
    while not _answers(base):
        code = process.poll()
        if code is not None:
            said = _last_line(log, offset)
            raise fail(
                f"the server started on port {port} exited at once (status {code})" + (f": {said}" if said else ""),
                ExitCode.RUN_FAILED,
                hint=f"see {log}, or run `debatecode serve --port {port}` yourself",
            )
        if time.monotonic() > deadline:
            process.kill()
            raise fail(
                f"started `debatecode serve --port {port}` but it did not answer within {START_WAIT_S:g}s",
                ExitCode.RUN_FAILED,
                hint=f"see {log}, or run `debatecode serve --port {port}` yourself",
            )
        time.sleep(0.2)


def _last_line(log: Path, offset: int) -> str:
    """The last non-empty line the server wrote to ``log`` after ``offset``."""
    try:
        with log.open("rb") as handle:
            handle.seek(offset)
            text = handle.read(64_000).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return escape(lines[-1][:300]) if lines else ""
