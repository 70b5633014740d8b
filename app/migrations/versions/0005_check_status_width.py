"""check outcomes: room for the not_exercised status (16 characters)

Revision ID: 0005_check_status_width
Revises: 0004_normal_form_emails
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_check_status_width"
down_revision: str | Sequence[str] | None = "0004_normal_form_emails"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("check_outcomes") as batch:
        for column in ("first_status", "last_status"):
            batch.alter_column(
                column, type_=sa.String(length=16), existing_type=sa.String(length=8)
            )


def downgrade() -> None:
    """Back to 8 characters: a not_exercised verdict is kept as the failure it scored as."""
    for column in ("first_status", "last_status"):
        op.execute(
            sa.text(f"UPDATE check_outcomes SET {column} = 'fail' WHERE {column} = 'not_exercised'")
        )
    with op.batch_alter_table("check_outcomes") as batch:
        for column in ("first_status", "last_status"):
            batch.alter_column(
                column, type_=sa.String(length=8), existing_type=sa.String(length=16)
            )
