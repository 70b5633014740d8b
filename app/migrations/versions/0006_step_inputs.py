"""step progress: the fingerprint of the design values that fed a step's last run

Revision ID: 0006_step_inputs
Revises: 0005_check_status_width
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_step_inputs"
down_revision: str | Sequence[str] | None = "0005_check_status_width"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Rows recorded before have no fingerprint: their stored status stands as it was."""
    with op.batch_alter_table("step_progress") as batch:
        batch.add_column(sa.Column("inputs_sha256", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("step_progress") as batch:
        batch.drop_column("inputs_sha256")
