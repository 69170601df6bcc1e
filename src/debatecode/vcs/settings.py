"""Settings of the version history (the ``[vcs]`` section of ``debatecode.toml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["CleanupPolicy", "VcsSettings"]

CleanupPolicy = Literal["always", "on_success", "never"]


class VcsSettings(BaseModel):
    """The per-session git history in the output folder."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    cleanup: CleanupPolicy = "on_success"
    """When a session's worktree folder (``out/.worktrees/<id>``) is removed at the end: ``always``, ``on_success`` (the session completed; a failed or interrupted one keeps it for inspection and resume) or ``never``. The branch ``debate/<id>`` is never deleted."""

    def removes_worktree(self, status: str) -> bool:
        """Whether a session that ended with ``status`` should have its worktree folder removed."""
        if self.cleanup == "always":
            return True
        if self.cleanup == "never":
            return False
        return status == "completed"
