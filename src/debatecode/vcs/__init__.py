"""Per-session git version history (GitPython).

``VersionRepository(out_dir).open_session(session_id)`` gives a worktree at
``out_dir/.worktrees/<session_id>`` on branch ``debate/<session_id>``, where every
changed code version becomes one commit. GitPython is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debatecode.vcs.worktree import CommitInfo, SessionWorktree, VersionRepository

__all__ = ["CommitInfo", "SessionWorktree", "VersionRepository"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from debatecode.vcs import worktree

        return getattr(worktree, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
