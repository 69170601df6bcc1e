"""Git objects read and written in process: blobs, trees and commits in a repository's object database.

A code version used to cost a ``git add`` and a ``git commit`` process; here
its blob, the trees on its path and its commit are hashed and stored as loose
objects exactly as git would store them, and read back through gitdb (pure
Python, packs included). Only SHA-1 repositories are handled (the caller checks).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from gitdb import GitDB

from debatecode.vcs._git import DirectWriteRefused

__all__ = ["EMPTY_TREE", "TREE_MODE", "ObjectStore", "TreeEntry", "UnsupportedTree", "commit_object"]

TREE_MODE = 0o40000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class UnsupportedTree(DirectWriteRefused):
    """A path cannot be placed in a tree in process (a folder on it is a file, or the file is a folder)."""


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry of a tree object: its name (raw bytes), mode and object sha."""

    name: bytes
    mode: int
    sha: str

    @property
    def kind(self) -> str:
        """``tree``, ``commit`` (a submodule) or ``blob``, as ``git ls-tree`` names it."""
        if self.mode == TREE_MODE:
            return "tree"
        return "commit" if self.mode == 0o160000 else "blob"

    @property
    def kind_name(self) -> str:
        """``blob``, ``tree`` or ``submodule``."""
        return "submodule" if self.mode == 0o160000 else self.kind


def _tree_bytes(entries: dict[bytes, TreeEntry]) -> bytes:
    # git orders a tree's entries by name, a folder's name as if it ended in '/'
    ordered = sorted(entries.values(), key=lambda e: e.name + b"/" if e.mode == TREE_MODE else e.name)
    return b"".join(b"%o %s\0" % (e.mode, e.name) + bytes.fromhex(e.sha) for e in ordered)


def _parse_tree(data: bytes) -> dict[bytes, TreeEntry]:
    entries: dict[bytes, TreeEntry] = {}
    offset = 0
    while offset < len(data):
        space = data.index(b" ", offset)
        nul = data.index(b"\0", space)
        name = data[space + 1 : nul]
        entries[name] = TreeEntry(name, int(data[offset:space], 8), data[nul + 1 : nul + 21].hex())
        offset = nul + 21
    return entries


def commit_object(tree: str, parents: list[str], ident: str, message: str) -> bytes:
    """The bytes of a commit object whose author and committer are both ``ident`` (``name <email> time zone``)."""
    lines = [f"tree {tree}", *(f"parent {parent}" for parent in parents), f"author {ident}", f"committer {ident}"]
    return ("\n".join(lines) + "\n\n" + message).encode("utf-8")


class ObjectStore:
    """The object database under ``objects_dir`` (loose objects and packs, alternates included).

    Trees read are kept by sha (they never change). Not thread-safe.
    Errors: ``gitdb`` errors and ``OSError`` pass through; callers translate them.
    """

    def __init__(self, objects_dir: Path) -> None:
        self._root = objects_dir
        self._gitdb: GitDB | None = None
        self._trees: dict[str, dict[bytes, TreeEntry]] = {EMPTY_TREE: {}}

    @property
    def _db(self) -> GitDB:
        """gitdb's view of the database (packs and alternates), made when a loose read is not enough."""
        if self._gitdb is None:
            self._gitdb = GitDB(str(self._root))
        return self._gitdb

    def read(self, sha: str) -> bytes:
        """The content of object ``sha``: its loose file when there is one (as git looks first), else through gitdb.

        Raises:
            gitdb.exc.BadObject: no such object.
        """
        try:
            with open(os.path.join(self._root, sha[:2], sha[2:]), "rb") as handle:
                raw = zlib.decompress(handle.read())
        except (FileNotFoundError, NotADirectoryError, zlib.error):
            stream = self._db.stream(bytes.fromhex(sha))
            data: bytes = stream.read()
            return data
        header, _, content = raw.partition(b"\0")
        if not header.endswith(b" %d" % len(content)):  # not a whole object: gitdb reads it and says what is wrong
            stream = self._db.stream(bytes.fromhex(sha))
            return bytes(stream.read())
        return content

    def has(self, sha: str) -> bool:
        """Whether object ``sha`` is in the database (loose, packed or in an alternate)."""
        if os.path.isfile(os.path.join(self._root, sha[:2], sha[2:])):
            return True
        return bool(self._db.has_object(bytes.fromhex(sha)))

    def store(self, kind: str, data: bytes) -> str:
        """Store ``data`` as a loose object of ``kind`` (``blob``, ``tree``, ``commit``) unless it is one; return its sha.

        Written as git writes it: compressed into ``xx/tmp_obj_*``, made read-only, renamed into place.

        Raises:
            OSError: the file system fails.
        """
        raw = b"%s %d\0" % (kind.encode("ascii"), len(data)) + data
        sha = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        path = self._root / sha[:2] / sha[2:]
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix="tmp_obj_", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(zlib.compress(raw, 1))  # git's core.looseCompression default
                os.chmod(temporary, 0o444)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        return sha

    def tree(self, sha: str) -> dict[bytes, TreeEntry]:
        """The entries of tree ``sha`` by name (do not change the mapping returned).

        Raises:
            gitdb.exc.BadObject: no such object.
        """
        if sha not in self._trees:
            self._trees[sha] = _parse_tree(self.read(sha))
        return self._trees[sha]

    def entry(self, root: str, parts: tuple[bytes, ...]) -> TreeEntry | None:
        """The entry at path ``parts`` below tree ``root``, or None when there is none.

        Raises:
            gitdb.exc.BadObject: a tree is missing.
        """
        entries = self.tree(root)
        for index, name in enumerate(parts):
            found = entries.get(name)
            if found is None or index == len(parts) - 1:
                return found
            if found.mode != TREE_MODE:
                return None
            entries = self.tree(found.sha)
        return None

    def tree_with_file(self, root: str, parts: tuple[bytes, ...], blob: str, mode: int) -> str:
        """Store the trees of ``root`` with ``blob`` at path ``parts``; return the new root tree's sha.

        Raises:
            UnsupportedTree: a folder on the path is a file, or the path is a folder or submodule.
            gitdb.exc.BadObject: a tree is missing.
        """
        entries = dict(self.tree(root))
        name = parts[0]
        found = entries.get(name)
        if len(parts) == 1:
            if found is not None and found.mode in (TREE_MODE, 0o160000):
                raise UnsupportedTree(f"{name!r} is a {found.kind}")
            entries[name] = TreeEntry(name, mode, blob)
        else:
            if found is not None and found.mode != TREE_MODE:
                raise UnsupportedTree(f"{name!r} is not a folder")
            below = self.tree_with_file(found.sha if found else EMPTY_TREE, parts[1:], blob, mode)
            entries[name] = TreeEntry(name, TREE_MODE, below)
        sha = self.store("tree", _tree_bytes(entries))
        self._trees[sha] = entries
        return sha
