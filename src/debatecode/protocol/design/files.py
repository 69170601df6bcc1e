"""The session folder of a design debate: ``<root>/.debatecode/debates/<id>/``.

One folder per debate, readable without debatecode::

    metadata.json      what was asked, who argued, when; completion fields merged in at the end
    round-0.md         the phase-1 positions, written before anyone saw the others
    round-N.md         response round N: arguments, rebuttals, summary, gate flags, poll, guidance
    convergence.json   the gate decision after every round, and the latest one at the top level

Every write goes to a temporary file first and is moved into place with
``os.replace``, so a crash never leaves half a file behind. Everything read
back is treated as possibly corrupt or hostile: a folder that cannot be read is
skipped with a warning, never fatal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from debatecode.protocol.design.records import Position, RoundRecord
from debatecode.safe_paths import check_name, path_under

__all__ = [
    "MAX_METADATA_BYTES",
    "SCHEMA_VERSION",
    "DebateFiles",
    "debates_dir",
    "list_debates",
    "write_text_atomic",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""Version of ``metadata.json`` and ``convergence.json``; stored in both."""
MAX_METADATA_BYTES = 1024 * 1024
"""A JSON file larger than this is not read (a debate's metadata is a few hundred bytes)."""

_BACKTICK_RUN = re.compile(r"`+")
_INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>|~&#])")


def debates_dir(root: Path) -> Path:
    """The folder that holds one sub-folder per debate."""
    return Path(root) / ".debatecode" / "debates"


def write_text_atomic(path: Path, text: str, *, overwrite: bool = True) -> bool:
    """Write ``text`` to ``path`` through a temporary file in the same folder.

    With ``overwrite=False`` an existing file is left alone and nothing is
    written; the check and the write are one step (a hard link) where the file
    system allows it, so two writers racing for one name cannot both win.

    Returns:
        True when the file was written, False when it existed and ``overwrite`` is False.

    Raises:
        OSError: the folder is missing or not writable.
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links here (some network and FAT file systems): check, then move
            if path.exists():
                return False
            os.replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object from a regular file of at most ``MAX_METADATA_BYTES``.

    Raises:
        ValueError: the file is missing, not a regular file, too large, not JSON or not an object.
    """
    try:
        info = path.lstat()
    except OSError as exc:
        raise ValueError(f"cannot stat {path.name}: {exc.strerror}") from exc
    if not stat.S_ISREG(info.st_mode):  # a directory, a symlink, a FIFO or a device is never metadata
        raise ValueError(f"{path.name} is not a regular file")
    if info.st_size > MAX_METADATA_BYTES:
        raise ValueError(f"{path.name} is larger than {MAX_METADATA_BYTES} bytes")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_METADATA_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {path.name}: {exc.strerror}") from exc
    if len(raw) > MAX_METADATA_BYTES:
        raise ValueError(f"{path.name} is larger than {MAX_METADATA_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path.name} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} holds {type(data).__name__}, not an object")
    return data


def _dump(data: Mapping[str, Any]) -> str:
    return json.dumps(dict(data), indent=2, ensure_ascii=False, default=str) + "\n"


