# designlab: a slim image serving the app on port 8000 with SQLite on a volume.
# Build: docker build -t designlab .   Run: see README.md.

FROM node:20-slim AS assets
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    ENV=production \
    DATABASE_URL=sqlite:////app/var/designlab.sqlite3 \
    STEPS_DIR=/app/steps
WORKDIR /app
RUN useradd --create-home --uid 10001 designlab
COPY pyproject.toml README.md ./
COPY app ./app
COPY simulator ./simulator
# Editable, so the app finds templates/, static/ and steps/ beside it in /app.
RUN pip install -e .
COPY steps ./steps
COPY templates ./templates
COPY static ./static
COPY scripts ./scripts
COPY package.json ./
COPY --from=assets /src/node_modules ./node_modules
RUN python scripts/vendor_assets.py && rm -rf node_modules \
    && mkdir -p /app/var && chown designlab:designlab /app/var
USER designlab
VOLUME ["/app/var"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"
CMD ["designlab", "serve", "--host", "0.0.0.0", "--port", "8000"]
