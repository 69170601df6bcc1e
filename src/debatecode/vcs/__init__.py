"""Per-session git version history (libgit2 through pygit2 writes it; GitPython reads it back).

``VersionRepository(out_dir).open_session(session_id)`` gives a worktree at
``out_dir/.worktrees/<session_id>`` on branch ``debate/<session_id>``, where every
changed code version becomes one commit; ``version_message`` writes the commit
message (phase, agent, round, tests, quality score). File history, blame,
diffs and exports read the committed history back. pygit2 and GitPython are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode.vcs.history import BlameLine
    from debatecode.vcs.messages import VersionMessage, version_message
    from debatecode.vcs.settings import VcsSettings
    from debatecode.vcs.worktree import CommitInfo, SessionWorktree, VersionRepository

__all__ = [
    "BlameLine",
    "CommitInfo",
    "SessionWorktree",
    "VcsSettings",
    "VersionMessage",
    "VersionRepository",
    "version_message",
]

_LAZY = {
    "BlameLine": "debatecode.vcs.history",
    "CommitInfo": "debatecode.vcs.worktree",
    "SessionWorktree": "debatecode.vcs.worktree",
    "VcsSettings": "debatecode.vcs.settings",
    "VersionMessage": "debatecode.vcs.messages",
    "VersionRepository": "debatecode.vcs.worktree",
    "version_message": "debatecode.vcs.messages",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