class DebateFiles:
    """The session folder of one debate.

    Raises:
        UnsafeName: from the constructor, when ``debate_id`` is not a plain folder name
            (``NAME_PATTERN``: letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit).
        PathOutsideRoot: from the constructor, when the folder resolves outside ``.debatecode/debates``.
    """

    def __init__(self, root: Path, debate_id: str) -> None:
        self.debate_id = check_name(debate_id, "debate id")
        self.path = path_under(debates_dir(root), debate_id, what="debate")

    @property
    def metadata_path(self) -> Path:
        return self.path / "metadata.json"

    @property
    def convergence_path(self) -> Path:
        return self.path / "convergence.json"

    def round_path(self, number: int) -> Path:
        """``round-N.md``; round 0 holds the phase-1 positions."""
        return self.path / f"round-{number}.md"

    def read_metadata(self) -> dict[str, Any]:
        """The stored metadata; empty when there is none or it is unreadable (logged)."""
        return self._read(self.metadata_path)

    def write_metadata(self, data: Mapping[str, Any]) -> Path:
        """Merge ``data`` into ``metadata.json`` (later calls add completion fields; their keys win).

        Raises:
            OSError: the folder cannot be created or written.
        """
        merged = {**self.read_metadata(), **data, "schema_version": SCHEMA_VERSION}
        merged.setdefault("debate_id", self.debate_id)
        return self._write(self.metadata_path, _dump(merged))

    def write_positions(self, positions: Sequence[Position], perspectives: Mapping[str, str]) -> Path:
        """Write ``round-0.md``: the independent phase-1 positions.

        Raises:
            OSError: the folder cannot be created or written.
        """
        lines = ["# Round 0: independent positions", ""]
        lines += _speeches(positions, perspectives, empty="_No positions recorded._")
        return self._write(self.round_path(0), "\n".join(lines))

    def write_round(self, round: RoundRecord, perspectives: Mapping[str, str]) -> Path:
        """Write ``round-N.md`` for one response round.

        Raises:
            OSError: the folder cannot be created or written.
        """
        lines = [f"# Round {round.round}", "", "## Arguments", ""]
        lines += _speeches(round.arguments, perspectives, empty="_No arguments._")
        lines += ["## Rebuttals", ""]
        lines += _speeches(round.rebuttals, perspectives, empty="_No rebuttals._")
        lines += ["## Moderator summary", ""]
        lines += [_fence(round.summary) if round.summary.strip() else "_No summary._", ""]
        lines += ["## Gate flags", ""]
        for flag in round.flags:
            agents = f" (agents: {_inline(', '.join(flag.agents))})" if flag.agents else ""
            value = f" [{flag.value:g}]" if flag.value is not None else ""
            lines.append(f"- **{flag.kind}**{agents}{value}: {_inline(flag.detail)}")
        if not round.flags:
            lines.append("_None._")
        lines += ["", "## Convergence poll", ""]
        if round.poll is None:
            lines.append("_No poll this round._")
        else:
            poll = round.poll
            verdict = "passed" if poll.passed else "failed"
            lines.append(f"Called by {_name(poll.called_by, perspectives)}: {poll.share:.0%} yes, {verdict}.")
            lines += ["", *(f"- {_name(k, perspectives)}: {'yes' if v else 'no'}" for k, v in poll.votes.items())]
        lines += ["", "## Human guidance", "", _fence(round.guidance) if round.guidance else "_None._", ""]
        return self._write(self.round_path(round.round), "\n".join(lines))

    def write_convergence(self, data: Mapping[str, Any]) -> Path:
        """Append one gate decision to ``convergence.json`` and make it the top-level verdict.

        ``data`` is the decision after a round, e.g. ``{"round": 2, "converged": False,
        "reason": "...", "decision": "continue"}``; its ``converged``, ``reason`` and
        ``decision`` keys are copied to the top level.

        Raises:
            OSError: the folder cannot be created or written.
        """
        current = self._read(self.convergence_path)
        history = current.get("rounds")
        rounds = [*history, dict(data)] if isinstance(history, list) else [dict(data)]
        top = {key: data[key] for key in ("converged", "reason", "decision") if key in data}
        merged = {**current, **top, "rounds": rounds, "schema_version": SCHEMA_VERSION}
        return self._write(self.convergence_path, _dump(merged))

    def _read(self, path: Path) -> dict[str, Any]:
        if not path.exists() and not path.is_symlink():
            return {}
        try:
            return _read_json_object(path)
        except ValueError as exc:
            logger.warning("debate %s: ignoring %s", self.debate_id, exc)
            return {}

    def _write(self, path: Path, text: str) -> Path:
        self.path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
        return path


def list_debates(root: Path, limit: int = 20) -> list[dict[str, Any]]:
    """The metadata of the ``limit`` most recent debates under ``root``, newest first.

    Recency is ``started_at`` from the metadata, or the metadata file's mtime
    when that is missing or unparseable. Each entry carries ``debate_id`` and
    ``path``. A folder whose metadata is missing, corrupt, not a regular file or
    larger than ``MAX_METADATA_BYTES`` is skipped with a logged warning.
    """
    folder = debates_dir(root)
    if limit <= 0 or not folder.is_dir():
        return []
    found: list[tuple[float, dict[str, Any]]] = []
    for child in sorted(folder.iterdir()):
        if child.is_symlink() or not child.is_dir():
            continue
        meta_path = child / "metadata.json"
        try:
            data = _read_json_object(meta_path)
            mtime = meta_path.lstat().st_mtime
        except (ValueError, OSError) as exc:
            logger.warning("skipping debate folder %s: %s", child.name, exc)
            continue
        data.setdefault("debate_id", child.name)
        data["path"] = str(child)
        found.append((_started(data.get("started_at"), mtime), data))
    found.sort(key=lambda item: item[0], reverse=True)
    return [data for _, data in found[:limit]]


def _started(value: Any, fallback: float) -> float:
    if not isinstance(value, str):
        return fallback
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return fallback
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _speeches(speeches: Sequence[Position], perspectives: Mapping[str, str], *, empty: str) -> list[str]:
    if not speeches:
        return [empty, ""]
    lines: list[str] = []
    for speech in speeches:
        score = f" — satisfaction {speech.satisfaction}/100" if speech.satisfaction is not None else ""
        lines += [f"### {_name(speech.perspective, perspectives)} ({_inline(speech.agent)}){score}", ""]
        if speech.stance:
            lines += [f"**Stance:** {_inline(speech.stance)}", ""]
        lines += [_fence(speech.text) if speech.text.strip() else "_Said nothing._", ""]
        notes = []
        if speech.challenges:
            notes.append("- Challenges: " + ", ".join(_name(key, perspectives) for key in speech.challenges))
        notes += [f"- Risk raised: {_inline(risk)}" for risk in speech.risks]
        if speech.calls_poll:
            notes.append("- Asks to move to synthesis (convergence poll).")
        if speech.rejected_as_rubber_stamp:
            notes.append("- Re-asked: the first reply challenged nobody or gave no satisfaction score.")
        lines += [*notes, ""] if notes else []
    return lines


def _name(key: str, perspectives: Mapping[str, str]) -> str:
    return _inline(perspectives.get(key, key))


def _inline(text: object) -> str:
    """Text for one markdown line: whitespace collapsed, markdown and HTML signs escaped."""
    return _INLINE_MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _fence(text: str) -> str:
    """Model text verbatim, in a fence no line of it can close."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text.strip()}\n{ticks}"
