"""Security headers on every response: a Content-Security-Policy allowing only this origin (no
inline script or style, no framing), nosniff, a referrer policy, and HSTS in production.

The OpenAPI page (``/api/docs``, app.web.api_docs) is FastAPI's Swagger UI with its files served
from this site; it starts with one inline script, so that page alone gets a policy that also
allows exactly that script (by its SHA-256 hash, computed from the page served).
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)

HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}
HSTS = "max-age=31536000; includeSubDomains"

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def inline_script_hashes(html: str) -> list[str]:
    """CSP source expressions (``'sha256-...'``) of every inline ``<script>`` in ``html``."""
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    ]


def docs_policy(docs_html: str) -> str:
    """The policy of the Swagger UI page: the site's own policy plus its own inline scripts."""
    scripts = " ".join(inline_script_hashes(docs_html))
    return CONTENT_SECURITY_POLICY.replace("script-src 'self'", f"script-src 'self' {scripts}")


class SecurityHeadersMiddleware:
    """Pure ASGI middleware adding the headers above to every HTTP response.

    ``docs_path`` and ``docs_csp``: the Swagger UI page's path and its own policy (None: none).
    ``hsts``: also send Strict-Transport-Security (production, served over HTTPS by the proxy).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        docs_path: str | None = None,
        docs_csp: str | None = None,
        hsts: bool = False,
    ):
        self.app = app
        self.docs_path = docs_path
        self.docs_csp = docs_csp
        self.hsts = hsts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = (
            self.docs_csp
            if self.docs_csp and scope["path"] == self.docs_path
            else CONTENT_SECURITY_POLICY
        )

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = policy
                for name, value in HEADERS.items():
                    headers[name] = value
                if self.hsts:
                    headers["Strict-Transport-Security"] = HSTS
            await send(message)

        await self.app(scope, receive, send_with_headers)
