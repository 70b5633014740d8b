"""A route's writes are committed before its response starts: a client that got an answer never
sees the write lost to a crash (or a failed commit) after the answer was sent."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func, select
from starlette.types import Message, Receive, Scope, Send

from app.deps import SessionDep
from app.main import create_app
from app.models import Role, User


def test_the_session_commits_before_the_response_starts(make_settings):
    settings = make_settings()
    app = create_app(settings)

    def add_user(session: SessionDep) -> dict[str, str]:
        session.add(User(email="committed@example.com", role=Role.learner))
        return {}

    app.add_api_route("/test/write", add_user, methods=["POST"])
    seen_at_start: list[int] = []
    engine = create_engine(settings.database_url)

    def users() -> int:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(User)).scalar_one()

    async def watching(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_watched(message: Message) -> None:
            if message["type"] == "http.response.start" and scope["path"] == "/test/write":
                seen_at_start.append(users())
            await send(message)

        await app(scope, receive, send_watched)

    with TestClient(app), TestClient(watching) as client:
        before = users()
        assert client.post("/test/write").status_code == 200
    engine.dispose()
    assert seen_at_start == [before + 1]
