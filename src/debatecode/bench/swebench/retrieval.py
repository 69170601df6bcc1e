"""Which files of a repository an issue is about: lexical ranking at ``base_commit``.

The repository is read with git from the run's mirror (``git ls-tree`` and one
``git cat-file --batch``), never from a checkout a solver could have touched.
Text files up to ``max_file_bytes`` with a source or documentation suffix are
ranked for the problem statement by:

- **BM25** over identifier tokens (``camelCase`` and ``snake_case`` split, lower-cased)
  of each file's path and content;
- **mentions**: the statement names the file's path or module (``pkg/mod.py``,
  ``pkg.mod``, ``mod.py``), or a function or class the file defines
  (``def name`` / ``class Name``); each adds a fixed boost;
- test files (``tests/``, ``test_*.py``) count at ``test_weight``, so the code
  under test ranks first but the tests that show its use still come along.

Ties are broken by path, so the ranking is deterministic. Each of the top ``k``
files comes with an excerpt of at most ``max_excerpt_chars``: the whole file when
it fits, else the windows of lines around the definitions the statement names and
the lines richest in query terms, in file order, joined by ``...`` markers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from debatecode.bench.swebench._git import git
from debatecode.bench.swebench.repos import RepoMirror

__all__ = [
    "TEXT_SUFFIXES",
    "RetrievedFile",
    "rank_files",
    "read_repository",
    "retrieve",
    "tokenize",
]

TEXT_SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt", ".cfg", ".toml", ".ini", ".yaml", ".yml", ".json")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_DEFINITION = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be by for from has have if in is it its of on or the this that to was were with "
        "self none true false return def class import not but should when",
    )
)
_K1 = 1.5
_B = 0.75
PATH_BOOST = 6.0
"""Added when the statement names the file (path, module or file name)."""
DEFINITION_BOOST = 4.0
"""Added per function or class the file defines that the statement names."""


def tokenize(text: str) -> list[str]:
    """Lower-case identifier parts: ``parseHTTPResponse_v2`` -> ``parse http response v2``, plus the whole word."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        parts = [part.lower() for piece in word.split("_") for part in _CAMEL.findall(piece)]
        whole = word.lower().strip("_")
        tokens.extend(part for part in parts if len(part) > 1 and part not in _STOP)
        if len(parts) > 1 and whole not in _STOP:
            tokens.append(whole)
    return tokens


@dataclass(frozen=True)
class RetrievedFile:
    """One ranked file: its score, why, and a bounded excerpt of its content at ``base_commit``."""

    path: str
    score: float
    excerpt: str
    truncated: bool = False
    """Whether ``excerpt`` is only part of the file."""
    mentions: list[str] = field(default_factory=list)
    """Names from the statement this file matched (its path, module or definitions)."""


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or "tests/" in path or path.startswith("test/")


def _mentions(path: str, text: str, statement: str, statement_words: set[str]) -> tuple[float, list[str]]:
    boost = 0.0
    found: list[str] = []
    module = path.removesuffix(".py").replace("/", ".")
    name = path.rsplit("/", 1)[-1]
    for form in dict.fromkeys((path, module, name if "." in name else "")):
        if form and len(form) > 3 and re.search(rf"(?<![\w.]){re.escape(form)}(?![\w])", statement):
            boost += PATH_BOOST
            found.append(form)
            break
    if path.endswith((".py", ".pyi")):
        for definition in sorted(set(_DEFINITION.findall(text))):
            if definition in statement_words and not definition.startswith("__") and len(definition) > 2:
                boost += DEFINITION_BOOST
                found.append(definition)
    return boost, found


