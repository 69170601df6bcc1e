"""The question a design debate argues over, and the context it argues over.

A question is a string (``debatecode debate "Should we ...?"``) or a markdown
file (``debatecode debate question.md``) with optional YAML front matter:

.. code-block:: markdown

    ---
    title: Session events store
    perspectives: [simplicity, data-integrity]
    mode: deliberative
    context: [docs/storage.md, src/store.py]
    ---
    Should a small team store session events in SQLite or PostgreSQL?

Context files (front matter ``context`` or ``--context``) are read as text,
each capped so that a large file cannot crowd the question out of a small
model's window; what was cut is said in the prompt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from debatecode.errors import TaskError
from debatecode.input_files import InputFileError, read_input_file

__all__ = ["ContextDocument", "DesignQuestion", "load_question"]

MAX_QUESTION_BYTES = 64 * 1024
MAX_CONTEXT_CHARS = 12_000
"""Characters kept of each context file (the rest is cut, and the prompt says so)."""
MAX_CONTEXT_FILES = 8
MAX_CONTEXT_BYTES = 16 * 1024 * 1024
"""Largest context file read at all (a larger one is refused; smaller ones are cut to ``MAX_CONTEXT_CHARS``)."""


class ContextDocument(BaseModel):
    """One context file: code, docs or a diff the debate is about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    text: str
    truncated_chars: int = 0
    """Characters cut from the end of the file."""


class _FrontMatter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str | None = None
    perspectives: list[str] = Field(default_factory=list)
    mode: Literal["deliberative", "patchlist"] | None = None
    context: list[str] = Field(default_factory=list)


class DesignQuestion(BaseModel):
    """A question to debate, with its context documents."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    text: str
    context: tuple[ContextDocument, ...] = ()
    perspectives: tuple[str, ...] = ()
    """Perspectives the question file asks for (``--perspectives`` overrides)."""
    mode: Literal["deliberative", "patchlist"] | None = None
    path: str = "<string>"

    @property
    def text_hash(self) -> str:
        """sha256 of the question and its context, so a resume can refuse a changed question."""
        digest = hashlib.sha256(self.text.encode("utf-8"))
        for doc in self.context:
            digest.update(f"\0{doc.path}\0{doc.text}".encode())
        return digest.hexdigest()

    def context_text(self) -> str:
        """The context documents as one markdown block ('' without context)."""
        parts = []
        for doc in self.context:
            cut = f"\n[... {doc.truncated_chars} more characters cut]" if doc.truncated_chars else ""
            parts.append(f"### {doc.path}\n```\n{doc.text}{cut}\n```")
        return "\n\n".join(parts)


def load_question(source: str, *, context: Sequence[Path] = (), base: Path | None = None) -> DesignQuestion:
    """The question in ``source``: a path to a ``.md``/``.txt`` file if one exists, else the text itself.

    Raises:
        TaskError: the file is unreadable, too large, or its front matter is malformed; a context file
            is missing, binary or a folder; the question is empty.
    """
    candidate = Path(source)
    is_file = len(source) < 4096 and "\n" not in source and candidate.suffix in (".md", ".txt", ".markdown")
    if is_file and not candidate.exists():  # a folder or a FIFO is said to be one by _from_file
        raise TaskError(candidate, "no such question file", fix="give the question in quotes, or an existing .md file")
    if is_file:
        return _from_file(candidate, context)
    text = source.strip()
    if not text:
        raise TaskError("<question>", "the question is empty", fix='debatecode debate "Should we ...?"')
    docs = _read_context(context, base or Path.cwd())
    return DesignQuestion(title=_title_of(text), text=text, context=docs)


def _from_file(path: Path, extra_context: Sequence[Path]) -> DesignQuestion:
    try:
        raw = read_input_file(path, max_bytes=MAX_QUESTION_BYTES, what="question file")
    except InputFileError as exc:
        fix = "put long material in --context files" if exc.problem == "too_large" else None
        raise TaskError(path, exc.reason, fix=fix) from exc
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark (Windows editors) is not part of the text
    except UnicodeDecodeError as exc:
        raise TaskError(path, "the question file is not UTF-8 text") from exc
    front, body = _split_front_matter(path, text)
    body = body.strip()
    if not body:
        raise TaskError(path, "the question file has no question after its front matter")
    docs = _read_context([*(Path(p) for p in front.context), *extra_context], path.parent)
    return DesignQuestion(
        title=front.title or _title_of(body),
        text=body,
        context=docs,
        perspectives=tuple(front.perspectives),
        mode=front.mode,
        path=str(path.resolve()),
    )


def _split_front_matter(path: Path, text: str) -> tuple[_FrontMatter, str]:
    if not text.startswith("---"):
        return _FrontMatter(), text
    end = text.find("\n---", 3)
    if end < 0:
        raise TaskError(
            path, "the front matter starting on line 1 is never closed", line=1, fix="end it with a line '---'"
        )
    try:
        data: Any = yaml.safe_load(text[3:end]) or {}
    except yaml.YAMLError as exc:
        raise TaskError(path, f"the front matter is not valid YAML: {exc}", line=1) from exc
    if not isinstance(data, dict):
        raise TaskError(path, "the front matter must be a mapping of keys to values", line=1)
    try:
        front = _FrontMatter.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise TaskError(
            path, f"bad front matter: {problems}", line=1, fix="known keys: title, perspectives, mode, context"
        ) from exc
    return front, text[end + 4 :]


def _read_context(paths: Sequence[Path], base: Path) -> tuple[ContextDocument, ...]:
    if len(paths) > MAX_CONTEXT_FILES:
        raise TaskError(
            paths[MAX_CONTEXT_FILES],
            f"at most {MAX_CONTEXT_FILES} context files are read",
            fix="pass the files that matter most, or a diff",
        )
    docs = []
    for given in paths:
        path = given if given.is_absolute() else base / given
        try:
            raw = read_input_file(path, max_bytes=MAX_CONTEXT_BYTES, what="context file")
        except InputFileError as exc:
            if exc.problem == "missing":
                raise TaskError(path, "context file not found", fix="check the path given to --context") from exc
            fix = "pass the part that matters, or a diff" if exc.problem == "too_large" else None
            raise TaskError(path, exc.reason, fix=fix) from exc
        if b"\0" in raw[:8192]:
            raise TaskError(path, "the context file looks binary", fix="pass source, docs or a diff as text")
        text = raw.decode("utf-8", errors="replace")
        cut = max(0, len(text) - MAX_CONTEXT_CHARS)
        docs.append(ContextDocument(path=str(given), text=text[:MAX_CONTEXT_CHARS], truncated_chars=cut))
    return tuple(docs)


def _title_of(text: str) -> str:
    first = next((line.strip(" #\t") for line in text.splitlines() if line.strip(" #\t")), text)
    return first if len(first) <= 80 else first[:79].rstrip() + "…"
