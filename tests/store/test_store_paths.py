"""Where a SQLite store may live: a missing folder is refused, a read-only store can be read (issue 31, item 14).

- ``store_url`` pointing into ``/nonexistent/dir`` used to create the folders silently;
- a store on a read-only mount could not even be listed ("cannot migrate ... unable to open database file").

The read-only store is made with a read-only bind mount in a private mount namespace (``unshare``), as a
user meets it on a read-only volume; file modes would not do, since the tests may run as root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.cli.helpers import EXE, run_cli

from debatecode.errors import ConfigError
from debatecode.store import open_store
from debatecode.store.records import SessionRecord


def test_a_store_url_into_a_missing_folder_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    with pytest.raises(ConfigError) as info:
        open_store(f"sqlite:///{missing / 'x.db'}")
    assert f"names a file in {missing}, which does not exist" in str(info.value)
    assert f"mkdir -p {missing}" in str(info.value)
    assert not (tmp_path / "nonexistent").exists()


def test_the_default_debatecode_folder_is_created_in_an_existing_folder(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / '.debatecode' / 'debatecode.db'}") as store:
        assert store.list_sessions() == []
    assert (tmp_path / ".debatecode" / "debatecode.db").is_file()
    with pytest.raises(ConfigError, match="does not exist"):
        open_store(f"sqlite:///{tmp_path / 'typo' / '.debatecode' / 'debatecode.db'}")
    assert not (tmp_path / "typo").exists()


def test_the_cli_refuses_a_store_url_into_a_missing_folder_with_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nonexistent' / 'dir' / 'x.db'}"
    proc = run_cli("sessions", "list", cwd=tmp_path, env={"DEBATECODE_STORE_URL": url})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "which does not exist; create the folder first" in " ".join(proc.stderr.split())
    assert not (tmp_path / "nonexistent").exists()


# --- read-only stores ---------------------------------------------------------------------------


def _read_only_runner(tmp_path: Path) -> Callable[[Path, list[str]], subprocess.CompletedProcess[str]]:
    """Run a command with ``folder`` mounted read-only (a private mount namespace); skip where unshare cannot."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) for a read-only bind mount")
    namespace = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
    probe = subprocess.run([unshare, *namespace, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()}")

    def run(folder: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
        script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
        env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "DEBATECODE_MEMORY__EMBEDDER": "hashing"})
        return subprocess.run(
            [unshare, *namespace, "sh", "-c", script, "sh", str(folder), *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    return run


def _stored_session(tmp_path: Path) -> str:
    record = SessionRecord(id="ro0001", task_title="Add", task_path="add.md", task_hash="h", model="scripted/x")
    with open_store(f"sqlite:///{tmp_path / '.debatecode' / 'debatecode.db'}") as store:
        store.create_session(record)
    return record.id


def test_a_read_only_store_can_be_listed_and_shown_but_not_written(tmp_path: Path) -> None:
    run = _read_only_runner(tmp_path)
    session_id = _stored_session(tmp_path)
    folder = tmp_path / ".debatecode"
    assert sorted(p.name for p in folder.iterdir()) == ["debatecode.db"], "no -wal/-shm left: SQLite must do without"

    listed = run(folder, [str(EXE), "sessions", "list", "--json"])
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [session_id]
    shown = run(folder, [str(EXE), "sessions", "show", session_id])
    assert shown.returncode == 0, shown.stderr
    assert f"session {session_id}" in shown.stdout

    written = run(folder, [str(EXE), "memory", "clear", "--yes"])
    assert written.returncode == 3, written.stdout + written.stderr
    message = " ".join(written.stderr.split())
    assert "is read-only" in message and "make it writable, or point store_url at a writable place" in message


def test_a_read_only_store_of_an_older_schema_says_it_cannot_be_migrated(tmp_path: Path) -> None:
    run = _read_only_runner(tmp_path)
    folder = tmp_path / ".debatecode"
    folder.mkdir()
    old = subprocess.run(  # a store left at the first schema revision, by alembic itself
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                from alembic import command
                from debatecode.store.database import build_engine, migration_config
                engine = build_engine("sqlite:///{folder / "debatecode.db"}")
                with engine.connect() as connection, connection.begin():
                    command.upgrade(migration_config(connection), "0001")
                """
            ),
        ],
        capture_output=True,
        text=True,
    )
    assert old.returncode == 0, old.stderr
    listed = run(folder, [str(EXE), "sessions", "list"])
    assert listed.returncode == 3, listed.stdout + listed.stderr
    message = " ".join(listed.stderr.split())
    assert "is read-only" in message and "is older than this debatecode's" in message
    assert "copy it to a writable folder and point store_url there" in message


def test_a_store_whose_driver_is_not_installed_is_bad_input() -> None:
    """A missing driver is a missing extra: exit 2, as for every extra (docs/cli.md, "Exit status")."""
    import importlib.util

    if importlib.util.find_spec("MySQLdb") is not None:
        pytest.skip("MySQLdb is installed here")
    with pytest.raises(ConfigError, match=r"database driver .* is not installed") as info:
        open_store("mysql+mysqldb://user:secret@127.0.0.1/db")
    assert "secret" not in str(info.value)
