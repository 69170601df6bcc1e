"""One rule for exit statuses, held by every command (issue 31, item 15; the rule: docs/cli.md, "Exit status").

2: what the command was given is wrong (an argument, a file, an id or name that matches nothing, a config
value). 3: the command was valid but what it runs on failed (the Docker engine, the store, the model...).
``memory show nosuch`` used to exit 3 while ``sessions show nosuch`` exited 2; a missing output folder
for ``memory export -o`` exited 1.

Every command of the app gets at least one bad invocation here (a test checks none is left out), run in
process through typer's ``CliRunner``: each fails before doing any work, so the table stays fast.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from debatecode.cli.app import app

REPO = Path(__file__).resolve().parents[2]
ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = f"scripted:{REPO / 'examples' / 'replies' / 'add.yaml'}"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent-debatecode/docker.sock"}
NO_STORE = {"DEBATECODE_STORE_URL": f"postgresql+psycopg://u:p@127.0.0.1:{_closed_port()}/db"}

INPUT = 2
ENVIRONMENT = 3

# (command path, arguments after it, extra environment, expected status, words the message holds)
CASES: list[tuple[tuple[str, ...], tuple[str, ...], dict[str, str], int, str]] = [
    ((), ("--no-such-flag",), {}, INPUT, "No such option"),
    (("solve",), ("nosuch.md",), {}, INPUT, "task file not found"),
    (("solve",), (ADD, "--model", REPLIES, "--sandbox", "docker"), NO_DOCKER, ENVIRONMENT, "Docker engine"),
    (("debate",), ("",), {}, INPUT, "the question is empty"),
    (("sweep",), ("nosuch.md", "--set", "agents=1,2"), {}, INPUT, "task file not found"),
    (("sweep",), (ADD, "--set", "agents=1,2", "--model", REPLIES, "--sandbox", "docker"), NO_DOCKER, ENVIRONMENT, ""),
    # A fixed port: the refusal comes before any bind, and a random one would differ between xdist workers' ids.
    (("serve",), ("--host", "0.0.0.0", "--port", "8799"), {}, INPUT, "give a token"),
    (("sessions", "list"), ("--status", "bogus"), {}, INPUT, "not a session status"),
    (("sessions", "list"), (), NO_STORE, ENVIRONMENT, "Connection refused"),
    (("sessions", "show"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "diff"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "checkout"), ("nosuch", "dest"), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "view"), ("nosuch", "--no-open"), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "audit"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "replay"), ("nosuch.json",), {}, INPUT, "no such audit trail"),
    (("sessions", "gates"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "approve"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("sessions", "reject"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("sandbox", "doctor"), ("--no-such-flag",), {}, INPUT, "No such option"),
    (("sandbox", "build"), (), NO_DOCKER, ENVIRONMENT, "nonexistent-debatecode"),
    (("sandbox", "exec"), ("nosuch.py",), {}, INPUT, "nosuch.py"),
    (("sandbox", "cleanup"), (), NO_DOCKER, ENVIRONMENT, "nonexistent-debatecode"),
    (("bench", "humaneval"), ("--problems", "999"), {}, INPUT, "unknown HumanEval problem"),
    (
        ("bench", "humaneval"),
        ("--predictions", "canonical", "--problems", "0", "--sandbox", "docker"),
        NO_DOCKER,
        3,
        "",
    ),
    (("bench", "swebench"), ("--dataset", "nosuch.jsonl"), {}, INPUT, "no such dataset file"),
    (("export", "inspect"), ("nosuch",), {}, INPUT, "no session matches 'nosuch'"),
    (("memory", "list"), ("--limit", "0"), {}, INPUT, "Invalid value for '--limit'"),
    (("memory", "list"), (), NO_STORE, ENVIRONMENT, "Connection refused"),
    (("memory", "search"), ("",), {}, INPUT, "the search query is empty"),
    (("memory", "show"), ("nosuch",), {}, INPUT, "no episode matches 'nosuch'"),
    (("memory", "export"), ("-o", "missing/memory.json"), {}, INPUT, "the folder missing does not exist"),
    (("memory", "clear"), ("--lessons", "--session", "x"), {}, INPUT, "cannot be combined"),
    (("memory", "lessons"), ("--limit", "0"), {}, INPUT, "Invalid value for '--limit'"),
    (("hook", "install"), (), {}, INPUT, "not inside a git repository"),
    (("hook", "run"), ("nosuch.py",), {}, INPUT, "cannot read nosuch.py"),
]


def _leaf_commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield path
        return
    for name, sub in subcommands.items():
        yield from _leaf_commands(sub, (*path, name))


def test_every_command_has_a_case() -> None:
    """A new command joins the table, so the rule is checked on it too."""
    commands = set(_leaf_commands(typer.main.get_command(app)))
    covered = {path for path, *_ in CASES}
    assert commands - covered == set(), "commands without a bad invocation in CASES"
    assert {path for path, _args, _env, code, _says in CASES if code == ENVIRONMENT} >= {
        ("solve",),
        ("sessions", "list"),
        ("memory", "list"),
        ("sandbox", "build"),
    }


@pytest.mark.parametrize(
    ("path", "args", "env", "code", "says"),
    CASES,
    ids=[" ".join((*path, *args))[:60] + f" -> {code}" for path, args, _env, code, _says in CASES],
)
def test_a_bad_invocation_exits_with_the_status_of_its_kind(
    path: tuple[str, ...],
    args: tuple[str, ...],
    env: dict[str, str],
    code: int,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    clean: dict[str, str | None] = {
        name: None
        for name in os.environ
        if name.startswith("DEBATECODE_") and name != "DEBATECODE_ALLOW_MODEL_REQUESTS"
    }
    clean.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "DEBATECODE_MEMORY__EMBEDDER": "hashing", **env})
    result = CliRunner().invoke(app, [*path, *args], env=clean)
    message = " ".join(result.stderr.replace("│", " ").split())
    assert result.exit_code == code, f"{result.stdout}\n{result.stderr}\n{result.exception!r}"
    assert "Traceback" not in result.stdout + result.stderr
    assert message.startswith(("error: ", "Usage: ")), f"the error goes to stderr: {result.stdout}\n{message}"
    assert "unexpected" not in message, message
    assert says in message, message
