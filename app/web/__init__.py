"""The web app's routes, dependencies, forms and error pages (server-rendered, HTMX-enhanced)."""
