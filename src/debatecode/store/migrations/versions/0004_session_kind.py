"""Add debate_sessions.kind: code debates (``solve``) and design debates (``debate``) share the table.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26

Existing rows are code debates.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("debate_sessions") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="code"))
        batch.create_index("ix_debate_sessions_kind", ["kind"])


def downgrade() -> None:
    with op.batch_alter_table("debate_sessions") as batch:
        batch.drop_index("ix_debate_sessions_kind")
        batch.drop_column("kind")