def _excerpt(text: str, query: set[str], anchors: list[str], limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    lines = text.splitlines(keepends=True)
    weights = [sum(1 for token in tokenize(line) if token in query) for line in lines]
    for anchor in anchors:
        pattern = re.compile(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(anchor)}\b")
        for number, line in enumerate(lines):
            if pattern.match(line):
                weights[number] += 100
    order = sorted(range(len(lines)), key=lambda n: (-weights[n], n))
    keep: set[int] = set()
    used = 0
    for centre in order:
        if weights[centre] <= 0 and keep:
            break
        window = [n for n in range(max(0, centre - 3), min(len(lines), centre + 25)) if n not in keep]
        cost = sum(len(lines[n]) for n in window)
        if used + cost > limit:
            if keep:
                break
            window = window[: max(1, len(window) // 2)]
            cost = sum(len(lines[n]) for n in window)
        keep.update(window)
        used += cost
    parts: list[str] = []
    previous = -1
    for number in sorted(keep):
        if number != previous + 1:
            parts.append(f"... (lines {previous + 2}-{number} omitted)\n")
        parts.append(lines[number])
        previous = number
    if previous < len(lines) - 1:
        parts.append(f"... (lines {previous + 2}-{len(lines)} omitted)\n")
    return "".join(parts), True


def rank_files(
    files: Mapping[str, str],
    statement: str,
    *,
    k: int = 5,
    max_excerpt_chars: int = 6000,
    test_weight: float = 0.5,
) -> list[RetrievedFile]:
    """The ``k`` files of ``files`` (path -> text) most relevant to ``statement``, best first."""
    query_counts = Counter(tokenize(statement))
    if not files:
        return []
    query = set(query_counts)
    statement_words = set(_WORD.findall(statement))
    documents = {path: Counter(tokenize(path) * 3 + tokenize(text)) for path, text in files.items()}
    average = sum(sum(doc.values()) for doc in documents.values()) / len(documents) or 1.0
    frequency = Counter(token for doc in documents.values() for token in set(doc) if token in query)
    total = len(documents)
    scored: list[tuple[float, str, list[str]]] = []
    for path, doc in documents.items():
        length = sum(doc.values())
        score = 0.0
        for token, weight in query_counts.items():
            tf = doc.get(token, 0)
            if not tf:
                continue
            idf = math.log(1 + (total - frequency[token] + 0.5) / (frequency[token] + 0.5))
            score += min(weight, 3) * idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / average))
        boost, found = _mentions(path, files[path], statement, statement_words)
        score += boost
        if _is_test(path):
            score *= test_weight
        scored.append((score, path, found))
    scored.sort(key=lambda item: (-item[0], item[1]))
    results: list[RetrievedFile] = []
    for score, path, found in scored[:k]:
        if score <= 0:
            break
        anchors = [name for name in found if "." not in name and "/" not in name]
        excerpt, truncated = _excerpt(files[path], query, anchors, max_excerpt_chars)
        results.append(
            RetrievedFile(path=path, score=round(score, 4), excerpt=excerpt, truncated=truncated, mentions=found)
        )
    return results


def read_repository(
    mirror: RepoMirror, commit: str, *, suffixes: tuple[str, ...] = TEXT_SUFFIXES, max_file_bytes: int = 200_000
) -> dict[str, str]:
    """Path -> text of the commit's text files (by suffix, at most ``max_file_bytes``, UTF-8), read with git.

    Raises:
        VersionControlError: git failed (for example, no such commit).
    """
    listing = git("--git-dir", str(mirror.path), "ls-tree", "-r", "-l", "-z", commit)
    wanted: list[tuple[str, str]] = []
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        mode, kind, sha, length = meta.split()
        if kind != "blob" or mode == "120000" or not path.endswith(suffixes) or length == "-":
            continue
        if int(length) <= max_file_bytes:
            wanted.append((path, sha))
    if not wanted:
        return {}
    batch = git(
        "--git-dir", str(mirror.path), "cat-file", "--batch", stdin="".join(sha + "\n" for _, sha in wanted).encode()
    )
    files: dict[str, str] = {}
    offset = 0
    for path, _ in wanted:
        header_end = batch.index(b"\n", offset)
        size = int(batch[offset:header_end].split()[2])
        data = batch[header_end + 1 : header_end + 1 + size]
        offset = header_end + 1 + size + 1
        try:
            files[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return files


def retrieve(
    mirror: RepoMirror,
    commit: str,
    statement: str,
    *,
    k: int = 5,
    max_excerpt_chars: int = 6000,
    test_weight: float = 0.5,
) -> list[RetrievedFile]:
    """The ``k`` files of ``mirror`` at ``commit`` most relevant to ``statement`` (see the module docstring).

    Raises:
        VersionControlError: git failed.
    """
    files = read_repository(mirror, commit)
    return rank_files(files, statement, k=k, max_excerpt_chars=max_excerpt_chars, test_weight=test_weight)
