"""step progress: the fingerprint of what judged a step's last run (its checks and scenarios)

Revision ID: 0007_step_checks
Revises: 0006_step_inputs
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_step_checks"
down_revision: str | Sequence[str] | None = "0006_step_inputs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Rows recorded before have no fingerprint: their stored status stands as it was."""
    with op.batch_alter_table("step_progress") as batch:
        batch.add_column(sa.Column("checks_sha256", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("step_progress") as batch:
        batch.drop_column("checks_sha256")
