"""normal-form emails: existing addresses in the form new ones are stored in

Addresses were stored stripped and lower-cased only, so "josé" typed with a combining accent and
precomposed made two accounts that print the same. New addresses are stored in normal form
(app.accounts.valid_email: NFKC, lower case, the domain IDNA-decoded); this puts existing ones in
the same form so that signing in (which looks the normal form up) finds them. An address whose
normal form another account already has is left as it was: signing in then finds the other
account, so an instructor removes one of the two (``designlab remove-user``).

Revision ID: 0004_normal_form_emails
Revises: 0003_session_generation
Create Date: 2026-12-01
"""

import contextlib
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from email_validator import EmailNotValidError, validate_email

revision: str = "0004_normal_form_emails"
down_revision: str | Sequence[str] | None = "0003_session_generation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _normal_form(email: str) -> str:
    """The same form as app.accounts.lookup_email at the time of this migration."""
    text = unicodedata.normalize("NFKC", email.strip())
    with contextlib.suppress(EmailNotValidError):
        text = validate_email(text, check_deliverability=False).normalized
    return unicodedata.normalize("NFKC", text).lower()


def upgrade() -> None:
    users = sa.table("users", sa.column("id", sa.Integer()), sa.column("email", sa.String()))
    connection = op.get_bind()
    rows = connection.execute(sa.select(users.c.id, users.c.email).order_by(users.c.id)).all()
    taken = {email for _, email in rows if email is not None}
    for user_id, email in rows:
        if email is None:
            continue
        normal = _normal_form(email)
        if normal != email and normal not in taken:
            connection.execute(users.update().where(users.c.id == user_id).values(email=normal))
            taken.discard(email)
            taken.add(normal)


def downgrade() -> None:
    """Nothing to undo: the normal form is a valid address in the old form too."""
