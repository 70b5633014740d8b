"""Rate limits on sign-in, grading and simulation, kept in this process's memory (``limits``,
moving window).

A rule names a route (its name and method; the route's own path pattern then matches requests)
and a limit such as ``10/minute``. Sign-in is counted per client address; grading and simulation
per signed-in account (the session's user), else per client address: a guest learner, a visitor
without a session and the JSON API all share their address's budget, so making a new guest (a
new cookie) does not bring a new budget. Over the limit the answer is 429 with ``Retry-After``,
as JSON, an htmx fragment or a page like any other error. With REDIS_URL the counts are kept in
Redis, shared by every instance; without it each app process counts on its own (see
deploy/README.md).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from fastapi.routing import iter_route_contexts
from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from starlette.requests import Request
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import DesignlabError
from app.session_state import is_account_session, session_user_id
from app.settings import Settings
from app.web.errors import error_response

STORAGE_TIMEOUTS = {"socket_timeout": 1.0, "socket_connect_timeout": 1.0}
"""Redis socket timeouts of the shared store (seconds): a lost broker must not hang requests."""


class TooManyRequests(DesignlabError):
    """The client went over a rate limit (429)."""

    status = 429
    title = "Too many requests"


@dataclass(frozen=True)
class Rule:
    """Limit ``method`` requests to the route named ``route`` to ``limit``, counted per learner
    (``per="learner"``: the session's account, else the client address) or per client address."""

    name: str
    route: str
    method: str
    limit: RateLimitItem
    per: str = "learner"


SIGN_IN_ROUTES = (("login", "POST"), ("signup", "POST"))
GRADE_ROUTES = (("grade_design", "POST"), ("report", "GET"))
SIMULATE_ROUTES = (("simulate_design", "POST"), ("run_step", "POST"))
"""Route names and methods each kind of limit applies to (the API's and the step pages')."""


def rules_from(settings: Settings) -> list[Rule]:
    """The rules for ``settings``' RATE_LIMIT_* values; raises ValueError for a bad notation."""
    kinds = (
        ("sign-in", SIGN_IN_ROUTES, settings.rate_limit_sign_in, "address"),
        ("grading", GRADE_ROUTES, settings.rate_limit_grade, "learner"),
        ("simulation", SIMULATE_ROUTES, settings.rate_limit_simulate, "learner"),
    )
    return [
        Rule(name, route, method, parse(limit), per)
        for name, routes, limit, per in kinds
        for route, method in routes
    ]


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def _key(scope: Scope, per: str) -> str:
    if per == "learner":
        session = scope.get("session") or {}
        if is_account_session(session):
            return f"user:{session_user_id(session)}"
    return f"address:{_client_address(scope)}"


class RateLimitMiddleware:
    """Pure ASGI middleware; must sit inside the session middleware to see the session's user."""

    def __init__(self, app: ASGIApp, *, rules: list[Rule], storage_uri: str = "memory://"):
        self.app = app
        self.rules = rules
        # "memory://" (this process) or REDIS_URL (every instance); short timeouts on Redis.
        options = {} if storage_uri.startswith("memory") else STORAGE_TIMEOUTS
        self.limiter = MovingWindowRateLimiter(storage_from_string(storage_uri, **options))
        self._targets: list[tuple[Rule, Any]] | None = None

    def _targets_of(self, routes: list[BaseRoute]) -> list[tuple[Rule, Any]]:
        """Each rule with the app's route it names (found once: routes are fixed after start)."""
        if self._targets is None:
            self._targets = [
                (rule, context)
                for context in iter_route_contexts(routes)
                for rule in self.rules
                if context.name == rule.route and rule.method in (context.methods or ())
            ]
        return self._targets

    def _rule_for(self, scope: Scope) -> Rule | None:
        for rule, route in self._targets_of(scope["app"].routes):
            if rule.method == scope["method"] and route.matches(scope)[0] is Match.FULL:
                return rule
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        rule = self._rule_for(scope) if scope["type"] == "http" else None
        if rule is None:
            await self.app(scope, receive, send)
            return
        key = _key(scope, rule.per)
        if self.limiter.hit(rule.limit, rule.name, key):
            await self.app(scope, receive, send)
            return
        reset_at = self.limiter.get_window_stats(rule.limit, rule.name, key).reset_time
        retry_after = max(1, math.ceil(reset_at - time.time()))
        request = Request(scope, receive)
        error = TooManyRequests(
            f"Too many {rule.name} requests: at most {rule.limit}. Try again in {retry_after} s."
        )
        response = error_response(request, error)
        response.headers["Retry-After"] = str(retry_after)
        await response(scope, receive, send)
