"""session generation: sessions revocable on the server (sign-out, new password)

Revision ID: 0003_session_generation
Revises: 0002_check_outcomes
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_session_generation"
down_revision: str | Sequence[str] | None = "0002_check_outcomes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN on SQLite too: copying the table would cascade-delete its children.
    op.add_column(
        "users", sa.Column("session_generation", sa.Integer(), nullable=False, server_default="0")
    )


def downgrade() -> None:
    op.drop_column("users", "session_generation")
