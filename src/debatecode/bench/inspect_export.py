"""Sessions and benchmark runs as inspect_ai eval logs, so ``inspect view`` opens them.

    from debatecode.bench.inspect_export import export_bench, export_session

    export_session(store, "5b041e0a", Path("logs/add.eval"))   # one session, one sample
    export_bench(Path("bench-out/humaneval"))                  # a log per strategy, in bench-out/humaneval/inspect/

- ``session_eval_log``: one stored session as a log with one sample: the task
  as input, the final code as output, the visible tests as score, the turns as
  messages and events, the tokens as model usage (``_inspect_session``).
- ``bench_eval_logs``: a ``bench humaneval`` results folder as one log per
  strategy: a sample per problem, scored on the hidden tests, with tokens,
  calls and seconds as metadata (``_inspect_bench``).

The logs are inspect_ai's own types, written by its ``write_eval_log`` (``.eval``
or ``.json`` by the file's suffix) under names ``inspect view --log-dir`` lists:
inspect's own name by default or in a folder, any ``.eval`` name, and a ``.json``
name only when it starts with the log's timestamp (``add.json`` is written as
``<created>_add.json``, because inspect skips other ``.json`` files).
inspect_ai is the ``[inspect]`` extra; it is imported on first use, and its
absence is a ``UserError`` naming the extra.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from debatecode.errors import ConfigError, UserError

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from debatecode.store.repository import SessionStore

__all__ = [
    "INSTALL_HINT",
    "LOG_SUFFIXES",
    "bench_eval_logs",
    "export_bench",
    "export_session",
    "listed_name",
    "log_file_name",
    "require_inspect",
    "session_eval_log",
]

INSTALL_HINT = "install the [inspect] extra: pip install 'debatecode[inspect]'"
LOG_SUFFIXES = (".eval", ".json")
"""The files ``write_eval_log`` writes: inspect's zipped log format, or one JSON document."""


def require_inspect() -> None:
    """Import inspect_ai's log module, or say how to install it.

    Raises:
        UserError: inspect_ai is not installed (exit 2).
    """
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError as exc:
        raise UserError(f"exporting inspect eval logs needs inspect_ai: {INSTALL_HINT}") from exc


def session_eval_log(store: SessionStore, session_id: str) -> EvalLog:
    """Session ``session_id`` (a unique prefix is enough) as an eval log with one sample.

    Raises:
        UserError: inspect_ai is missing.
        SessionNotFound: no such session.
    """
    session = store.get_session(session_id)  # an unknown id is reported without waiting for inspect_ai's import
    require_inspect()
    from debatecode.bench._inspect_session import session_log

    return session_log(store, session.id)


def bench_eval_logs(folder: Path) -> list[EvalLog]:
    """One eval log per strategy of the ``bench humaneval`` results folder ``folder``.

    Raises:
        UserError: inspect_ai is missing, or ``folder`` has no ``results.jsonl`` with results in it.
    """
    from debatecode.bench.humaneval.results_folder import read_records

    results = folder / "results.jsonl"
    if not results.is_file():
        raise ConfigError(f"{folder} has no results.jsonl: give the --out folder of a `debatecode bench humaneval` run")
    records = read_records(results)
    if not records:
        raise ConfigError(f"{results} has no results yet: let the benchmark answer at least one problem")
    require_inspect()
    from debatecode.bench._inspect_bench import bench_logs

    return bench_logs(folder, records)


def export_session(store: SessionStore, session_id: str, out: Path | None = None) -> Path:
    """Write session ``session_id`` as an eval log under a name ``inspect view`` lists; return the path.

    ``out`` is the file (``.eval`` or ``.json``) or a folder (an existing one, or
    a name without a suffix); the default is the folder ``logs``. In a folder
    the log gets inspect's own name; a ``.json`` name without inspect's
    timestamp in front gets it (see ``listed_name``).

    Raises:
        UserError: inspect_ai is missing, or ``out`` is no folder and ends in neither ``.eval`` nor ``.json``.
        SessionNotFound: no such session.
    """
    out = Path("logs") if out is None else out
    folder = out.is_dir() or not (out.suffix or out.exists())
    if not folder and out.suffix not in LOG_SUFFIXES:
        raise ConfigError(f"--out {out}: an eval log file ends in .eval or .json (or give a folder)")
    log = session_eval_log(store, session_id)
    if folder:
        return _write(log, out / log_file_name(log))
    return _write(log, out.with_name(listed_name(log, out.name)))


def export_bench(folder: Path, out: Path | None = None) -> list[Path]:
    """Write a log per strategy of the results folder ``folder`` into the folder ``out`` (default ``folder/inspect``).

    A strategy's log named after an earlier state of the run (its name holds the
    time ``results.jsonl`` last changed) is replaced, so a resumed run exported
    again still has one log per strategy.

    Raises:
        UserError: inspect_ai is missing, or ``folder`` has no ``results.jsonl`` with results in it.
    """
    directory = out or folder / "inspect"
    written = []
    for log in bench_eval_logs(folder):
        path = _write(log, directory / log_file_name(log))
        for earlier in directory.glob(f"*_{_clean(log.eval.task)}_{_clean(log.eval.eval_id)}.eval"):
            if earlier != path:
                earlier.unlink()
        written.append(path)
    return written


def log_file_name(log: EvalLog) -> str:
    """The name inspect gives a log: ``<created>_<task>_<id>.eval``, each part cleaned as inspect cleans it."""
    parts = (log.eval.created, log.eval.task, log.eval.eval_id)
    return "_".join(_clean(part) for part in parts) + ".eval"


def listed_name(log: EvalLog, name: str) -> str:
    """``name``, or ``<created>_<name>`` for a ``.json`` name that ``inspect view`` would not list.

    inspect lists every ``.eval`` file, but a ``.json`` file only when its name
    starts with a timestamp (``inspect_ai.log._file.log_file_pattern``).
    """
    if not name.endswith(".json") or _INSPECT_TIMESTAMP.match(name):
        return name
    return f"{_clean(log.eval.created)}_{name}"


_INSPECT_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")


def _clean(component: str) -> str:
    return component.replace("_", "-").replace("/", "-").replace(":", "-").replace("+", "-")


def _write(log: EvalLog, path: Path) -> Path:
    from inspect_ai.log import write_eval_log

    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(path))
    return path
