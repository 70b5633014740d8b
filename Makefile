# designlab: `make run` serves the app at http://127.0.0.1:8000; `make test` runs every check.
# Both do all set-up first: virtual environment, Python packages, npm assets, database migration.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: run test setup venv python-deps assets migrate chromium check

run: setup
	$(BIN)/designlab serve --host $(HOST) --port $(PORT)

test: setup chromium check

setup: python-deps assets migrate

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

venv: $(BIN)/python

# Byte-compiled once here, so a `designlab` command does not compile our modules on every start
# when the environment sets PYTHONDONTWRITEBYTECODE (an edited module is compiled again in memory).
python-deps: venv
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -m compileall -q app simulator

assets:
	npm ci --ignore-scripts --no-audit --no-fund
	$(BIN)/python scripts/vendor_assets.py

migrate: python-deps
	$(BIN)/designlab migrate

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium; \
	fi

check:
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest
