"""Every input file is bounded: a size cap and a regular-file check (issue 31, item 5).

``bench swebench --dataset /dev/zero`` grew to 1.7 GB, ``sessions replay /dev/zero``
to 3.7 GB and ``--model scripted:/dev/zero`` to 4.2 GB; a FIFO given as a task
blocked forever. Each reader now goes through ``debatecode.input_files.read_input_file``:
it opens without blocking, refuses anything but a regular file, and refuses a
file over its cap before reading it. Each case here ends in well under a second.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from debatecode.cli.app import app
from debatecode.errors import ExitCode, UserError
from debatecode.input_files import (
    MAX_CONFIG_BYTES,
    MAX_DATASET_BYTES,
    MAX_SCRIPT_BYTES,
    MAX_TRAIL_BYTES,
    InputFileError,
    read_input_file,
)

REPO = Path(__file__).resolve().parents[1]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"
REPLIES = REPO / "examples" / "replies" / "add.yaml"
DATASET = REPO / "benchmarks" / "swebench-local" / "instances.jsonl"

pytestmark = pytest.mark.timeout(30)  # a FIFO that blocks fails the test instead of hanging the suite


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def _sparse(tmp_path: Path, name: str, size: int) -> Path:
    """A file of ``size`` bytes that takes no disk space (and no time) to make."""
    path = tmp_path / name
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def _directory(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


# -- the shared reader -------------------------------------------------------------------------------


def test_dev_zero_is_refused_as_a_device(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="is a character device, not a regular file") as caught:
        read_input_file("/dev/zero", max_bytes=1024, what="dataset file")
    assert caught.value.problem == "not_a_file" and caught.value.exit_code == ExitCode.BAD_INPUT


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"is a named pipe \(FIFO\), not a regular file"):
        read_input_file(_fifo(tmp_path, "pipe.md"), max_bytes=1024, what="task file")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="the task file is a directory") as caught:
        read_input_file(tmp_path, max_bytes=1024, what="task file")
    assert caught.value.problem == "not_a_file"


def test_a_file_one_byte_over_the_cap_is_refused_unread_and_one_at_the_cap_is_read(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="the dataset file is larger than 512 MiB") as caught:
        read_input_file(
            _sparse(tmp_path, "big.jsonl", MAX_DATASET_BYTES + 1), max_bytes=MAX_DATASET_BYTES, what="dataset file"
        )
    assert caught.value.problem == "too_large"
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 1000)
    assert read_input_file(exact, max_bytes=1000, what="file") == b"x" * 1000


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such config file") as caught:
        read_input_file(tmp_path / "nope.toml", max_bytes=10, what="config file")
    assert caught.value.problem == "missing"


# -- every reader -----------------------------------------------------------------------------------


def _task(path: Path) -> object:
    from debatecode.task import load_task

    return load_task(path)


def _config(path: Path) -> object:
    from debatecode.config import load_config

    return load_config(path)


def _script(path: Path) -> object:
    from debatecode.llm import validate_model

    return validate_model(f"scripted:{path}")


def _dataset(path: Path) -> object:
    from debatecode.bench.swebench import load_instances

    return load_instances(path)


def _predictions(path: Path) -> object:
    from debatecode.bench.swebench import load_instances, load_predictions

    return load_predictions(path, load_instances(DATASET))


def _repos(path: Path) -> object:
    from debatecode.bench.swebench.repos import RepoRegistry

    return RepoRegistry.from_toml(path)


def _trail(path: Path) -> object:
    from debatecode.cli.audit import _read_trail

    return _read_trail(path)


def _question(path: Path) -> object:
    from debatecode.protocol.design.question import load_question

    return load_question(str(path))


def _context(path: Path) -> object:
    from debatecode.protocol.design.question import load_question

    return load_question("Should we cache?", context=[path])


READERS: list[tuple[str, Callable[[Path], object], int, str]] = [
    ("task", _task, 256 * 1024, "task.md"),
    ("config", _config, MAX_CONFIG_BYTES, "debatecode.toml"),
    ("scripted-model", _script, MAX_SCRIPT_BYTES, "replies.yaml"),
    ("swebench-dataset", _dataset, MAX_DATASET_BYTES, "set.jsonl"),
    ("swebench-predictions", _predictions, MAX_DATASET_BYTES, "preds.jsonl"),
    ("swebench-repos", _repos, MAX_CONFIG_BYTES, "repos.toml"),
    ("replay-trail", _trail, MAX_TRAIL_BYTES, "trail.json"),
    ("question", _question, 64 * 1024, "question.md"),
    ("context", _context, 16 * 1024 * 1024, "notes.txt"),
]


@pytest.mark.parametrize(("read", "name"), [(r[1], r[3]) for r in READERS], ids=[r[0] for r in READERS])
def test_every_reader_refuses_a_fifo_without_blocking(
    tmp_path: Path, read: Callable[[Path], object], name: str
) -> None:
    with pytest.raises(UserError, match=r"named pipe \(FIFO\)"):
        read(_fifo(tmp_path, name))


FILE_ONLY = [r for r in READERS if r[0] != "question"]
"""``debatecode debate /dev/zero`` asks the question "/dev/zero": only a .md or .txt path is a question file."""


@pytest.mark.parametrize("read", [r[1] for r in FILE_ONLY], ids=[r[0] for r in FILE_ONLY])
def test_every_reader_refuses_dev_zero(read: Callable[[Path], object]) -> None:
    with pytest.raises(UserError, match="character device"):
        read(Path("/dev/zero"))


@pytest.mark.parametrize(("read", "name"), [(r[1], r[3]) for r in READERS], ids=[r[0] for r in READERS])
def test_every_reader_refuses_a_directory(tmp_path: Path, read: Callable[[Path], object], name: str) -> None:
    with pytest.raises(UserError, match="is a directory"):
        read(_directory(tmp_path, name))


@pytest.mark.parametrize(("read", "cap", "name"), [(r[1], r[2], r[3]) for r in READERS], ids=[r[0] for r in READERS])
def test_every_reader_refuses_a_file_over_its_cap_unread(
    tmp_path: Path, read: Callable[[Path], object], cap: int, name: str
) -> None:
    with pytest.raises(UserError, match="is larger than"):
        read(_sparse(tmp_path, name, cap + 1))


# -- through the CLI: exit 2 and a message, in well under a second --------------------------------


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


def test_bench_swebench_dataset_dev_zero_exits_2(tmp_path: Path) -> None:
    code, output = _cli("bench", "swebench", "--dataset", "/dev/zero", "--predictions", "gold", "--out", str(tmp_path))
    assert code == ExitCode.BAD_INPUT and "the dataset file is a character device" in output


def test_sessions_replay_dev_zero_exits_2(tmp_path: Path) -> None:
    code, output = _cli("sessions", "replay", "/dev/zero", "--out", str(tmp_path / "o"))
    assert code == ExitCode.BAD_INPUT and "the audit trail is a character device" in output


def test_solve_with_a_scripted_dev_zero_model_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = _cli("solve", str(ADD_TASK), "--model", "scripted:/dev/zero", "--sandbox", "local")
    assert code == ExitCode.BAD_INPUT and "the script file is a character device" in output


def test_solve_with_a_fifo_task_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fifo = _fifo(tmp_path, "task.md")
    code, output = _cli("solve", str(fifo), "--model", f"scripted:{REPLIES}", "--sandbox", "local")
    assert code == ExitCode.BAD_INPUT and "the task file is a named pipe (FIFO)" in output


def test_solve_with_config_dev_zero_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = _cli("solve", str(ADD_TASK), "--config", "/dev/zero", "--model", f"scripted:{REPLIES}")
    assert code == ExitCode.BAD_INPUT and "the config file is a character device" in output
