"""A worktree's index with one file's entry set in process, as ``git commit -- <path>`` leaves it.

Only the plain index formats are handled: versions 2 and 3, a SHA-1
checksum, no unmerged entries, and extensions that are caches git rebuilds
(``TREE``, ``UNTR``, ``EOIE``, ``IEOT``; they are dropped, since they would
describe the old entries) or ``REUC`` (kept). Anything else (a split,
sparse or version 4 index, an fsmonitor, ``index.skipHash``) raises
``UnsupportedIndex`` before anything is written, and the caller lets git do it.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from debatecode.vcs._git import DirectWriteRefused
from debatecode.vcs._refs import commit_lock, lock_file

__all__ = ["IndexFile", "UnsupportedIndex", "index_entry_update", "read_index"]

_HEADER = struct.Struct(">4sLL")
_FIXED = 62  # stat fields, mode, sha and flags of an on-disk entry
_EXTENDED = 0x4000
_NAME_MASK = 0xFFF
_DROPPED = {b"TREE", b"UNTR", b"EOIE", b"IEOT"}
_KEPT = {b"REUC"}


class UnsupportedIndex(DirectWriteRefused):
    """The index uses a format or feature this module does not write."""


@dataclass(slots=True)
class IndexFile:
    """An index read from disk: its version, entries (raw bytes by path) and the extensions kept."""

    version: int
    entries: dict[bytes, bytes]
    extensions: bytes


def read_index(path: Path) -> IndexFile:
    """Parse the index at ``path``; a missing file is an empty version-2 index.

    Raises:
        UnsupportedIndex: a format or feature this module does not write.
        OSError: the file cannot be read.
    """
    if not path.exists():
        return IndexFile(2, {}, b"")
    data = path.read_bytes()
    if len(data) < _HEADER.size + 20:
        raise UnsupportedIndex("truncated index")
    body, checksum = data[:-20], data[-20:]
    if hashlib.sha1(body, usedforsecurity=False).digest() != checksum:
        raise UnsupportedIndex("index checksum is not SHA-1 of its content (index.skipHash?)")
    signature, version, count = _HEADER.unpack_from(body)
    if signature != b"DIRC" or version not in (2, 3):
        raise UnsupportedIndex(f"index version {version}")
    entries: dict[bytes, bytes] = {}
    offset = _HEADER.size
    for _ in range(count):
        (flags,) = struct.unpack_from(">H", body, offset + _FIXED - 2)
        if flags & 0x3000:
            raise UnsupportedIndex("unmerged entries")
        fixed = _FIXED + (2 if flags & _EXTENDED else 0)
        name_end = body.index(b"\0", offset + fixed)
        name = body[offset + fixed : name_end]
        size = (fixed + len(name) + 8) & ~7
        entries[name] = body[offset : offset + size]
        offset += size
    kept = []
    while offset < len(body):
        signature, size = struct.unpack_from(">4sL", body, offset)
        if signature not in _DROPPED | _KEPT:
            raise UnsupportedIndex(f"index extension {signature!r}")
        if signature in _KEPT:
            kept.append(body[offset : offset + 8 + size])
        offset += 8 + size
    return IndexFile(version, entries, b"".join(kept))


def _entry(name: bytes, sha: str, mode: int, st: os.stat_result) -> bytes:
    fields = (
        st.st_ctime_ns // 1_000_000_000,
        st.st_ctime_ns % 1_000_000_000,
        st.st_mtime_ns // 1_000_000_000,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev,
        st.st_ino,
        mode,
        st.st_uid,
        st.st_gid,
        st.st_size,
    )
    packed = struct.pack(">10L", *(value & 0xFFFFFFFF for value in fields))
    raw = packed + bytes.fromhex(sha) + struct.pack(">H", min(len(name), _NAME_MASK)) + name
    return raw + b"\0" * (((_FIXED + len(name) + 8) & ~7) - len(raw))


@contextmanager
def index_entry_update(path: Path, name: bytes) -> Iterator[Callable[[str, int, os.stat_result], None]]:
    """Lock the index at ``path`` and check that file ``name``'s entry can be set; yield the setter.

    The setter ``(sha, mode, st)`` writes the index with ``name`` at blob
    ``sha``, ``mode`` and the file's stat data ``st``, and releases the lock.
    Leaving the block without calling it leaves the index as it was (git holds
    the index locked the same way while it commits).

    Raises:
        UnsupportedIndex: the index is not one this module writes, or a file or
            folder in it is in the way of ``name`` (nothing is written).
        LockTaken: another git process holds the index.
        OSError: the file system fails.
    """
    with lock_file(path) as fd:
        index = read_index(path)
        old = index.entries.get(name)
        if old is not None and struct.unpack_from(">H", old, _FIXED - 2)[0] & _EXTENDED:
            raise UnsupportedIndex("the entry has extended flags (skip-worktree or intent-to-add)")
        folders = {b"/".join(name.split(b"/")[:depth]) for depth in range(1, name.count(b"/") + 1)}
        if any(other in folders or other.startswith(name + b"/") for other in index.entries):
            raise UnsupportedIndex(f"a file or folder in the index is in the way of {name!r}")

        def write(sha: str, mode: int, st: os.stat_result) -> None:
            index.entries[name] = _entry(name, sha, mode, st)
            ordered = [index.entries[key] for key in sorted(index.entries)]
            body = _HEADER.pack(b"DIRC", index.version, len(ordered)) + b"".join(ordered) + index.extensions
            os.write(fd, body + hashlib.sha1(body, usedforsecurity=False).digest())
            commit_lock(path)

        yield write
