"""Add session_leases: which process runs a session now, so that two resumes of one session cannot both write it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28

No session holds a lease after the upgrade; the next run or resume of any session takes one.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_leases",
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("lease_id", sa.String(64), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("resuming", sa.Boolean(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("session_id", name="pk_session_leases"),
    )


def downgrade() -> None:
    op.drop_table("session_leases")
