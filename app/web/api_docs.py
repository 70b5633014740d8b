"""The API's documentation page, ``/api/docs``: FastAPI's Swagger UI with its script, stylesheet
and icon served from this site (``static/vendor/``, copied from the ``swagger-ui-dist`` npm
package by scripts/vendor_assets.py), so the page loads nothing from another origin and its
Content-Security-Policy allows only this site and the page's one inline script (by hash)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import HTMLResponse

DOCS_PATH = "/api/docs"
SWAGGER_JS_URL = "/static/vendor/swagger-ui-bundle.js"
SWAGGER_CSS_URL = "/static/vendor/swagger-ui.css"
SWAGGER_FAVICON_URL = "/static/vendor/swagger-ui-favicon-32x32.png"
"""Where the page finds Swagger UI's files (names as in package.json ``vendorAssets``)."""


def docs_page(app: FastAPI) -> HTMLResponse:
    """The Swagger UI page of ``app``'s OpenAPI document (``app.openapi_url``, which must be
    set), with every asset on this site."""
    assert app.openapi_url is not None, "the docs page needs the OpenAPI document"
    return get_swagger_ui_html(
        openapi_url=app.openapi_url,
        title=f"{app.title} - API",
        swagger_js_url=SWAGGER_JS_URL,
        swagger_css_url=SWAGGER_CSS_URL,
        swagger_favicon_url=SWAGGER_FAVICON_URL,
        # No validator badge: it would be an image from swagger.io.
        swagger_ui_parameters={"validatorUrl": None, **(app.swagger_ui_parameters or {})},
    )


def docs_html(app: FastAPI) -> str:
    """The page's HTML as served (to hash its inline script for the page's policy)."""
    return bytes(docs_page(app).body).decode()


def install(app: FastAPI) -> None:
    """Add ``GET /api/docs`` (left out of the OpenAPI document) to ``app``."""

    async def api_docs(request: Request) -> HTMLResponse:
        return docs_page(request.app)

    app.add_api_route(DOCS_PATH, api_docs, methods=["GET"], include_in_schema=False)
