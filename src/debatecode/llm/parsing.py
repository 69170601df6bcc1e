"""Pull code and votes out of model replies.

Two reply shapes are understood:

- **Chat** replies carry code in fenced blocks (```` ```python ````, ```` ```py ````
  or a bare ```` ``` ````). The block that defines ``entry_point`` wins, else the
  longest block that parses. A last block left open (the reply hit
  ``max_tokens``) is trimmed until it parses. Code without fences is accepted
  when it parses and defines ``entry_point`` (or any function or class when no
  entry point is given).
- **Completion** replies (base models; the prompt ended with the function
  header ``prompt_prefix``) continue that header. The code is
  ``prompt_prefix + reply``, cut at the first non-blank line of the reply that
  starts at column 0: that line is no longer part of the function body. This
  is the HumanEval stop rule (``\\ndef``, ``\\nclass``, ``\\nif __name__``,
  ``\\nprint(``, ``\\n#``, ``\\n```...``) in its general form, so helpers the model
  writes *after* the function are dropped; helpers must live inside it.
  Trailing lines are then dropped until the result parses (a reply cut off
  by ``max_tokens`` mid-statement still yields the complete lines).

Fenced blocks are found by markdown-it-py (CommonMark's rules: a fence opens with three or more
backticks, closes with as many on a line of their own, and one left open runs to the end).

Nothing here executes code; ``ast.parse`` only checks syntax.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

__all__ = ["COMPLETION_STOP", "CodeFence", "code_fences", "extract_choice", "extract_code"]

COMPLETION_STOP: list[str] = ["\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#", "\n```"]
"""Stop sequences for completion-style prompts (the HumanEval set plus a closing fence)."""

_MARKDOWN = MarkdownIt("commonmark")
_TAG = re.compile(r"[\w+-]*")
_PYTHON_TAGS = {"", "python", "py", "python3", "py3"}


@dataclass(frozen=True)
class CodeFence:
    """One fenced code block of a reply (backticks only: a model's ``~~~`` stays text)."""

    tag: str
    """The language word that opens the info string, lower-cased; "" when there is none."""
    code: str
    """The lines between the fences, each ending with a newline (an open block: up to the end)."""
    closed: bool
    """Whether the block has its closing fence (a reply cut off by ``max_tokens`` leaves it open)."""


def code_fences(text: str) -> list[CodeFence]:
    """The backtick-fenced code blocks of ``text``, in order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fences = []
    for token in _MARKDOWN.parse(text):
        if token.type != "fence" or not token.markup.startswith("`") or token.map is None:
            continue
        last = lines[token.map[1] - 1].strip() if token.map[1] - 1 > token.map[0] else ""
        closed = len(last) >= len(token.markup) and set(last) == {"`"}
        tag = _TAG.match(token.info.strip())
        fences.append(CodeFence(tag=tag.group(0).lower() if tag else "", code=token.content, closed=closed))
    return fences


_CODE_START = re.compile(r"^(?:def |async def |class |import |from |@)", re.MULTILINE)


def extract_code(reply: str, *, entry_point: str | None = None, prompt_prefix: str | None = None) -> str | None:
    """The Python code in ``reply``, or None when it holds none.

    Args:
        reply: the model's text.
        entry_point: name of the function the task asks for; blocks defining it are preferred.
        prompt_prefix: for completion-style prompts, the code the prompt ended with
            (imports, the function header and docstring). The reply continues it.

    Returns:
        Source code that parses, or, when the reply only holds fenced code that
        does not parse, the longest such block unchanged (so running it reports
        the syntax error). None when there is no code at all.
    """
    if prompt_prefix is not None:
        completed = _complete_prefix(prompt_prefix, reply)
        if completed is not None:
            return completed
    blocks = _fenced_blocks(reply)
    if blocks:
        return _best_block(blocks, entry_point)
    return _bare_code(reply, entry_point)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _defined_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _trim_until_parses(code: str, *, keep_lines: int = 0) -> str | None:
    """Drop trailing lines until ``code`` parses; never drop below ``keep_lines`` lines."""
    lines = code.rstrip().splitlines()
    while len(lines) > keep_lines:
        candidate = "\n".join(lines).rstrip()
        if candidate and _parses(candidate):
            return candidate + "\n"
        lines.pop()
    return None


def _complete_prefix(prefix: str, reply: str) -> str | None:
    lines = reply.splitlines(keepends=True)
    kept: list[str] = []
    for index, line in enumerate(lines):
        continues_prefix_line = index == 0 and not prefix.endswith("\n")
        if line.strip() and not line[0].isspace() and not continues_prefix_line:
            break
        kept.append(line)
    body = "".join(kept)
    if not body.strip():
        return None
    prefix_lines = len(prefix.rstrip().splitlines())
    return _trim_until_parses(prefix + body, keep_lines=prefix_lines)


def _fenced_blocks(reply: str) -> list[str]:
    return [fence.code for fence in code_fences(reply) if fence.tag in _PYTHON_TAGS and fence.code.strip()]


def _best_block(blocks: list[str], entry_point: str | None) -> str:
    parsed: list[str] = []
    for block in blocks:
        if _parses(block):
            parsed.append(block)
        else:
            trimmed = _trim_until_parses(block)
            if trimmed is not None and _defined_names(trimmed):
                parsed.append(trimmed)
    if entry_point is not None:
        defining = [b for b in parsed if entry_point in _defined_names(b)]
        if defining:
            return _normalise(max(defining, key=len))
    if parsed:
        return _normalise(max(parsed, key=len))
    return _normalise(max(blocks, key=len))


def _bare_code(reply: str, entry_point: str | None) -> str | None:
    if not reply.strip():
        return None
    starts = [0, *(m.start() for m in _CODE_START.finditer(reply))]
    for start in starts:
        code = _trim_until_parses(reply[start:])
        if code is None:
            continue
        names = _defined_names(code)
        if (entry_point in names) if entry_point is not None else bool(names):
            return code
    return None


def _normalise(code: str) -> str:
    return code.rstrip() + "\n"


_OPTION_WORD = r"(?:candidate|option|solution|version|proposal)"
_CHOICE = r"(?:(\d+)\b|(?-i:([A-Z]))\b)"  # a number, or an upper-case letter standing alone
_VOTE_PHRASE = re.compile(
    r"\b(?:vote|choose|chose|choice|pick|select|prefer|answer|best|winner)\w*\b[^.\n\d]{0,40}?" + _CHOICE,
    re.IGNORECASE,
)
_LEADING_CHOICE = re.compile(
    r"^\W*(?:" + _OPTION_WORD + r"\s*#?\s*)?(?:(\d+)\b|(?-i:([A-Z]))(?=\s*$|[.):,\n]))",
    re.IGNORECASE,
)
_MENTION = re.compile(r"\b" + _OPTION_WORD + r"\s*#?\s*" + _CHOICE, re.IGNORECASE)


def extract_choice(reply: str, n_options: int) -> int | None:
    """The 0-based index of the option a vote picks, or None when unclear.

    Options are numbered from 1 (``"Candidate 2"``, ``"2"``) or lettered from A
    (``"B"``) in prompts; the result is 0-based (both of those give 1).
    Read in this order: the last explicit vote phrase ("I vote for candidate 3",
    "Best: B"); a number or letter alone on the first line (completion-style
    votes); the only option mentioned at all. Several options mentioned
    without a vote phrase, or an out-of-range pick, give None.
    """
    if n_options < 1:
        return None
    phrases = list(_VOTE_PHRASE.finditer(reply))
    if phrases:
        choice = _to_index(phrases[-1], n_options)
        if choice is not None:
            return choice
    mentioned = {_to_index(m, n_options) for m in _MENTION.finditer(reply)}
    leading = _LEADING_CHOICE.match(reply)
    if leading:
        rest_of_line = reply[leading.end() :].split("\n", 1)[0].strip(" .:)")
        if not rest_of_line:
            return _to_index(leading, n_options)
        mentioned.add(_to_index(leading, n_options))
    if len(mentioned) == 1:
        return mentioned.pop()
    return None


def _to_index(match: re.Match[str], n_options: int) -> int | None:
    number, letter = match.group(1), match.group(2)
    if number is not None:
        index = int(number) - 1
    elif letter is not None:
        index = ord(letter.upper()) - ord("A")
    else:
        return None
    return index if 0 <= index < n_options else None
