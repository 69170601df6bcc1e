"""Create the session store: debate_sessions, debate_turns, code_versions.

Revision ID: 0001
Revises:
Create Date: 2025-11-25

Stores records of ``SCHEMA_VERSION = 1`` (``debatecode/store/records.py``).
The tables are written out here rather than taken from ``store/models.py`` so
that this revision keeps meaning what it meant when later models change.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
NAME = sa.String(255)


def _timestamp(name: str, *, nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "debate_sessions",
        sa.Column("id", ID, nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("task_title", sa.Text(), nullable=False),
        sa.Column("task_path", sa.Text(), nullable=False),
        sa.Column("task_hash", sa.String(128), nullable=False),
        sa.Column("topic", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("topology", sa.String(64), nullable=False),
        sa.Column("coordination_protocol", sa.String(64), nullable=False),
        sa.Column("model", NAME, nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("initiated_by", NAME, nullable=False),
        sa.Column("out_dir", sa.Text(), nullable=False),
        sa.Column("repo_path", sa.Text(), nullable=False),
        sa.Column("branch", NAME, nullable=False),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        _timestamp("completed_at", nullable=True),
        sa.Column("total_rounds", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("final_consensus_score", sa.Float(), nullable=True),
        sa.Column("final_version_id", ID, nullable=True),
        sa.Column("outcome", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_debate_sessions"),
    )
    op.create_index("ix_debate_sessions_status", "debate_sessions", ["status"])
    op.create_index("ix_debate_sessions_created_at", "debate_sessions", ["created_at"])

    op.create_table(
        "debate_turns",
        sa.Column("id", ID, nullable=False),
        sa.Column("session_id", ID, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("key", NAME, nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("agent_id", NAME, nullable=False),
        sa.Column("agent_role", NAME, nullable=False),
        sa.Column("provider", NAME, nullable=False),
        sa.Column("model", NAME, nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("code", sa.Text(), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("tool_calls", sa.JSON(), nullable=False),
        sa.Column("test_results", sa.JSON(), nullable=True),
        sa.Column("reflections", sa.JSON(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("response_time_ms", sa.Integer(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_debate_turns"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["debate_sessions.id"],
            name="fk_debate_turns_session_id_debate_sessions",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("session_id", "seq", name="uq_debate_turns_session_id_seq"),
        sa.UniqueConstraint("session_id", "key", name="uq_debate_turns_session_id_key"),
    )
    op.create_index("ix_debate_turns_session_id", "debate_turns", ["session_id"])

    op.create_table(
        "code_versions",
        sa.Column("id", ID, nullable=False),
        sa.Column("session_id", ID, nullable=False),
        sa.Column("turn_id", ID, nullable=True),
        sa.Column("agent_id", NAME, nullable=False),
        sa.Column("language", sa.String(32), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("version_number", sa.Integer(), nullable=False),
        sa.Column("commit_sha", sa.String(64), nullable=True),
        sa.Column("tests_passed", sa.Integer(), nullable=False),
        sa.Column("tests_total", sa.Integer(), nullable=False),
        sa.Column("test_pass_rate", sa.Float(), nullable=False),
        sa.Column("quality_score", sa.Float(), nullable=True),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("diff_from_previous", sa.Text(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_code_versions"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["debate_sessions.id"],
            name="fk_code_versions_session_id_debate_sessions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["turn_id"],
            ["debate_turns.id"],
            name="fk_code_versions_turn_id_debate_turns",
            ondelete="SET NULL",
        ),
        sa.UniqueConstraint("session_id", "version_number", name="uq_code_versions_session_id_version_number"),
    )
    op.create_index("ix_code_versions_session_id", "code_versions", ["session_id"])
    op.create_index("ix_code_versions_turn_id", "code_versions", ["turn_id"])


def downgrade() -> None:
    op.drop_table("code_versions")
    op.drop_table("debate_turns")
    op.drop_table("debate_sessions")
