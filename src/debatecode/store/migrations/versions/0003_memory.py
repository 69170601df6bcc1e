"""Add episodes and lessons: the memory layer's records and their embeddings.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26

Stores ``Episode`` and ``Lesson`` of schema version 1 (``debatecode/memory/episodes.py``).
Each row keeps its vector as float32 bytes with the embedder's name and the
vector size, so that a change of embedder is detected and the vectors recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
NAME = sa.String(255)


def upgrade() -> None:
    op.create_table(
        "episodes",
        sa.Column("id", ID, nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("session_id", ID, nullable=False),
        sa.Column("turn_id", ID, nullable=True),
        sa.Column("agent_id", NAME, nullable=False),
        sa.Column("task_title", sa.Text(), nullable=False),
        sa.Column("task_hash", sa.String(128), nullable=False),
        sa.Column("task_text", sa.Text(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("test_results", sa.JSON(), nullable=False),
        sa.Column("failure_analysis", sa.Text(), nullable=False),
        sa.Column("reflection", sa.Text(), nullable=False),
        sa.Column("root_cause", sa.Text(), nullable=False),
        sa.Column("improvement", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.Column("embedder", NAME, nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_episodes"),
    )
    op.create_index("ix_episodes_seq", "episodes", ["seq"])
    op.create_index("ix_episodes_session_id", "episodes", ["session_id"])
    op.create_index("ix_episodes_agent_id", "episodes", ["agent_id"])
    op.create_index("ix_episodes_created_at", "episodes", ["created_at"])

    op.create_table(
        "lessons",
        sa.Column("id", ID, nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source_episode_ids", sa.JSON(), nullable=False),
        sa.Column("task_hashes", sa.JSON(), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.Column("embedder", NAME, nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_lessons"),
    )
    op.create_index("ix_lessons_created_at", "lessons", ["created_at"])


def downgrade() -> None:
    op.drop_table("lessons")
    op.drop_table("episodes")
