"""designlab's JSON API under /api/v1 (``app.api.router.router``), documented in OpenAPI."""
