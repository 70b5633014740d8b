"""check outcomes: each learner's first and latest verdict per check

Revision ID: 0002_check_outcomes
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_check_outcomes"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "check_outcomes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("course_id", sa.String(length=64), nullable=False),
        sa.Column("step_id", sa.String(length=64), nullable=False),
        sa.Column("check_id", sa.String(length=64), nullable=False),
        sa.Column("first_status", sa.String(length=8), nullable=False),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_status", sa.String(length=8), nullable=False),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.UniqueConstraint(
            "user_id", "course_id", "step_id", "check_id", name="uq_check_outcomes_user_check"
        ),
    )
    op.create_index("ix_check_outcomes_user_id", "check_outcomes", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_check_outcomes_user_id", table_name="check_outcomes")
    op.drop_table("check_outcomes")
