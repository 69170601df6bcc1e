"""The prompts of solve mode. They are built from the problem statement and the repository only.

Nothing here may read an instance's ``patch``, ``test_patch``, ``FAIL_TO_PASS``,
``PASS_TO_PASS`` or ``hints_text``: the functions take the statement and
repository-derived text, never the instance itself (the information barrier).
"""

from __future__ import annotations

from collections.abc import Sequence

from debatecode.bench.swebench.checking import CheckResult
from debatecode.bench.swebench.retrieval import RetrievedFile
from debatecode.llm import Message

__all__ = ["critique_messages", "proposal_messages", "retry_message"]

EDIT_FORMAT = """\
Reply with your reasoning in a few sentences, then the edits. Use SEARCH/REPLACE blocks:

path/to/file.py
<<<<<<< SEARCH
the exact lines currently in the file (copy them, with their indentation)
=======
the lines that replace them
>>>>>>> REPLACE

One block per change; the SEARCH text must match the file exactly. An empty SEARCH section creates a new file.
A unified diff in a ```diff block (--- a/path, +++ b/path, @@ hunks) is accepted too.
Fix the source code; do not edit the tests."""

SYSTEM = (
    "You are a careful software engineer fixing an issue in a Python repository. "
    "You see the issue and the repository's most relevant files at the commit to fix."
)
_LISTING_LIMIT = 200


def _files_text(files: Sequence[RetrievedFile]) -> str:
    blocks = []
    for item in files:
        note = " (excerpt)" if item.truncated else ""
        blocks.append(f"### {item.path}{note}\n```\n{item.excerpt.rstrip()}\n```")
    return "\n\n".join(blocks) if blocks else "(no file matched the issue)"


def _listing(paths: Sequence[str]) -> str:
    shown = list(paths[:_LISTING_LIMIT])
    more = f"\n... and {len(paths) - len(shown)} more" if len(paths) > len(shown) else ""
    return "\n".join(shown) + more


def proposal_messages(statement: str, files: Sequence[RetrievedFile], listing: Sequence[str]) -> list[Message]:
    """The proposal prompt: the issue, the repository's file list and the retrieved files, then the edit format."""
    user = (
        f"## Issue\n\n{statement.strip()}\n\n"
        f"## Repository files\n\n{_listing(listing)}\n\n"
        f"## Relevant files\n\n{_files_text(files)}\n\n"
        f"## Your task\n\nChange the repository so the issue is resolved.\n\n{EDIT_FORMAT}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def retry_message(reply: str, error: str) -> list[Message]:
    """The follow-up when a reply's edits could not be used."""
    return [
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": f"Your edits could not be used: {error}\n\nReply again with complete edits.\n\n{EDIT_FORMAT}",
        },
    ]


def _evidence(result: CheckResult | None, broken: Sequence[str]) -> str:
    if result is None:
        return "not run"
    if result.status == "patch_failed":
        return "the patch does not apply"
    if result.status == "no_results":
        return "the test run produced no results:\n" + result.output_tail[-800:]
    text = f"{result.passed} existing tests pass"
    if broken:
        text += f"; it breaks {len(broken)} that passed before: {', '.join(broken[:10])}"
    elif result.failing:
        text += f"; failing (also before the patch): {', '.join(result.failing[:10])}"
    return text


def critique_messages(
    statement: str,
    files: Sequence[RetrievedFile],
    candidates: Sequence[tuple[str, CheckResult | None, Sequence[str]]],
) -> list[Message]:
    """The critique-and-vote prompt: every candidate's diff with its test evidence; asks for a ranking."""
    shown = []
    for number, (patch, result, broken) in enumerate(candidates, start=1):
        shown.append(
            f"### Candidate {number}\nExisting tests: {_evidence(result, broken)}\n```diff\n{patch.rstrip()}\n```"
        )
    user = (
        f"## Issue\n\n{statement.strip()}\n\n## Relevant files\n\n{_files_text(files)}\n\n"
        "## Candidate fixes\n\n" + "\n\n".join(shown) + "\n\n## Your task\n\n"
        "Critique each candidate in a sentence or two: does it resolve the issue, does it break anything, "
        "is it minimal? Then rank all candidates, best first, on a last line like\n"
        "Ranking: 2 > 1 > 3"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
