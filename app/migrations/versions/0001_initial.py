"""users, designs, step progress and the simulation result cache

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLE = sa.Enum("learner", "instructor", name="user_role", native_enum=False, length=16)
STEP_STATUS = sa.Enum(
    "not_started",
    "in_progress",
    "passed",
    "failed",
    "needs_rerun",
    name="step_status",
    native_enum=False,
    length=16,
)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("email", sa.String(length=320), nullable=True, unique=True),
        sa.Column("role", ROLE, nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "designs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("course_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("yaml_text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("user_id", "course_id", name="uq_designs_user_course"),
    )
    op.create_index("ix_designs_user_id", "designs", ["user_id"])
    op.create_table(
        "step_progress",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("course_id", sa.String(length=64), nullable=False),
        sa.Column("step_id", sa.String(length=64), nullable=False),
        sa.Column("status", STEP_STATUS, nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("max_points", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("first_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("user_id", "course_id", "step_id", name="uq_step_progress_user_step"),
    )
    op.create_index("ix_step_progress_user_id", "step_progress", ["user_id"])
    op.create_table(
        "sim_results",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("design_hash", sa.String(length=64), nullable=False),
        sa.Column("scenario_name", sa.String(length=64), nullable=False),
        sa.Column("scenario_hash", sa.String(length=64), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("simulator_version", sa.String(length=32), nullable=False),
        sa.Column("result_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint(
            "design_hash", "scenario_hash", "seed", "simulator_version", name="uq_sim_results_key"
        ),
    )


def downgrade() -> None:
    op.drop_table("sim_results")
    op.drop_index("ix_step_progress_user_id", table_name="step_progress")
    op.drop_table("step_progress")
    op.drop_index("ix_designs_user_id", table_name="designs")
    op.drop_table("designs")
    op.drop_table("users")
